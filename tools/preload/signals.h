// Signals and the driver's interruptible waits (docs/preload.md "Signals").
//
// The kernel runs a signal handler on the way back to user space: a signal that arrives while a
// thread sleeps interruptibly in an ioctl ends the sleep with -ERESTARTSYS, the handler runs once
// the ioctl has unwound, and the ioctl then either restarts (the handler has SA_RESTART) or fails
// with EINTR. Here the driver runs inside the caller's thread, so the library puts a trampoline in
// front of every asynchronous handler the program installs: outside the driver it calls the
// handler at once; inside, it marks the signal pending on the thread's task, wakes its
// interruptible sleep and leaves the handler for driver_call() to run after the ioctl unwound.
#pragma once
#include <cerrno>

namespace upanthor::preload {

// The thread is inside driver code (async handlers are deferred) while one of these lives.
class DriverCallScope {
public:
    DriverCallScope();
    ~DriverCallScope();
    DriverCallScope(const DriverCallScope&) = delete;
    DriverCallScope& operator=(const DriverCallScope&) = delete;
};

// Runs the handlers deferred during the driver call that just ended (outside any scope) and says
// whether an ioctl that returned -ERESTARTSYS restarts: every one of them had SA_RESTART.
bool deliver_deferred_signals();

// Runs `body` (library or driver code that takes locks a handler's own calls may need) with
// asynchronous handlers deferred, then runs what was deferred; errno is what `body` left.
template <class Body>
auto deferring_signals(Body&& body) {
    auto ret = [&] {
        DriverCallScope scope;
        return body();
    }();
    const int err = errno;
    deliver_deferred_signals();
    errno = err;
    return ret;
}

// Runs `body` (an ioctl into the driver; returns 0/positive or -errno) with the syscall layer's
// restart rule around it.
template <class Body>
int driver_call(Body&& body) {
    constexpr int kErestartsys = 512;
    for (;;) {
        int ret;
        {
            DriverCallScope scope;
            ret = body();
        }
        const bool restart = deliver_deferred_signals();
        if (ret != -kErestartsys)
            return ret;
        if (!restart)
            return -EINTR;
    }
}

}  // namespace upanthor::preload
