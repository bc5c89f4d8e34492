// Mirrors the checked user copies of include/linux/uaccess.h (see uaccess.h for the model).
#include "kernel_shim/uaccess.h"

#include <pthread.h>
#include <signal.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <cstring>
#include <map>

#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"

namespace kshim {
namespace {

struct Registry {
    // Protects ranges; held only around the lookup and the memcpy (never sleeps).
    kshim::SpinLock lock{"drm_uaccess.lock"};
    // start -> (end, registration count): the ranges as registered, possibly overlapping.
    std::multimap<u64, u64> ranges;
    std::atomic<UaccessMode> mode{UaccessMode::Registry};
};

Registry& registry() {
    static Registry* r = new Registry();  // never destroyed: user copies may run at exit
    return *r;
}

// Caller holds the lock. Ranges may overlap, so a span is covered when it can be walked through
// a chain of registered ranges.
bool covered_locked(Registry& r, u64 a, u64 end) {
    while (a < end) {
        u64 best = a;
        for (auto it = r.ranges.begin(); it != r.ranges.end() && it->first <= a; ++it)
            if (it->second > best)
                best = it->second;
        if (best == a)
            return false;
        a = best;
    }
    return true;
}

// ---- UaccessMode::ProcessVm ----
thread_local int t_target_pid = 0;                  // 0: the own process
thread_local UaccessGate* t_target_gate = nullptr;  // the target's gate, if any

bool process_vm_copy_ungated(void* local, u64 remote, size_t n, bool write) {
    iovec l{local, n};
    iovec r{reinterpret_cast<void*>(remote), n};
    const pid_t pid = t_target_pid ? t_target_pid : getpid();
    const ssize_t done = write ? process_vm_writev(pid, &l, 1, &r, 1, 0) : process_vm_readv(pid, &l, 1, &r, 1, 0);
    return done == static_cast<ssize_t>(n);
}

bool process_vm_copy(void* local, u64 remote, size_t n, bool write) {
    if (UaccessGate* gate = t_target_gate)
        return gate->pass([&] { return process_vm_copy_ungated(local, remote, n, write); });
    return process_vm_copy_ungated(local, remote, n, write);
}

// ---- UaccessMode::FaultFixup ----
// The recovery point of the copy running on this OS thread. A copy never blocks and never runs
// kernel code inside, so this is per OS thread (not per task) by nature: the fault is delivered
// to the thread that touched the page.
struct Fixup {
    sigjmp_buf jb;
};
thread_local Fixup* volatile t_fixup = nullptr;
struct sigaction g_prev_segv, g_prev_bus;
std::atomic<bool> g_fixup_installed{false};

void fixup_handler(int sig, siginfo_t* info, void* uc) {
    if (Fixup* f = t_fixup) {
        t_fixup = nullptr;
        // Leaving by siglongjmp without restoring the mask (sigsetjmp(jb, 0) saves none, to keep
        // the fast path free of system calls): unblock the signal in case whoever delivered it
        // (a sanitizer's own handler) blocked it despite SA_NODEFER.
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, sig);
        pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
        siglongjmp(f->jb, 1);
    }
    // Not ours: what the program (or a sanitizer runtime) had installed.
    const struct sigaction& prev = sig == SIGSEGV ? g_prev_segv : g_prev_bus;
    if ((prev.sa_flags & SA_SIGINFO) && prev.sa_sigaction) {
        prev.sa_sigaction(sig, info, uc);
        return;
    }
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
        prev.sa_handler(sig);
        return;
    }
    // The default action: returning re-runs the faulting access, which now kills as it should.
    signal(sig, SIG_DFL);
}

void install_fixup_handler() {
    if (g_fixup_installed.exchange(true))
        return;
    struct sigaction sa {};
    sa.sa_sigaction = fixup_handler;
    // SA_NODEFER: the handler leaves by siglongjmp without restoring the mask, so the signal
    // must not have been blocked on entry. SA_ONSTACK: a sanitizer's alternate stack, if any.
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &g_prev_segv);
    sigaction(SIGBUS, &sa, &g_prev_bus);
}

