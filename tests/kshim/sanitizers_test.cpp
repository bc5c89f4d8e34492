// kernel_shim/sanitizers.h must see the sanitizer the build links: a build whose runtime is
// ASan's (or TSan's) but whose code believes otherwise switches fibers without telling it, and
// ASan then reports stack overflows that are not there (clang 14 builds did, before the header).
#include <gtest/gtest.h>

#include "kernel_shim/sanitizers.h"

// Defined only by the sanitizer runtimes; null when the runtime is not linked.
extern "C" int __asan_address_is_poisoned(void const volatile* addr) __attribute__((weak));
extern "C" void __tsan_acquire(void* addr) __attribute__((weak));

TEST(Sanitizers, KshimSeesTheSanitizerTheBuildLinks) {
    EXPECT_EQ(KSHIM_ASAN == 1, &__asan_address_is_poisoned != nullptr);
    EXPECT_EQ(KSHIM_TSAN == 1, &__tsan_acquire != nullptr);
}
