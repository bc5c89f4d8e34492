// sync_file as an in-process object: a named fence with status and per-fence info.
#include <gtest/gtest.h>

#include <cstring>

#include "kernel_shim/dma-buf/sync_file.h"
#include "tests/dma_fence/mock_fence.h"

using namespace kshim;
using namespace dma_fence_test;

class SyncFile : public kshim::testing::KernelTest {};

TEST_F(SyncFile, WrapsFenceWithStatusAndName) {
    dma_fence* f = mock_fence(dma_fence_context_alloc(1), 3);
    sync_file* file = sync_file_create(f);
    ASSERT_NE(file, nullptr);
    EXPECT_EQ(sync_file_get_status(file), 0);
    char buf[64];
    EXPECT_EQ(std::strncmp(sync_file_get_name(file, buf, sizeof buf), "mock-mock", 9), 0);
    sync_file_set_name(file, "my-file");
    EXPECT_STREQ(sync_file_get_name(file, buf, sizeof buf), "my-file");
    dma_fence* got = sync_file_get_fence(file);
    EXPECT_EQ(got, f);
    dma_fence_put(got);
    dma_fence_set_error(f, -EIO);
    dma_fence_signal(f);
    EXPECT_EQ(sync_file_get_status(file), -EIO);
    dma_fence_put(f);
    sync_file_put(file);  // the file's own reference keeps the fence until here
}

TEST_F(SyncFile, MergeAndFenceInfo) {
    dma_fence* f1 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* f2 = mock_fence(dma_fence_context_alloc(1), 1);
    sync_file* a = sync_file_create(f1);
    sync_file* b = sync_file_create(f2);
    sync_file* m = sync_file_merge("merged", a, b);
    ASSERT_NE(m, nullptr);
    u32 n = 0;
    ASSERT_EQ(sync_file_get_fence_info(m, nullptr, &n), 0);
    EXPECT_EQ(n, 2u);
    dma_fence_signal_timestamp(f1, 1000);
    sync_fence_info info[2];
    u32 one = 1;
    EXPECT_EQ(sync_file_get_fence_info(m, info, &one), -EINVAL);
    ASSERT_EQ(sync_file_get_fence_info(m, info, &n), 0);
    int signalled = 0;
    for (auto& i : info) {
        // A signalled fence's names are fixed strings (upstream's dma_fence_driver_name).
        EXPECT_STREQ(i.driver_name, i.status == 1 ? "detached-driver" : "mock");
        if (i.status == 1) {
            signalled++;
            EXPECT_EQ(i.timestamp_ns, 1000u);
        }
    }
    EXPECT_EQ(signalled, 1);
    EXPECT_EQ(sync_file_get_status(m), 0);
    dma_fence_signal(f2);
    EXPECT_EQ(sync_file_get_status(m), 1);
    sync_file_get(m);
    sync_file_put(m);
    for (sync_file* s : {a, b, m})
        sync_file_put(s);
    dma_fence_put(f1);
    dma_fence_put(f2);
}
