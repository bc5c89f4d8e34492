// Mirrors drivers/gpu/drm/panfrost/panfrost_gpu.h: GPU_CONTROL of a Job Manager GPU: reset,
// feature probe and model table, quirks, power domains, the GPU IRQ, cycle counter, timestamp.
#pragma once
#include "panfrost/panfrost_device.h"

namespace panfrost {

// Soft reset, features (-ENODEV for a GPU_ID no model matches), the "gpu" IRQ, power-on.
int panfrost_gpu_init(panfrost_device* pfdev);
// Powers the GPU off (the IRQ goes with the device's devres).
void panfrost_gpu_fini(panfrost_device* pfdev);

// SOFT_RESET, with a HARD_RESET when it does not complete; then unmasks the GPU IRQs panfrost
// handles. -ETIMEDOUT when neither completes.
int panfrost_gpu_soft_reset(panfrost_device* pfdev);
// Quirk registers, then L2, shader cores and tiler up (failures are logged only, as upstream).
void panfrost_gpu_power_on(panfrost_device* pfdev);
void panfrost_gpu_power_off(panfrost_device* pfdev);
// Masks the GPU IRQ and waits for a running handler (runtime suspend).
void panfrost_gpu_suspend_irq(panfrost_device* pfdev);
// The Amlogic vendor quirk (PWR_KEY unlock, PWR_OVERRIDE1).
void panfrost_gpu_amlogic_quirk(panfrost_device* pfdev);

// GPU_CMD CYCLE_COUNT_START on the first get, CYCLE_COUNT_STOP on the last put.
void panfrost_cycle_counter_get(panfrost_device* pfdev);
void panfrost_cycle_counter_put(panfrost_device* pfdev);
u64 panfrost_cycle_counter_read(panfrost_device* pfdev);
u64 panfrost_timestamp_read(panfrost_device* pfdev);

// GPU_LATEST_FLUSH_ID when the GPU is powered and has FLUSH_REDUCTION, else 0 ("always flush").
u32 panfrost_gpu_get_latest_flush_id(panfrost_device* pfdev);

}  // namespace panfrost
