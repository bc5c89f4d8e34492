// The page arena backed by a memfd (kernel_shim/page_alloc.h, page_arena_use_memfd), label
// preload: the preload library maps BO pages a second time from it, so a store through either
// address is seen through the other. Its own binary: the switch must precede the first allocation.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>

#include "kernel_shim/page_alloc.h"
#include "tests/support/kernel_test.h"

namespace {

class ArenaEnv : public ::testing::Environment {
public:
    void SetUp() override { ASSERT_EQ(kshim::page_arena_use_memfd(), 0); }
};
const auto* const g_env = ::testing::AddGlobalTestEnvironment(new ArenaEnv);

class ArenaMemfd : public kshim::testing::KernelTest {};

TEST_F(ArenaMemfd, PagesAreVisibleThroughASecondMappingOfTheMemfd) {
    EXPECT_EQ(kshim::page_arena_use_memfd(), 0);  // already on: fine
    const int memfd = kshim::page_arena_memfd();
    ASSERT_GE(memfd, 0);
    kshim::Page* pages = kshim::alloc_pages(kshim::GFP_KERNEL | kshim::__GFP_ZERO, 2);
    ASSERT_NE(pages, nullptr);
    auto* kva = static_cast<unsigned*>(kshim::page_address(pages));
    const off_t off = static_cast<off_t>(kshim::page_to_phys(pages) - kshim::kPhysBase);
    auto* alias =
        static_cast<unsigned*>(mmap(nullptr, 4 * kshim::PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, off));
    ASSERT_NE(alias, MAP_FAILED);
    kva[0] = 0xC0FFEE;
    alias[3 * 1024 + 5] = 0xBEEF;
    EXPECT_EQ(alias[0], 0xC0FFEEu);
    EXPECT_EQ(kva[3 * 1024 + 5], 0xBEEFu);
    munmap(alias, 4 * kshim::PAGE_SIZE);
    kshim::__free_pages(pages, 2);
}

TEST_F(ArenaMemfd, LargeFreedBlocksArePunchedOutAndComeBackZeroedWhenAsked) {
    kshim::Page* big = kshim::alloc_pages(kshim::GFP_KERNEL, 9);
    ASSERT_NE(big, nullptr);
    std::memset(kshim::page_address(big), 0xAB, kshim::PAGE_SIZE << 9);
    kshim::__free_pages(big, 9);
    kshim::Page* again = kshim::alloc_pages(kshim::GFP_KERNEL | kshim::__GFP_ZERO, 9);
    ASSERT_NE(again, nullptr);
    EXPECT_EQ(static_cast<unsigned char*>(kshim::page_address(again))[100], 0);
    kshim::__free_pages(again, 9);
}

}  // namespace
