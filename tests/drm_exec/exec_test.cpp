// drm_exec: the retry loop, duplicates, fence slots, arrays, unlock, and two tasks locking
// overlapping sets in opposite orders under a seeded sweep of interleavings.
#include <gtest/gtest.h>

#include <vector>

#include "drm/drm_exec.h"
#include "drm/drm_gem_shmem_helper.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/sched.h"
#include "tests/support/kernel_test.h"

using namespace drm;
using namespace kshim;

namespace {
std::vector<drm_gem_object*> make_bos(int n) {
    std::vector<drm_gem_object*> v;
    for (int i = 0; i < n; i++) {
        drm_gem_shmem_object* s = nullptr;
        EXPECT_EQ(drm_gem_shmem_create(nullptr, PAGE_SIZE, &s), 0);
        v.push_back(&s->base);
    }
    return v;
}
void put_bos(std::vector<drm_gem_object*>& v) {
    for (auto* o : v)
        drm_gem_object_put(o);
    v.clear();
}
}  // namespace

class DrmExecTest : public kshim::testing::KernelTest {};

TEST_F(DrmExecTest, LocksAndUnlocksEverything) {
    auto bos = make_bos(3);
    drm_exec exec;
    int passes = 0;
    drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT, 0);
    drm_exec_until_all_locked(&exec) {
        passes++;
        for (auto* obj : bos) {
            int ret = drm_exec_lock_obj(&exec, obj);
            drm_exec_retry_on_contention(&exec);
            ASSERT_EQ(ret, 0);
        }
    }
    EXPECT_EQ(passes, 1);
    EXPECT_EQ(exec.num_objects, 3u);
    for (auto* obj : bos) {
        EXPECT_TRUE(dma_resv_is_locked(obj->resv));
        EXPECT_EQ(kref_read(&obj->refcount), 2u);  // exec holds a reference
    }
    drm_exec_unlock_obj(&exec, bos[1]);
    EXPECT_FALSE(dma_resv_is_locked(bos[1]->resv));
    EXPECT_EQ(exec.num_objects, 2u);
    EXPECT_EQ(exec.objects[1], bos[2]);
    drm_exec_fini(&exec);
    for (auto* obj : bos) {
        EXPECT_FALSE(dma_resv_is_locked(obj->resv));
        EXPECT_EQ(kref_read(&obj->refcount), 1u);
    }
    put_bos(bos);
}

TEST_F(DrmExecTest, DuplicatesAreEalreadyUnlessIgnored) {
    auto bos = make_bos(1);
    drm_exec exec;
    drm_exec_init(&exec, 0, 0);
    int dup = 0;
    drm_exec_until_all_locked(&exec) {
        int ret = drm_exec_lock_obj(&exec, bos[0]);
        drm_exec_retry_on_contention(&exec);
        ASSERT_EQ(ret, 0);
        dup = drm_exec_lock_obj(&exec, bos[0]);
        drm_exec_retry_on_contention(&exec);
    }
    EXPECT_EQ(dup, -EALREADY);
    drm_exec_fini(&exec);

    drm_exec_init(&exec, DRM_EXEC_IGNORE_DUPLICATES, 0);
    drm_exec_until_all_locked(&exec) {
        int ret = drm_exec_prepare_obj(&exec, bos[0], 1);
        drm_exec_retry_on_contention(&exec);
        ASSERT_EQ(ret, 0);
        dup = drm_exec_prepare_obj(&exec, bos[0], 2);
        drm_exec_retry_on_contention(&exec);
    }
    EXPECT_EQ(dup, 0);
    EXPECT_EQ(exec.num_objects, 1u);  // recorded once
    drm_exec_fini(&exec);
    put_bos(bos);
}

TEST_F(DrmExecTest, PrepareReservesFenceSlots) {
    auto bos = make_bos(4);
    drm_exec exec;
    drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT, 0);
    drm_exec_until_all_locked(&exec) {
        int ret = drm_exec_prepare_array(&exec, bos.data(), 4, 2);
        drm_exec_retry_on_contention(&exec);
        ASSERT_EQ(ret, 0);
    }
    dma_fence* f1 = dma_fence_allocate_private_stub(0);
    dma_fence* f2 = dma_fence_allocate_private_stub(0);
    // Two reserved slots each: adding two fences WARNs nowhere (the fixture fails on a WARN).
    drm_exec_for_each_locked_object(&exec, [&](unsigned, drm_gem_object* obj) {
        dma_resv_add_fence(obj->resv, f1, DMA_RESV_USAGE_READ);
        dma_resv_add_fence(obj->resv, f2, DMA_RESV_USAGE_WRITE);
    });
    drm_exec_fini(&exec);
    dma_fence_put(f1);
    dma_fence_put(f2);
    put_bos(bos);
}

