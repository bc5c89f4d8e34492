// The MCU (the Cortex-M7 running the CSF firmware), up to the CSG/CS slots: MCU_CONTROL/
// MCU_STATUS, boot through AS 0 (writes the GLB/CSG/CS control blocks into the shared section),
// halt, disable, fatal, and the GLB interface's req/ack protocol on doorbell 0 (glb.cpp).
// CSG/CS slots are handed to a CsfEngine through csf_engine.h.
#pragma once
#include "kernel_shim/spinlock.h"
#include "mock_hw/csf_engine.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/mcu_layout.h"
#include "mock_hw/mmu.h"

namespace mock_hw {

class Gpu;

class Mcu {
public:
    explicit Mcu(Gpu& gpu);

    // MCU_CONTROL / MCU_STATUS.
    void control_write_locked(u32 value);
    u32 status_locked() const {
        lockdep_assert_held(&lock_);
        return status_;
    }
    // Doorbell 0.
    void glb_doorbell_locked();
    void user_doorbell_locked(u32 index);

    void set_engine(CsfEngine* engine) { engine_ = engine; }
    const McuLayout& layout() const { return layout_; }
    u32 shared_va(u32 offset) const { return McuLayout::kShared + offset; }

    // What the FW latched from the GLB input block (on the matching request).
    u32 progress_timer_locked() const {
        lockdep_assert_held(&lock_);
        return progress_timer_;
    }
    u32 poweroff_timer_locked() const {
        lockdep_assert_held(&lock_);
        return poweroff_timer_;
    }
    u64 core_en_mask_locked() const {
        lockdep_assert_held(&lock_);
        return core_en_mask_;
    }
    u32 idle_timer_locked() const {
        lockdep_assert_held(&lock_);
        return idle_timer_;
    }
    bool idle_enabled_locked() const {
        lockdep_assert_held(&lock_);
        return idle_en_;
    }
    bool counter_enabled_locked() const {
        lockdep_assert_held(&lock_);
        return counter_en_;
    }
    bool hung_locked() const {
        lockdep_assert_held(&lock_);
        return hung_;
    }
    u64 glb_scans() const { return glb_scans_; }
    u64 boots() const { return boots_; }

    // The engine reports whether any CSG has work. Busy cancels the idle timer and
    // powers the shader cores (within core_en_mask) and the tiler on; idle re-arms the idle
    // timer (IDLE event) and the power-off timer.
    void set_busy_locked(bool busy);
    bool busy_locked() const {
        lockdep_assert_held(&lock_);
        return busy_;
    }

    // Timer encoding of poweroff_timer/idle_timer -> nanoseconds.
    ktime_t decode_timer_locked(u32 value) const REQUIRES(lock_);

    // Injected faults.
    void fatal_locked(u32 halt_status);
    void hang_locked();

    void reset_locked();

    // Access to the MCU's view of memory (AS 0), for the engine.
    MemResult read_locked(u32 va, void* dst, size_t len);
    MemResult write_locked(u32 va, const void* src, size_t len);

private:
    void set_status_locked(u32 s) REQUIRES(lock_);
    void boot_locked();
    bool build_interface_locked() REQUIRES(lock_);
    void halt_done_locked();
    void disable_done_locked();
    void stop_locked() REQUIRES(lock_);
    // glb.cpp
    void glb_scan_locked();
    void glb_ack_locked(u32 bits, bool raise_irq_if_masked) REQUIRES(lock_);
    void glb_apply_locked(u32 bit, const panthor::panthor_fw_global_input_iface& in) REQUIRES(lock_);
    void delayed_ack_locked();
    void idle_timer_fired_locked();
    void poweroff_timer_fired_locked();
    void rearm_idle_locked() REQUIRES(lock_);

    Gpu& gpu_;
    kshim::SpinLock& lock_;  // gpu_.lock(): every _locked method asserts it
    McuLayout layout_;
    CsfEngine* engine_ = nullptr;

    u32 status_ GUARDED_BY(lock_) = 0;            // MCU_STATUS
    bool iface_built_ GUARDED_BY(lock_) = false;  // a restart after HALT keeps the interface (fast reset)
    bool halting_ GUARDED_BY(lock_) = false;
    bool hung_ GUARDED_BY(lock_) = false;
    bool busy_ GUARDED_BY(lock_) = false;
    bool cold_boot_pending_ GUARDED_BY(lock_) = true;

    // Latched GLB configuration.
    u32 progress_timer_ GUARDED_BY(lock_) = 0, poweroff_timer_ GUARDED_BY(lock_) = 0, idle_timer_ GUARDED_BY(lock_) = 0;
    u64 core_en_mask_ GUARDED_BY(lock_) = 0;
    bool idle_en_ GUARDED_BY(lock_) = false, counter_en_ GUARDED_BY(lock_) = false;
    bool idle_reported_ GUARDED_BY(lock_) = false;  // one IDLE event per idle period

    // Requests whose ack the FaultPlan dropped or delayed (not re-processed by later scans).
    u32 dropped_ GUARDED_BY(lock_) = 0;
    u32 delayed_ GUARDED_BY(lock_) = 0;

    std::unique_ptr<HwEvent> boot_ev_, halt_ev_, disable_ev_, glb_ev_, delayed_ack_ev_, idle_ev_, poweroff_ev_;
    u32 track_ GUARDED_BY(lock_) = 0;
    u64 glb_scans_ = 0, boots_ = 0;
};

}  // namespace mock_hw