// Word or byte loads and stores the sanitizers do not instrument (the source may be anything),
// through volatile pointers so the compiler cannot turn the loop into a library memcpy call.
__attribute__((no_sanitize("address", "thread", "undefined"), noinline)) void raw_copy(void* to, const void* from,
                                                                                       size_t n) {
    auto* d = static_cast<volatile unsigned char*>(to);
    auto* s = static_cast<const volatile unsigned char*>(from);
    if (((reinterpret_cast<uintptr_t>(d) | reinterpret_cast<uintptr_t>(s)) & 7) == 0) {
        for (; n >= 8; n -= 8, d += 8, s += 8)
            *reinterpret_cast<volatile u64*>(d) = *reinterpret_cast<const volatile u64*>(s);
    }
    for (; n; n--)
        *d++ = *s++;
}

bool fixup_copy(void* to, const void* from, size_t n) {
    Fixup f;
    if (sigsetjmp(f.jb, 0))
        return false;
    t_fixup = &f;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    raw_copy(to, from, n);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t_fixup = nullptr;
    return true;
}

// access_ok: non-null, no wrap, below the top of the x86-64/arm64 user half.
bool access_ok(u64 uaddr, size_t n) {
    constexpr u64 kUserTop = u64{1} << 47;
    return uaddr != 0 && uaddr + n >= uaddr && uaddr + n <= kUserTop;
}

}  // namespace

void uaccess_set_mode(UaccessMode mode) {
    if (mode == UaccessMode::FaultFixup)
        install_fixup_handler();
    registry().mode.store(mode, std::memory_order_release);
}

UaccessMode uaccess_mode() {
    return registry().mode.load(std::memory_order_acquire);
}

void UaccessGate::close() {
    std::lock_guard g(lock_);
    closed_ = true;
}

bool UaccessGate::closed() const {
    std::lock_guard g(lock_);
    return closed_;
}

void uaccess_set_target(int pid, UaccessGate* gate) {
    t_target_pid = pid;
    t_target_gate = gate;
}

int uaccess_target_pid() {
    return t_target_pid;
}

void uaccess_register(const void* addr, size_t len) {
    Registry& r = registry();
    u64 a = reinterpret_cast<u64>(addr);
    kshim::SpinGuard g(r.lock);
    r.ranges.emplace(a, a + len);
}

void uaccess_unregister(const void* addr, size_t len) {
    Registry& r = registry();
    u64 a = reinterpret_cast<u64>(addr);
    kshim::SpinGuard g(r.lock);
    auto [lo, hi] = r.ranges.equal_range(a);
    for (auto it = lo; it != hi; ++it) {
        if (it->second == a + len) {
            r.ranges.erase(it);
            return;
        }
    }
    WARN_ON(true);  // unregistering a range that was never registered
}

void uaccess_set_trust_all(bool trust) {
    uaccess_set_mode(trust ? UaccessMode::TrustAll : UaccessMode::Registry);
}

static bool ok_locked(Registry& r, u64 uaddr, size_t n) {
    if (n == 0)
        return true;
    if (uaddr == 0 || uaddr + n < uaddr)
        return false;  // NULL page, or wraps (access_ok)
    if (r.mode.load(std::memory_order_relaxed) == UaccessMode::TrustAll)
        return true;
    return covered_locked(r, uaddr, uaddr + n);
}

static bool process_mode(UaccessMode m) {
    return m == UaccessMode::ProcessVm || m == UaccessMode::FaultFixup;
}

bool uaccess_ok(u64 uaddr, size_t n) {
    if (n == 0)
        return true;
    Registry& r = registry();
    if (process_mode(r.mode.load(std::memory_order_acquire)))
        return access_ok(uaddr, n);
    kshim::SpinGuard g(r.lock);
    return ok_locked(r, uaddr, n);
}