TEST_F(DrmExecTest, ManyObjectsGrowTheArray) {
    auto bos = make_bos(600);  // more than the page-sized initial array
    drm_exec exec;
    drm_exec_init(&exec, 0, 0);
    drm_exec_until_all_locked(&exec) {
        int ret = drm_exec_prepare_array(&exec, bos.data(), static_cast<unsigned>(bos.size()), 0);
        drm_exec_retry_on_contention(&exec);
        ASSERT_EQ(ret, 0);
    }
    EXPECT_EQ(exec.num_objects, 600u);
    drm_exec_fini(&exec);
    put_bos(bos);
}

TEST_F(DrmExecTest, BackOffOnAHeldLockRetriesAfterTheHolderLetsGo) {
    auto bos = make_bos(2);
    // An older context (another task) holds bos[1]; we are younger, hold bos[0] and ask for
    // bos[1]: -EDEADLK, the loop drops bos[0], waits for bos[1] with the slow path and runs the
    // body again.
    bool held = false;
    Task* holder = kthread_run(
        [&] {
            WwAcquireCtx older;
            ww_acquire_init(&older, &reservation_ww_class);
            EXPECT_EQ(dma_resv_lock(bos[1]->resv, &older), 0);
            held = true;
            msleep(10);
            dma_resv_unlock(bos[1]->resv);
            ww_acquire_fini(&older);
            return 0;
        },
        "holder");
    while (!held)
        msleep(1);
    int passes = 0;
    drm_exec exec;
    drm_exec_init(&exec, 0, 0);
    drm_exec_until_all_locked(&exec) {
        passes++;
        for (auto* obj : bos) {
            int ret = drm_exec_lock_obj(&exec, obj);
            drm_exec_retry_on_contention(&exec);
            ASSERT_EQ(ret, 0);
        }
    }
    EXPECT_EQ(passes, 2);
    EXPECT_EQ(exec.num_objects, 2u);
    drm_exec_fini(&exec);
    kthread_stop(holder);
    put_bos(bos);
}

// Two tasks, each locking an overlapping set in the opposite order of the other, several rounds,
// over many seeds with preemption at every lock: both always finish, and back-offs happen.
TEST(DrmExecContention, OppositeOrdersBothCompleteInEverySeed) {
    int total_retries = 0;
    for (u64 seed = 1; seed <= 40; seed++) {
        int done = 0, retries = 0;
        kshim::testing::run_simulated(
            seed,
            [&] {
                auto bos = make_bos(5);
                auto worker = [&](std::vector<drm_gem_object*> order) {
                    for (int round = 0; round < 5; round++) {
                        drm_exec exec;
                        int passes = 0;
                        drm_exec_init(&exec, DRM_EXEC_INTERRUPTIBLE_WAIT, 0);
                        drm_exec_until_all_locked(&exec) {
                            passes++;
                            for (auto* obj : order) {
                                int ret = drm_exec_prepare_obj(&exec, obj, 1);
                                drm_exec_retry_on_contention(&exec);
                                EXPECT_EQ(ret, 0);
                                preempt_point();
                            }
                        }
                        for (auto* obj : order)
                            EXPECT_EQ(dma_resv_locking_ctx(obj->resv), &exec.ticket);
                        retries += passes - 1;
                        drm_exec_fini(&exec);
                    }
                    done++;
                    return 0;
                };
                std::vector<drm_gem_object*> fwd = {bos[0], bos[1], bos[2], bos[3]};
                std::vector<drm_gem_object*> rev = {bos[4], bos[3], bos[2], bos[1]};
                Task* t1 = kthread_run([&] { return worker(fwd); }, "exec-fwd");
                Task* t2 = kthread_run([&] { return worker(rev); }, "exec-rev");
                kthread_stop(t1);
                kthread_stop(t2);
                put_bos(bos);
            },
            0.5);
        ASSERT_EQ(done, 2) << "seed " << seed;
        total_retries += retries;
    }
    EXPECT_GT(total_retries, 0) << "the sweep never made a context back off";
}
