// Mirrors asm/arch_timer.h: the frequency and count of the CPU's system counter (CNTFRQ_EL0,
// CNTVCT_EL0). Drivers report it to userspace as the GPU timestamp frequency because on Arm SoCs
// the GPU's timestamp counter is fed by the same system counter.
#pragma once
#include "kernel_shim/types.h"

namespace kshim {

// CNTFRQ_EL0 as the boot firmware programmed it (24 MHz, the RK3588's, until a platform says).
u32 arch_timer_get_cntfrq();
// CNTVCT_EL0: the system counter at the runtime's clock (ktime_get() in counter ticks).
u64 __arch_counter_get_cntvct();

// The platform's boot firmware: a machine whose GPU timestamp counts at another rate sets it, so
// that what the driver reports stays coherent with what the GPU counts.
void arch_timer_set_cntfrq(u32 hz);

}  // namespace kshim
