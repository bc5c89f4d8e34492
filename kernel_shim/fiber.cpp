// Fibers on Boost.Context's fcontext primitives, with the sanitizer fiber annotations.
//
// Every jump passes the Fiber* being left as the transfer data; the resumed side stores the
// returned context into it. That is the whole protocol: no fiber needs to know who resumes it.
#include "kernel_shim/fiber.h"

#include <sys/mman.h>

#include <boost/context/detail/fcontext.hpp>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "kernel_shim/sanitizers.h"
#if KSHIM_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if KSHIM_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace bctx = boost::context::detail;

namespace kshim {
namespace {
#if KSHIM_ASAN || KSHIM_TSAN
constexpr size_t kStackSize = 1024 * 1024;  // sanitizers' redzones make frames larger
#else
constexpr size_t kStackSize = 256 * 1024;
#endif
constexpr size_t kGuard = 4096;

// Stacks of finished fibers, reused: mmap/munmap per task would dominate short-lived tasks.
// In ASan builds a pooled stack's shadow is clean (fiber_destroy), so that a task created on it
// does not clear the whole stack's shadow again: 128 KiB of shadow for each worker a workqueue
// spawned was a fiftieth of a sanitized fault campaign's CPU (issue #35).
std::mutex g_stack_pool_lock;  // protects g_stack_pool
std::vector<char*> g_stack_pool;

#if KSHIM_ASAN
// Clears the poison a finished fiber's stack may still carry. One that left through fiber_exit
// has none: the compiler calls __asan_handle_no_return before that [[noreturn]] call, which
// clears the fiber's stack above the call, and every frame below it had returned. One that
// never started has none either. One dropped while suspended (a stuck task at shutdown, the
// scheduler's own fiber) may have its live frames' redzones anywhere.
void unpoison_dropped_stack(const Fiber& f) {
    if (f.started && !f.exited)
        __asan_unpoison_memory_region(f.mapping + kGuard, kStackSize);
}
#endif

thread_local Fiber* t_starting = nullptr;

void after_resume(bctx::transfer_t t, Fiber& self) {
    auto* prev = static_cast<Fiber*>(t.data);
    prev->ctx = t.fctx;
#if KSHIM_ASAN
    const void* bottom = nullptr;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(self.asan_fake_stack, &bottom, &size);
    if (!prev->stack_bottom) {  // the adopted thread stack learns its bounds here
        prev->stack_bottom = bottom;
        prev->stack_size = size;
    }
#else
    (void)self;
#endif
}

void before_jump(Fiber& from, Fiber& to, bool exiting) {
#if KSHIM_ASAN
    __sanitizer_start_switch_fiber(exiting ? nullptr : &from.asan_fake_stack, to.stack_bottom, to.stack_size);
#endif
#if KSHIM_TSAN
    __tsan_switch_to_fiber(to.tsan_fiber, 0);
#endif
    (void)from;
    (void)exiting;
}

void trampoline(bctx::transfer_t t) {
    Fiber* self = t_starting;
    t_starting = nullptr;
    after_resume(t, *self);
    self->entry(self->arg);
    std::fprintf(stderr, "kshim: fiber entry returned\n");
    std::abort();
}
}  // namespace

void fiber_adopt_thread(Fiber& f) {
    f = Fiber{};
    f.started = true;
#if KSHIM_TSAN
    f.tsan_fiber = __tsan_get_current_fiber();
#endif
}

void fiber_create(Fiber& f, void (*entry)(void*), void* arg) {
    f = Fiber{};
    char* mapping = nullptr;
    {
        std::lock_guard g(g_stack_pool_lock);
        if (!g_stack_pool.empty()) {
            mapping = g_stack_pool.back();
            g_stack_pool.pop_back();
        }
    }
    if (!mapping) {
        void* p = mmap(nullptr, kStackSize + kGuard, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            std::perror("kshim: fiber stack");
            std::abort();
        }
        mapping = static_cast<char*>(p);
        mprotect(mapping, kGuard, PROT_NONE);  // stack overflow faults instead of corrupting
#if KSHIM_ASAN
        // A fresh mapping may sit where poisoned memory was unmapped.
        __asan_unpoison_memory_region(mapping + kGuard, kStackSize);
#endif
    }
    f.mapping = mapping;
    f.mapping_size = kStackSize + kGuard;
    f.stack_bottom = mapping + kGuard;
    f.stack_size = kStackSize;
    f.entry = entry;
    f.arg = arg;
    f.ctx = bctx::make_fcontext(mapping + kGuard + kStackSize, kStackSize, trampoline);
#if KSHIM_TSAN
    f.tsan_fiber = __tsan_create_fiber(0);
    f.owns_tsan_fiber = true;
#endif
}

void fiber_switch(Fiber& from, Fiber& to) {
    before_jump(from, to, false);
    if (!to.started) {
        to.started = true;
        t_starting = &to;
    }
    bctx::transfer_t t = bctx::jump_fcontext(to.ctx, &from);
    after_resume(t, from);
}

void fiber_exit(Fiber& from, Fiber& to) {
    from.exited = true;
    before_jump(from, to, true);
    if (!to.started) {
        to.started = true;
        t_starting = &to;
    }
    bctx::jump_fcontext(to.ctx, &from);
    std::abort();  // a finished fiber is never resumed
}

void fiber_destroy(Fiber& f) {
#if KSHIM_TSAN
    if (f.owns_tsan_fiber && f.tsan_fiber)
        __tsan_destroy_fiber(f.tsan_fiber);
#endif
    if (f.mapping) {
#if KSHIM_ASAN
        unpoison_dropped_stack(f);
#endif
        std::lock_guard g(g_stack_pool_lock);
        if (g_stack_pool.size() < 256)
            g_stack_pool.push_back(f.mapping);
        else
            munmap(f.mapping, f.mapping_size);
    }
    f = Fiber{};
}

}  // namespace kshim
