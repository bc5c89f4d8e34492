// The MMU_CONTROL block (0x2000-0x2FFF): the MMU interrupt and, per address space, TRANSTAB/
// MEMATTR/TRANSCFG latched by AS_COMMAND UPDATE, LOCK/UNLOCK/FLUSH_PT/FLUSH_MEM with AS_ACTIVE
// visible while a command runs, fault latching, and the accessors the MCU and the command-stream
// engine use to read and write memory by GPU VA.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "kernel_shim/spinlock.h"
#include "mock_hw/hw_event.h"
#include "mock_hw/irq_block.h"
#include "mock_hw/lpae_walker.h"
#include "mock_hw/register_bank.h"
#include "mock_hw/tlb.h"

namespace mock_hw {

class GpuBase;

// Where the MMU_CONTROL blocks of the two families differ (docs/hw/jm/mmu.md): the upper half of
// MMU_INT_RAWSTAT (CSF: an AS command completed; JM: a bus error on the AS), the page-table
// formats an AS can use (JM: Mali-LPAE through TRANSTAB in LEGACY mode as well) and when a stalled
// AS resumes (CSF: the UPDATE that follows the fault; JM: any AS command once the fault is cleared,
// which is how panfrost lets a job continue after growing a heap).
enum class MmuFlavour { Csf, Jm };

// The outcome of a memory access through an address space. Never throws.
struct MemResult {
    enum class Status {
        Ok,
        Fault,     // this access faulted: AS_FAULTSTATUS/ADDRESS latched, MMU_INT raised, AS stalled
        Stalled,   // the AS is stalled by an earlier fault: the access waits (retry after UPDATE)
        Unmapped,  // the AS is disabled (UNMAPPED) or absent: the access is terminated with an error
        BusFault,  // the physical address is outside memory: GPU_FAULT latched, GPU_INT FAULT raised
    };
    Status status = Status::Ok;
    u8 exception = 0;  // drm_panthor_exception_type for Fault/Unmapped/BusFault
    u64 va = 0;        // the faulting VA
    bool ok() const { return status == Status::Ok; }
};

// Requester ids latched in AS_FAULTSTATUS[31:16].
inline constexpr u32 kSourceMcu = 0x1;
inline constexpr u32 kSourceCs = 0x2;
inline constexpr u32 kSourceTest = 0xF;

class Mmu {
public:
    static constexpr u32 kMaxAs = 16;

    Mmu(GpuBase& gpu, kshim::IrqLine& line, MmuFlavour flavour);

    RegisterBank& bank() { return bank_; }
    IrqBlock& irq() { return irq_; }

    MemResult read_locked(u32 as, u64 va, void* dst, size_t len, Access acc = Access::Read, u32 source = kSourceCs);
    MemResult write_locked(u32 as, u64 va, const void* src, size_t len, u32 source = kSourceCs);
    // Taking the Gpu lock.
    MemResult read(u32 as, u64 va, void* dst, size_t len, Access acc = Access::Read, u32 source = kSourceCs);
    MemResult write(u32 as, u64 va, const void* src, size_t len, u32 source = kSourceCs);
    // A read that is not a bus access: it succeeds (true, dst filled) only where a read through
    // the AS would, from the TLB alone, with no effect on any state: an AS that is absent,
    // stalled, not translating or mid-UPDATE, a TLB miss, a page without read permission or
    // outside the physical arena all answer false (the caller then does the real access).
    bool peek_locked(u32 as, u64 va, void* dst, size_t len) const;
    // Translation only (TLB, walk, permission check); faults are latched as for an access.
    MemResult translate_locked(u32 as, u64 va, Access acc, u32 source, u64* pa);

    bool present(u32 as) const { return as < kMaxAs && as_[as] != nullptr; }
    bool stalled_locked(u32 as) const {
        lockdep_assert_held(&lock_);
        return present(as) && as_[as]->stalled;
    }
    bool active_locked(u32 as) const;
    const AsConfig& config_locked(u32 as) const {
        lockdep_assert_held(&lock_);
        return as_[as]->cfg;
    }
    const Tlb& tlb_locked(u32 as) const {
        lockdep_assert_held(&lock_);
        return as_[as]->tlb;
    }
    u64 ignored_commands() const { return ignored_cmds_; }

    // For the requesters (the CS engine, the job slots): called (lock held) after an AS command
    // on `as` completes, so stalled requesters retry (and see Unmapped if the AS was disabled).
    void set_command_listener(std::function<void(u32 as, u32 cmd)> fn) { command_listener_ = std::move(fn); }
    MmuFlavour flavour() const { return flavour_; }

    void reset_locked();

private:
    struct AddressSpace {
        u32 id = 0;
        AsConfig cfg;
        Tlb tlb;
        bool stalled = false;
        bool stuck = false;  // FaultPlan: AS_ACTIVE never clears
        u32 cmd = 0;
        std::unique_ptr<HwEvent> cmd_ev;
        u64 lock_start = 0, lock_size = 0;
        bool locked = false;
        u32 track = 0;
    };
    void command_locked(AddressSpace& a, u32 cmd);
    void command_done_locked(AddressSpace& a);
    void latch_fault_locked(AddressSpace& a, u8 exception, Access acc, u64 va, u32 source, bool stall,
                            bool bus_error = false) REQUIRES(lock_);
    const Tlb::Entry* translate_entry_locked(u32 as, u64 va, Access acc, u32 source, MemResult& r) REQUIRES(lock_);
    MemResult access_locked(u32 as, u64 va, u8* buf, size_t len, Access acc, u32 source, bool write) REQUIRES(lock_);
    static const char* command_name(u32 cmd);
    bool translates(const AsConfig& cfg) const;
    // JM: an UPDATE in flight holds the AS's transactions (translate_entry_locked).
    bool update_in_flight(const AddressSpace& a) const;
    // JM LEGACY mode: Mali-LPAE tables, as TRANSTAB's ADRMODE says (translates()).
    bool legacy_tables(const AsConfig& cfg) const;

    GpuBase& gpu_;
    const MmuFlavour flavour_;
    kshim::SpinLock& lock_;  // gpu_.lock(): every _locked method asserts it
    RegisterBank bank_{"MMU_CONTROL"};
    IrqBlock irq_;
    std::unique_ptr<AddressSpace> as_[kMaxAs];
    std::function<void(u32, u32)> command_listener_;
    u64 ignored_cmds_ = 0;
};

}  // namespace mock_hw
