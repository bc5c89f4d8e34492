// Mirrors drivers/gpu/drm/panthor/panthor_gpu.h: GPU_CONTROL: identity, L2 power, soft reset,
// cache flushes and GPU faults.
#pragma once
#include "panthor/panthor_device.h"

namespace panthor {

int panthor_gpu_init(panthor_device* ptdev);
void panthor_gpu_unplug(panthor_device* ptdev);
void panthor_gpu_suspend(panthor_device* ptdev);
void panthor_gpu_resume(panthor_device* ptdev);

// Powers `blk_name` ("L2", "Shader", "Tiler") on/off: waits for PWRTRANS to clear, writes
// <reg>_PWRON/PWROFF, waits for READY (on) / PWRTRANS clear (off). -ETIMEDOUT with an error line.
int panthor_gpu_block_power_on(panthor_device* ptdev, const char* blk_name, u32 pwron_reg, u32 pwrtrans_reg,
                               u32 rdy_reg, u64 mask, u32 timeout_us);
int panthor_gpu_block_power_off(panthor_device* ptdev, const char* blk_name, u32 pwroff_reg, u32 pwrtrans_reg, u64 mask,
                                u32 timeout_us);
#define panthor_gpu_power_on(ptdev, type, mask, timeout_us) \
    ::panthor::panthor_gpu_block_power_on(ptdev, #type, type##_PWRON, type##_PWRTRANS, type##_READY, mask, timeout_us)
#define panthor_gpu_power_off(ptdev, type, mask, timeout_us) \
    ::panthor::panthor_gpu_block_power_off(ptdev, #type, type##_PWROFF, type##_PWRTRANS, mask, timeout_us)

int panthor_gpu_l2_power_on(panthor_device* ptdev);
int panthor_gpu_flush_caches(panthor_device* ptdev, u32 l2, u32 lsc, u32 other);
int panthor_gpu_soft_reset(panthor_device* ptdev);

// GPU_TIMESTAMP / GPU_TIMESTAMP_OFFSET.
u64 panthor_gpu_read_timestamp(panthor_device* ptdev);
u64 panthor_gpu_read_timestamp_offset(panthor_device* ptdev);
// GPU_CYCLE_COUNT.
u64 panthor_gpu_read_cycle_count(panthor_device* ptdev);

}  // namespace panthor
