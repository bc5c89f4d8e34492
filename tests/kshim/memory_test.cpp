#include <gtest/gtest.h>

#include "kernel_shim/page_alloc.h"
#include "kernel_shim/slab.h"

TEST(PageAlloc, PhysRoundTrip) {
    kshim::Page* p = kshim::alloc_pages(kshim::GFP_KERNEL | kshim::__GFP_ZERO, 2);
    ASSERT_NE(p, nullptr);
    kshim::phys_addr_t pa = kshim::page_to_phys(p);
    EXPECT_EQ(pa % (4 * kshim::PAGE_SIZE), 0u);
    EXPECT_LT(pa, 1ull << 40);
    EXPECT_EQ(kshim::phys_to_virt(pa), kshim::page_address(p));
    kshim::__free_pages(p, 2);
}
