// The MMU_CONTROL block: AS registers and commands, faults, VA accessors (see mmu.h).
#include "mock_hw/mmu.h"

#include <cstring>
#include <string>

#include "hw/csf/regs/exceptions.h"
#include "hw/csf/regs/gpu_regs.h"
#include "hw/csf/regs/mmu_regs.h"
#include "hw/jm/regs/mmu_regs.h"
#include "kernel_shim/cputime.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/sanitizers.h"
#include "kernel_shim/trace.h"
#include "mock_hw/fault_plan.h"
#include "mock_hw/gpu_base.h"
#include "mock_hw/mali_lpae_walker.h"

namespace mock_hw {

using namespace panthor;

const char* Mmu::command_name(u32 cmd) {
    switch (cmd) {
    case AS_COMMAND_NOP: return "AS_NOP";
    case AS_COMMAND_UPDATE: return "AS_UPDATE";
    case AS_COMMAND_LOCK: return "AS_LOCK";
    case AS_COMMAND_UNLOCK: return "AS_UNLOCK";
    case AS_COMMAND_FLUSH_PT: return "AS_FLUSH_PT";
    case AS_COMMAND_FLUSH_MEM: return "AS_FLUSH_MEM";
    }
    return "AS_UNKNOWN";
}

Mmu::Mmu(GpuBase& gpu, kshim::IrqLine& line, MmuFlavour flavour)
    : gpu_(gpu),
      flavour_(flavour),
      lock_(gpu.lock()),
      irq_(bank_, MMU_INT_BASE, line, gpu.lock(), "MMU_INT", flavour == MmuFlavour::Csf) {
    const u32 present = gpu.config().id.as_present;
    const u32 pa_bits = GPU_MMU_FEATURES_PA_BITS(gpu.config().id.mmu_features);
    for (u32 n = 0; n < kMaxAs; n++) {
        if (!(present & (1u << n)))
            continue;
        auto a = std::make_unique<AddressSpace>();
        AddressSpace* ap = a.get();
        a->id = n;
        a->cfg.pa_bits = pa_bits;
        a->cmd_ev = gpu.make_event("mock_hw AS command", [this, ap] { command_done_locked(*ap); });
        if (kshim::trace::enabled())
            a->track = kshim::trace::track("MMU AS" + std::to_string(n));
        bank_.add64(AS_TRANSTAB(n), "AS_TRANSTAB", 0, ~0ull);
        bank_.add64(AS_MEMATTR(n), "AS_MEMATTR", 0, ~0ull);
        bank_.add64(AS_LOCKADDR(n), "AS_LOCKADDR", 0, ~0ull);
        bank_.add(AS_COMMAND(n), RegDecl{.name = "AS_COMMAND", .write_only = true, .on_write = [this, ap](u32 v) {
                                             command_locked(*ap, v);
                                         }});
        bank_.add(AS_FAULTSTATUS(n), RegDecl{.name = "AS_FAULTSTATUS"});
        bank_.add64(AS_FAULTADDRESS(n), "AS_FAULTADDRESS");
        bank_.add(AS_STATUS(n), RegDecl{.name = "AS_STATUS",
                                        .on_read = [this, n] { return active_locked(n) ? AS_STATUS_AS_ACTIVE : 0u; }});
        // A JM GPU resets to LEGACY mode, where TRANSTAB's ADRMODE (0 after reset) disables the AS.
        bank_.add64(AS_TRANSCFG(n), "AS_TRANSCFG",
                    flavour == MmuFlavour::Jm ? panfrost::AS_TRANSCFG_ADRMODE_LEGACY : AS_TRANSCFG_ADRMODE_UNMAPPED,
                    ~0ull);
        bank_.add64(AS_FAULTEXTRA(n), "AS_FAULTEXTRA");
        as_[n] = std::move(a);
    }
}

bool Mmu::update_in_flight(const AddressSpace& a) const {
    return flavour_ == MmuFlavour::Jm && a.cmd == AS_COMMAND_UPDATE && a.cmd_ev->pending_locked();
}

bool Mmu::legacy_tables(const AsConfig& cfg) const {
    return flavour_ == MmuFlavour::Jm &&
           (cfg.transcfg & AS_TRANSCFG_ADRMODE_MASK) == panfrost::AS_TRANSCFG_ADRMODE_LEGACY;
}

// Whether `cfg` translates at all (else the AS is disabled): AArch64 4K or identity; on a JM GPU
// also LEGACY, where TRANSTAB's own ADRMODE says Mali-LPAE tables, identity or disabled.
bool Mmu::translates(const AsConfig& cfg) const {
    const u64 mode = cfg.transcfg & AS_TRANSCFG_ADRMODE_MASK;
    if (legacy_tables(cfg)) {
        const u64 legacy_mode = cfg.transtab & panfrost::AS_TRANSTAB_LPAE_ADRMODE_MASK;
        return legacy_mode == panfrost::AS_TRANSTAB_LPAE_ADRMODE_TABLE ||
               legacy_mode == panfrost::AS_TRANSTAB_LPAE_ADRMODE_IDENTITY;
    }
    return mode == AS_TRANSCFG_ADRMODE_AARCH64_4K || mode == AS_TRANSCFG_ADRMODE_IDENTITY;
}

bool Mmu::active_locked(u32 as) const {
    lockdep_assert_held(&lock_);
    if (!present(as))
        return false;
    const AddressSpace& a = *as_[as];
    return a.cmd_ev->pending_locked() || a.stuck;
}

void Mmu::command_locked(AddressSpace& a, u32 cmd) {
    lockdep_assert_held(&lock_);
    if (active_locked(a.id)) {
        // The driver must wait for AS_ACTIVE to clear before writing a command.
        ignored_cmds_++;
        gpu_.log_once_locked(0x20000 | a.id, "AS%u: AS_COMMAND %#x written while AS_ACTIVE (ignored)", a.id, cmd);
        return;
    }
    a.cmd = cmd;
    if (kshim::trace::enabled())
        kshim::trace::begin_on(a.track, command_name(cmd), "mock_hw");
    if (gpu_.faults().occurrence_locked(FaultKind::AsActiveStuck, ~0u, static_cast<int>(a.id))) {
        a.stuck = true;
        return;
    }
    a.cmd_ev->arm_locked(gpu_.config().lat.as_command);
}

void Mmu::command_done_locked(AddressSpace& a) {
    lockdep_assert_held(&lock_);
    switch (a.cmd) {
    case AS_COMMAND_NOP: break;
    case AS_COMMAND_UPDATE:
        a.cfg.transtab = bank_.get64(AS_TRANSTAB(a.id));
        a.cfg.memattr = bank_.get64(AS_MEMATTR(a.id));
        a.cfg.transcfg = bank_.get64(AS_TRANSCFG(a.id));
        a.tlb.invalidate_all();
        break;
    case AS_COMMAND_LOCK: {
        const u64 v = bank_.get64(AS_LOCKADDR(a.id));
        u32 w = static_cast<u32>(v & AS_LOCKADDR_SIZE_MASK);
        // Regions below the architectural minimum (32 KiB) are widened to it.
        if (w < 14)
            w = 14;
        // Width 63 is all 2^64 bytes, which a u64 size cannot hold: saturate.
        a.lock_size = w >= 63 ? ~u64{0} : u64{1} << (w + 1);
        a.lock_start = (v & ~AS_LOCKADDR_SIZE_MASK) & ~(a.lock_size - 1);
        a.locked = true;
        a.tlb.invalidate_range(a.lock_start, a.lock_size);
        break;
    }
    case AS_COMMAND_UNLOCK:
    case AS_COMMAND_FLUSH_PT:
    case AS_COMMAND_FLUSH_MEM:
        // Old-style FLUSH_PT/FLUSH_MEM flush the locked region and unlock it; no data cache is
        // modelled, so all three drop the region's TLB entries.
        if (a.locked)
            a.tlb.invalidate_range(a.lock_start, a.lock_size);
        else
            a.tlb.invalidate_all();
        a.locked = false;
        break;
    default: gpu_.log_once_locked(0x21000 | a.cmd, "AS%u: unknown AS_COMMAND %#x", a.id, a.cmd); break;
    }
    if (kshim::trace::enabled())
        kshim::trace::end_on(a.track, command_name(a.cmd), "mock_hw");
    // A faulted AS resumes once its fault is cleared and software has done something about it:
    // on CSF the UPDATE that reprograms it; on JM any command that makes new tables visible
    // (panfrost grows a heap with LOCK + FLUSH_PT, and disables a faulty AS with UPDATE).
    const u32 fault_bits = flavour_ == MmuFlavour::Jm ? MMU_INT_PAGE_FAULT(a.id) | panfrost::MMU_INT_BUS_ERROR(a.id)
                                                      : MMU_INT_PAGE_FAULT(a.id);
    const bool resumes = flavour_ == MmuFlavour::Jm ? a.cmd == AS_COMMAND_UPDATE || a.cmd == AS_COMMAND_UNLOCK ||
                                                          a.cmd == AS_COMMAND_FLUSH_PT || a.cmd == AS_COMMAND_FLUSH_MEM
                                                    : a.cmd == AS_COMMAND_UPDATE;
    if (resumes && a.stalled && !(irq_.rawstat_locked() & fault_bits))
        a.stalled = false;
    // JM: an UPDATE that disables the AS (panfrost's answer to a fault it cannot handle) ends the
    // stall even if the access faulted again meanwhile (the retry after the FLUSH_MEM that
    // precedes the disable): the requester retries and sees the AS disabled.
    if (flavour_ == MmuFlavour::Jm && a.cmd == AS_COMMAND_UPDATE && a.stalled && !translates(a.cfg))
        a.stalled = false;
    // JM GPUs have no command-completion interrupt: panfrost polls AS_STATUS.
    if (flavour_ == MmuFlavour::Csf)
        irq_.raise_locked(MMU_INT_REQ_COMPLETE(a.id));
    if (command_listener_)
        command_listener_(a.id, a.cmd);
}

void Mmu::latch_fault_locked(AddressSpace& a, u8 exception, Access acc, u64 va, u32 source, bool stall,
                             bool bus_error) {
    lockdep_assert_held(&lock_);
    // A JM GPU reports an external abort on a table walk in the upper half of MMU_INT (bus error);
    // a CSF GPU has no such bit and reports it as a page fault with the TRANSTAB_BUS_FAULT code.
    const u32 bit =
        bus_error && flavour_ == MmuFlavour::Jm ? panfrost::MMU_INT_BUS_ERROR(a.id) : MMU_INT_PAGE_FAULT(a.id);
    const u32 fault_bits = flavour_ == MmuFlavour::Jm ? MMU_INT_PAGE_FAULT(a.id) | panfrost::MMU_INT_BUS_ERROR(a.id)
                                                      : MMU_INT_PAGE_FAULT(a.id);
    // The first fault is kept until software clears the interrupt.
    if (!(irq_.rawstat_locked() & fault_bits)) {
        bank_.set(AS_FAULTSTATUS(a.id), exception | (static_cast<u32>(acc) << AS_FAULTSTATUS_ACCESS_TYPE_SHIFT) |
                                            (source << AS_FAULTSTATUS_SOURCE_ID_SHIFT));
        bank_.set64(AS_FAULTADDRESS(a.id), va);
        bank_.set64(AS_FAULTEXTRA(a.id), 0);
    }
    if (stall)
        a.stalled = true;
    if (kshim::trace::enabled())
        kshim::trace::instant("as_fault", "mock_hw",
                              "{\"as\":" + std::to_string(a.id) + ",\"exception\":" + std::to_string(exception) + "}");
    irq_.raise_locked(bit);
}

MemResult Mmu::translate_locked(u32 as, u64 va, Access acc, u32 source, u64* pa) {
    lockdep_assert_held(&lock_);
    MemResult r;
    if (const Tlb::Entry* e = translate_entry_locked(as, va, acc, source, r))
        *pa = e->t.pa_base + (va - e->t.va_base);
    return r;
}

// The TLB entry (after a walk on a miss) that translates va for acc, or nullptr with r set to
// the fault. The entry is valid until the next TLB insert.
const Tlb::Entry* Mmu::translate_entry_locked(u32 as, u64 va, Access acc, u32 source, MemResult& r) {
    lockdep_assert_held(&lock_);
    r = MemResult{};
    r.va = va;
    if (!present(as)) {
        r.status = MemResult::Status::Unmapped;
        r.exception = DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0;
        return nullptr;
    }
    AddressSpace& a = *as_[as];
    if (a.stalled) {
        r.status = MemResult::Status::Stalled;
        return nullptr;
    }
    // JM: an UPDATE in flight holds the AS's transactions until the new configuration is in
    // place (panfrost starts a job right after the UPDATE that binds its AS, without waiting for
    // AS_ACTIVE); they retry when the command completes (command_listener_).
    if (update_in_flight(a)) {
        r.status = MemResult::Status::Stalled;
        return nullptr;
    }
    // LEGACY (JM only): Mali-LPAE tables when TRANSTAB's ADRMODE says so (translates()).
    const bool legacy = legacy_tables(a.cfg);
    const bool enabled = translates(a.cfg);
    if (!enabled) {
        // A disabled AS answers every access with a translation fault; the access is terminated
        // (the requester sees an error, e.g. CS_BUS_FAULT) instead of stalling.
        r.status = MemResult::Status::Unmapped;
        r.exception = DRM_PANTHOR_EXCEPTION_TRANSLATION_FAULT_0;
        latch_fault_locked(a, r.exception, acc, va, source, false);
        return nullptr;
    }
    const Tlb::Entry* e = a.tlb.find(va);
    if (!e) {
        WalkResult w = legacy ? mali_lpae_walk(a.cfg, va) : lpae_walk(a.cfg, va);
        if (!w.ok) {
            r.status = MemResult::Status::Fault;
            r.exception = w.exception;
            latch_fault_locked(a, w.exception, acc, va, source, true, w.bus_fault);
            return nullptr;
        }
        u8* host = kshim::phys_range_valid(w.t.pa_base, w.t.size) ? static_cast<u8*>(kshim::phys_to_virt(w.t.pa_base))
                                                                  : nullptr;
        e = a.tlb.insert(w.t, host);
    }
    if (u8 perm = check_permission(a.cfg, e->t, acc)) {
        r.status = MemResult::Status::Fault;
        r.exception = perm;
        latch_fault_locked(a, perm, acc, va, source, true);
        return nullptr;
    }
    return e;
}

namespace {
constexpr bool kTsan = KSHIM_TSAN;

template <class T>
inline bool aligned(const void* p) {
    return (reinterpret_cast<uintptr_t>(p) & (sizeof(T) - 1)) == 0;
}
// Acquire loads and release stores: a driver that publishes data with a release store (the
// kernel's wmb() before WRITE_ONCE of a ring's insert pointer) has it seen by the GPU that reads
// the pointer, and the other way round. Plain moves on x86.
template <class T>
inline void copy_word(u8* dst, const u8* src) {
    __atomic_store_n(reinterpret_cast<T*>(dst), __atomic_load_n(reinterpret_cast<const T*>(src), __ATOMIC_ACQUIRE),
                     __ATOMIC_RELEASE);
}

// The GPU moves memory in naturally aligned words, each single-copy atomic as on the bus, while
// the driver reads and writes the shared interface blocks with READ_ONCE/WRITE_ONCE (atomics):
// aligned words are copied with atomic accesses, which also keeps real-mode runs TSan-clean. Most accesses are one 32- or 64-bit field. Longer
// copies go to the C library's memcpy (under TSan: word by word): knowing n <= 4 KiB, GCC would
// otherwise inline a `rep movsq`, whose start-up cost dominates copies of this size on some CPUs
// (AMD EPYC here).
inline void copy_bytes(u8* dst, const u8* src, size_t n) {
    if (n == 4 && aligned<u32>(dst) && aligned<u32>(src))
        return copy_word<u32>(dst, src);
    if (n == 8 && aligned<u64>(dst) && aligned<u64>(src))
        return copy_word<u64>(dst, src);
    if constexpr (kTsan) {
        size_t i = 0;
        if (aligned<u32>(dst + i) && aligned<u32>(src + i))
            for (; i + 4 <= n; i += 4)
                copy_word<u32>(dst + i, src + i);
        for (; i < n; i++)
            copy_word<u8>(dst + i, src + i);
        return;
    }
    asm("" : "+r"(n));  // hides the bound
    std::memcpy(dst, src, n);
}
}  // namespace

MemResult Mmu::access_locked(u32 as, u64 va, u8* buf, size_t len, Access acc, u32 source, bool write) {
    lockdep_assert_held(&lock_);
    MemResult r;
    r.va = va;
    while (len) {
        // Translations are at least 4 KiB: never cross a page boundary with one lookup.
        const size_t chunk = std::min<size_t>(len, 0x1000 - (va & 0xFFF));
        const Tlb::Entry* e = translate_entry_locked(as, va, acc, source, r);
        if (!e)
            return r;
        const u64 off = va - e->t.va_base;
        u8* host = e->host ? e->host + off : nullptr;
        if (!host) {
            const u64 pa = e->t.pa_base + off;
            if (!kshim::phys_range_valid(pa, chunk)) {
                r.status = MemResult::Status::BusFault;
                r.exception = DRM_PANTHOR_EXCEPTION_GPU_BUS_FAULT;
                const u32 status = DRM_PANTHOR_EXCEPTION_GPU_BUS_FAULT |
                                   (static_cast<u32>(acc) << GPU_FAULT_STATUS_ACCESS_TYPE_SHIFT) |
                                   GPU_FAULT_STATUS_ADDRESS_VALID | GPU_FAULT_STATUS_JASID_VALID |
                                   GPU_FAULT_STATUS_JASID(as) | (source << 16);
                gpu_.raise_gpu_fault_locked(status, pa);
                return r;
            }
            host = static_cast<u8*>(kshim::phys_to_virt(pa));
        }
        if (write)
            copy_bytes(host, buf, chunk);
        else
            copy_bytes(buf, host, chunk);
        va += chunk;
        buf += chunk;
        len -= chunk;
    }
    return r;
}

bool Mmu::peek_locked(u32 as, u64 va, void* dst, size_t len) const {
    lockdep_assert_held(&lock_);
    if (!present(as) || len == 0 || (va & 0xFFF) + len > 0x1000)
        return false;
    const AddressSpace& a = *as_[as];
    if (a.stalled || update_in_flight(a))
        return false;
    if (legacy_tables(a.cfg) || !translates(a.cfg))
        return false;
    const Tlb::Entry* e = a.tlb.peek(va);
    if (!e || !e->host || check_permission(a.cfg, e->t, Access::Read))
        return false;
    copy_bytes(static_cast<u8*>(dst), e->host + (va - e->t.va_base), len);
    return true;
}

MemResult Mmu::read_locked(u32 as, u64 va, void* dst, size_t len, Access acc, u32 source) {
    lockdep_assert_held(&lock_);
    return access_locked(as, va, static_cast<u8*>(dst), len, acc, source, false);
}

MemResult Mmu::write_locked(u32 as, u64 va, const void* src, size_t len, u32 source) {
    lockdep_assert_held(&lock_);
    return access_locked(as, va, static_cast<u8*>(const_cast<void*>(src)), len, Access::Write, source, true);
}

MemResult Mmu::read(u32 as, u64 va, void* dst, size_t len, Access acc, u32 source) {
    kshim::CpuAccountScope hw(kshim::CpuAccount::Hardware);
    kshim::SpinGuard g(gpu_.lock());
    return read_locked(as, va, dst, len, acc, source);
}

MemResult Mmu::write(u32 as, u64 va, const void* src, size_t len, u32 source) {
    kshim::CpuAccountScope hw(kshim::CpuAccount::Hardware);
    kshim::SpinGuard g(gpu_.lock());
    return write_locked(as, va, src, len, source);
}

void Mmu::reset_locked() {
    lockdep_assert_held(&lock_);
    for (auto& a : as_) {
        if (!a)
            continue;
        a->cmd_ev->cancel_locked();
        a->stuck = false;
        a->stalled = false;
        a->locked = false;
        a->cfg = AsConfig{.pa_bits = a->cfg.pa_bits};
        a->tlb.invalidate_all();
    }
    bank_.reset();
}

}  // namespace mock_hw
