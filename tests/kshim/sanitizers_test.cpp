// kernel_shim/sanitizers.h must see the sanitizer the build links: a build whose runtime is
// ASan's (or TSan's) but whose code believes otherwise switches fibers without telling it, and
// ASan then reports stack overflows that are not there (clang 14 builds did, before the header).
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernel_shim/fiber.h"
#include "kernel_shim/sanitizers.h"
#if KSHIM_ASAN
#include <sanitizer/asan_interface.h>
#endif

// Defined only by the sanitizer runtimes; null when the runtime is not linked.
extern "C" int __asan_address_is_poisoned(void const volatile* addr) __attribute__((weak));
extern "C" void __tsan_acquire(void* addr) __attribute__((weak));

TEST(Sanitizers, KshimSeesTheSanitizerTheBuildLinks) {
    EXPECT_EQ(KSHIM_ASAN == 1, &__asan_address_is_poisoned != nullptr);
    EXPECT_EQ(KSHIM_TSAN == 1, &__tsan_acquire != nullptr);
}

// A finished task's stack goes back to a pool and the next task runs on it. The poison its frames
// left there (the redzones of the frames live when it exited) must be gone by then, or ASan
// reports overflows in the next task that are not there; the pool clears it when the task ends
// (kernel_shim/fiber.cpp) rather than clearing the whole stack's shadow for each new task.
#if KSHIM_ASAN
namespace {
kshim::Fiber g_runner;
kshim::Fiber g_fiber;
char* g_live_local = nullptr;

// Poisons a local of a frame that stays live, standing for the redzones of the frames a task
// has live when it leaves or is dropped; then leaves for good, or suspends and is never resumed.
template <bool kExit>
void poison_and_leave(void*) {
    char live[256] = {};
    g_live_local = live;
    __asan_poison_memory_region(live, sizeof live);
    if (kExit)
        kshim::fiber_exit(g_fiber, g_runner);
    kshim::fiber_switch(g_fiber, g_runner);
    std::abort();  // never resumed
}
void never_runs(void*) {}

// Runs `entry` on a fresh fiber until it leaves, drops the fiber, creates the next one (which
// gets the same stack from the pool) and answers whether the local is still poisoned there.
bool poison_survives_on_the_next_fiber(void (*entry)(void*)) {
    g_live_local = nullptr;
    kshim::fiber_adopt_thread(g_runner);
    kshim::fiber_create(g_fiber, entry, nullptr);
    kshim::fiber_switch(g_runner, g_fiber);
    EXPECT_NE(g_live_local, nullptr);
    char* const stack = g_fiber.mapping;
    kshim::fiber_destroy(g_fiber);
    kshim::Fiber next;
    kshim::fiber_create(next, never_runs, nullptr);
    EXPECT_EQ(next.mapping, stack) << "the pool did not hand the stack out again";
    const bool poisoned = __asan_region_is_poisoned(g_live_local, 256) != nullptr;
    kshim::fiber_destroy(next);
    return poisoned;
}
}  // namespace
#endif

// A finished task's stack goes back to a pool and the next task runs on it. The poison of the
// frames live when the first one left must be gone by then, or ASan reports overflows in the
// next task that are not there. A fiber that leaves through fiber_exit leaves none: the compiler
// clears its stack before that [[noreturn]] call. One dropped while suspended is cleared when it
// is destroyed. Neither costs the next task a clearing of its whole stack (kernel_shim/fiber.cpp).
TEST(Sanitizers, APooledFiberStackKeepsNoPoisonFromAFiberThatExited) {
#if !KSHIM_ASAN
    GTEST_SKIP() << "ASan builds only";
#else
    EXPECT_FALSE(poison_survives_on_the_next_fiber(poison_and_leave<true>));
#endif
}

TEST(Sanitizers, APooledFiberStackKeepsNoPoisonFromAFiberDroppedWhileSuspended) {
#if !KSHIM_ASAN
    GTEST_SKIP() << "ASan builds only";
#else
    EXPECT_FALSE(poison_survives_on_the_next_fiber(poison_and_leave<false>));
#endif
}
