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

// A reused block whose pages were dirtied here and there: __GFP_ZERO asks the memfd which of
// them hold data (SEEK_DATA) and must find every one, including a page written only through
// a second mapping (as a client writes a BO).
TEST_F(ArenaMemfd, GfpZeroClearsPagesDirtiedThroughEitherMapping) {
    const int memfd = kshim::page_arena_memfd();
    ASSERT_GE(memfd, 0);
    constexpr size_t kPages = 256;
    kshim::Page* block = kshim::alloc_pages(kshim::GFP_KERNEL, 8);
    ASSERT_NE(block, nullptr);
    auto* kva = static_cast<unsigned char*>(kshim::page_address(block));
    const off_t off = static_cast<off_t>(kshim::page_to_phys(block) - kshim::kPhysBase);
    auto* alias = static_cast<unsigned char*>(
        mmap(nullptr, kPages * kshim::PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, off));
    ASSERT_NE(alias, MAP_FAILED);
    for (size_t page = 0; page < kPages; page += 3)
        kva[page * kshim::PAGE_SIZE + 11] = 0xAA;
    for (size_t page = 1; page < kPages; page += 29)
        alias[(page + 1) * kshim::PAGE_SIZE - 1] = 0x55;
    kshim::__free_pages(block, 8);
    kshim::Page* again = kshim::alloc_pages(kshim::GFP_KERNEL | kshim::__GFP_ZERO, 8);
    ASSERT_EQ(again, block);
    for (size_t i = 0; i < kPages * kshim::PAGE_SIZE; i++)
        ASSERT_EQ(alias[i], 0) << "page " << i / kshim::PAGE_SIZE;
    munmap(alias, kPages * kshim::PAGE_SIZE);
    kshim::__free_pages(again, 8);
}

}  // namespace