size_t copy_from_user(void* to, u64 from, size_t n) {
    if (n == 0)
        return 0;
    Registry& r = registry();
    switch (r.mode.load(std::memory_order_acquire)) {
    case UaccessMode::ProcessVm: return access_ok(from, n) && process_vm_copy(to, from, n, false) ? 0 : n;
    case UaccessMode::FaultFixup:
        return access_ok(from, n) && fixup_copy(to, reinterpret_cast<const void*>(from), n) ? 0 : n;
    default: break;
    }
    kshim::SpinGuard g(r.lock);
    if (!ok_locked(r, from, n))
        return n;
    std::memcpy(to, reinterpret_cast<const void*>(from), n);
    return 0;
}

size_t copy_to_user(u64 to, const void* from, size_t n) {
    if (n == 0)
        return 0;
    Registry& r = registry();
    switch (r.mode.load(std::memory_order_acquire)) {
    case UaccessMode::ProcessVm:
        return access_ok(to, n) && process_vm_copy(const_cast<void*>(from), to, n, true) ? 0 : n;
    case UaccessMode::FaultFixup: return access_ok(to, n) && fixup_copy(reinterpret_cast<void*>(to), from, n) ? 0 : n;
    default: break;
    }
    kshim::SpinGuard g(r.lock);
    if (!ok_locked(r, to, n))
        return n;
    std::memcpy(reinterpret_cast<void*>(to), from, n);
    return 0;
}

// The helpers of include/linux/uaccess.h and mm/util.c built on copy_from_user/copy_to_user.

// clear_user: the number of bytes not cleared (all of them on a fault).
size_t clear_user(u64 to, size_t n) {
    if (!uaccess_ok(to, n))
        return n;
    static const u8 zeros[256] = {};
    for (size_t done = 0; done < n;) {
        const size_t chunk = std::min(n - done, sizeof(zeros));
        if (copy_to_user(to + done, zeros, chunk))
            return n - done;
        done += chunk;
    }
    return 0;
}

// check_zeroed_user: 1 if [from, from + n) is all zero, 0 if not, -EFAULT.
int check_zeroed_user(u64 from, size_t n) {
    if (!uaccess_ok(from, n))
        return -EFAULT;
    u8 buf[256];
    for (size_t done = 0; done < n;) {
        const size_t chunk = std::min(n - done, sizeof(buf));
        if (copy_from_user(buf, from + done, chunk))
            return -EFAULT;
        for (size_t i = 0; i < chunk; i++)
            if (buf[i])
                return 0;
        done += chunk;
    }
    return 1;
}

// copy_struct_from_user: a user struct of `usize` bytes into a kernel one of `ksize`.
int copy_struct_from_user(void* dst, size_t ksize, u64 src, size_t usize) {
    const size_t size = std::min(ksize, usize);
    if (usize < ksize) {
        std::memset(static_cast<u8*>(dst) + size, 0, ksize - size);
    } else if (usize > ksize) {
        const int ret = check_zeroed_user(src + size, usize - size);
        if (ret <= 0)
            return ret ? ret : -E2BIG;
    }
    if (copy_from_user(dst, src, size))
        return -EFAULT;
    return 0;
}

// strndup_user: a kmalloc'ed copy of a NUL-terminated user string of at most `n` bytes
// (terminator included); ERR_PTR(-EFAULT), ERR_PTR(-EINVAL) when longer, ERR_PTR(-ENOMEM).
char* strndup_user(u64 s, size_t n) {
    // strnlen_user reads byte by byte up to the terminator, so a string that ends right before
    // an unmapped page is fine.
    size_t len = 0;
    for (;;) {
        if (len == n)
            return ERR_PTR<char>(-EINVAL);
        char c;
        if (copy_from_user(&c, s + len, 1))
            return ERR_PTR<char>(-EFAULT);
        if (!c)
            break;
        len++;
    }
    auto* p = static_cast<char*>(kmalloc(len + 1, GFP_KERNEL));
    if (!p)
        return ERR_PTR<char>(-ENOMEM);
    if (copy_from_user(p, s, len)) {
        kfree(p);
        return ERR_PTR<char>(-EFAULT);
    }
    p[len] = '\0';
    return p;
}

}  // namespace kshim
