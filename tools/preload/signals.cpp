// The handler trampoline and the deferred delivery of signals.h; the exported sigaction and
// signal interposers are at the end.
#include "tools/preload/signals.h"

#include <dlfcn.h>
#include <signal.h>
#include <ucontext.h>

#include <atomic>
#include <cstring>

#include "kernel_shim/runtime.h"
#include "kernel_shim/sanitizers.h"
#include "kernel_shim/signal.h"
#include "tools/preload/remote_client.h"

namespace upanthor::preload {
namespace {

using SigactionFn = int (*)(int, const struct sigaction*, struct sigaction*);

SigactionFn next_sigaction() {
    static const SigactionFn f = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
    return f;
}

// The program's own action for each signal the trampoline stands in for. Written under the
// process's sigaction calls, read by the trampoline: the handler and flags are atomics so that a
// signal arriving during a change sees one or the other.
struct UserAction {
    std::atomic<void*> handler{nullptr};  // sa_handler or sa_sigaction
    std::atomic<int> flags{0};
    sigset_t mask{};
    struct sigaction user {};  // as the program gave it, for oldact
};
UserAction g_actions[NSIG];

// Synchronous fault signals are never deferred (a fault in driver code is the driver's, and
// drm/uaccess's fixup handler must run at once): their handlers are installed as given.
bool is_synchronous(int sig) {
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS;
}

struct Deferred {
    siginfo_t info;
    bool set;
};
// Per thread (static TLS in a preloaded library, so touching it in a handler allocates nothing).
thread_local volatile sig_atomic_t t_depth = 0;
thread_local volatile sig_atomic_t t_any_deferred = 0;
thread_local volatile sig_atomic_t t_no_restart = 0;
thread_local Deferred t_deferred[NSIG];

void call_user_handler(int sig, siginfo_t* info, void* uc) {
    UserAction& a = g_actions[sig];
    void* h = a.handler.load(std::memory_order_acquire);
    const int flags = a.flags.load(std::memory_order_acquire);
    if (h == reinterpret_cast<void*>(SIG_IGN) || h == reinterpret_cast<void*>(SIG_DFL) || !h)
        return;
    if (flags & SA_SIGINFO)
        reinterpret_cast<void (*)(int, siginfo_t*, void*)>(h)(sig, info, uc);
    else
        reinterpret_cast<void (*)(int)>(h)(sig);
}

void trampoline(int sig, siginfo_t* info, void* uc) {
    UserAction& a = g_actions[sig];
    const int flags = a.flags.load(std::memory_order_acquire);
    if (t_depth == 0) {
        call_user_handler(sig, info, uc);
        if (flags & SA_RESETHAND)
            a.handler.store(reinterpret_cast<void*>(SIG_DFL), std::memory_order_release);
        return;
    }
    const int saved_errno = errno;
    // Standard signals coalesce while pending, as the kernel's do.
    t_deferred[sig].info = *info;
    t_deferred[sig].set = true;
    t_any_deferred = 1;
    if (!(flags & SA_RESTART))
        t_no_restart = 1;
    if (kshim::Runtime::get()) {
        if (kshim::Task* t = kshim::current())
            kshim::signal_wake_up(t);
    } else {
        remote_interrupt();  // server mode: the request's kernel task is the server's
    }
    errno = saved_errno;
}

}  // namespace

DriverCallScope::DriverCallScope() {
    const int outer = t_depth;
    t_depth = outer + 1;
    if (outer == 0) {
        if (kshim::Task* t = kshim::current())
            kshim::clear_signal_pending(t);
    }
}
DriverCallScope::~DriverCallScope() {
    t_depth = t_depth - 1;
}

bool deliver_deferred_signals() {
    if (!t_any_deferred || t_depth != 0)
        return true;
    // Blocked while the list is read and reset, so a signal arriving now is handled directly.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    Deferred pending[NSIG];
    for (int s = 1; s < NSIG; s++) {
        pending[s] = t_deferred[s];
        t_deferred[s].set = false;
    }
    const bool restart = !t_no_restart;
    t_any_deferred = 0;
    t_no_restart = 0;
    if (kshim::Task* t = kshim::current())
        kshim::clear_signal_pending(t);
    for (int s = 1; s < NSIG; s++) {
        if (!pending[s].set)
            continue;
        // The kernel's delivery: the handler's sa_mask and (without SA_NODEFER) the signal itself
        // are blocked while it runs; SA_RESETHAND already took effect when the signal arrived.
        UserAction& a = g_actions[s];
        sigset_t during = old;
        for (int m = 1; m < NSIG; m++)
            if (sigismember(&a.mask, m) == 1)
                sigaddset(&during, m);
        if (!(a.flags.load() & SA_NODEFER))
            sigaddset(&during, s);
        pthread_sigmask(SIG_SETMASK, &during, nullptr);
        ucontext_t uc;
        getcontext(&uc);
        call_user_handler(s, &pending[s].info, &uc);
        if (a.flags.load() & SA_RESETHAND)
            a.handler.store(reinterpret_cast<void*>(SIG_DFL));
        pthread_sigmask(SIG_BLOCK, &all, nullptr);
    }
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return restart;
}

// sigaction(2) as the program sees it: its own actions, stored and reported back as given; what
// the kernel gets for an asynchronous handler is the trampoline with the same flags and mask.
int interposed_sigaction(int sig, const struct sigaction* act, struct sigaction* oldact) {
    SigactionFn next = next_sigaction();
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    if (sig <= 0 || sig >= NSIG || is_synchronous(sig))
        return next(sig, act, oldact);
    UserAction& a = g_actions[sig];
    // Serialises the program's own concurrent changes of one action (not the trampoline's reads).
    static std::atomic_flag busy[NSIG] = {};
    while (busy[sig].test_and_set(std::memory_order_acquire)) {
    }
    struct sigaction prev {};
    const struct sigaction user_prev = a.user;
    int ret = 0;
    if (act) {
        struct sigaction k = *act;
        void* h = (act->sa_flags & SA_SIGINFO) ? reinterpret_cast<void*>(act->sa_sigaction)
                                               : reinterpret_cast<void*>(act->sa_handler);
        if (h != reinterpret_cast<void*>(SIG_IGN) && h != reinterpret_cast<void*>(SIG_DFL)) {
            a.mask = act->sa_mask;
            a.flags.store(act->sa_flags, std::memory_order_release);
            a.handler.store(h, std::memory_order_release);
            k.sa_sigaction = trampoline;
            k.sa_flags = act->sa_flags | SA_SIGINFO;
        }
        ret = next(sig, &k, &prev);
        if (ret == 0)
            a.user = *act;
    } else {
        ret = next(sig, nullptr, &prev);
    }
    busy[sig].clear(std::memory_order_release);
    if (ret != 0)
        return ret;
    // The trampoline stands for what the program installed, reported as it installed it (after a
    // SA_RESETHAND handler fired, the kernel's record is SIG_DFL again and is reported as such).
    if (oldact)
        *oldact = prev.sa_sigaction == trampoline && (prev.sa_flags & SA_SIGINFO) ? user_prev : prev;
    return 0;
}

}  // namespace upanthor::preload

// Not in a TSan build: TSan's own start-up installs its handlers through the next sigaction,
// which would be this (instrumented) code running before TSan is ready; and TSan defers handlers
// to its next interceptor, which a thread parked in the driver's futex wait never reaches. There
// the program's handlers are installed as given, and driver waits are not interrupted.
#if !KSHIM_TSAN
#pragma GCC visibility push(default)
extern "C" {

int sigaction(int sig, const struct sigaction* act, struct sigaction* oldact) {
    return upanthor::preload::interposed_sigaction(sig, act, oldact);
}

// signal() as glibc gives it: BSD semantics (SA_RESTART, handler kept).
sighandler_t signal(int sig, sighandler_t handler) {
    struct sigaction act {
    }, old{};
    act.sa_handler = handler;
    sigemptyset(&act.sa_mask);
    sigaddset(&act.sa_mask, sig);
    act.sa_flags = SA_RESTART;
    if (upanthor::preload::interposed_sigaction(sig, &act, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}

}  // extern "C"
#pragma GCC visibility pop
#endif  // !KSHIM_TSAN
