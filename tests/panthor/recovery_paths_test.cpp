// Error-recovery paths that need a particular workload rather than a FaultPlan
// switch: a CS_FAULT whose error travels to another queue through a sync object (CS_INHERIT_FAULT)
// and is cleared by the kernel's ERROR_BARRIER, and a tiler heap that cannot grow (at max_chunks,
// or its chunk allocation fails). The fault campaign (recovery_campaign_test.cpp) runs the same
// workloads under seeds; these tests pin down the exact outcome of each.
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/log.h"
#include "tests/panthor/sched_test.h"

namespace panthor::testing {
namespace {

class RecoveryPathsTest : public SchedTest {
protected:
    void SetUp() override {
        SchedTest::SetUp();
        kshim::log_clear();
    }
    u32 submit_instrs(u32 group, u32 queue, const std::vector<u64>& instrs) {
        return submit_stream(group, queue, put_stream(instrs), static_cast<u32>(instrs.size() * 8));
    }
    // A compute job writing `value` at data offset `off`: skipped (a no-op) while the stream is in
    // the error state a CS fault leaves until the next ERROR_BARRIER.
    std::vector<u64> write_job_instrs(u64 off, u64 value) {
        return {cs::move48(
                    16, put_shader(shader(mock_hw::MockShader::Write, 10 * kshim::NSEC_PER_USEC, data_va(off), value))),
                cs::run_compute(1), cs::wait(0xFF)};
    }
    static std::vector<u64> concat(std::vector<u64> a, const std::vector<u64>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    }
};

// Queue 0's job faults (CS_FAULT) and then signals a sync object with error propagation; queue 1's
// job waits on it with error rejection: it inherits the fault (CS_INHERIT_FAULT) and fails with
// -EINVAL; its compute job after the wait is skipped (the stream's other instructions still run,
// as on hardware); the kernel's ERROR_BARRIER at the end of that job lets queue 1's next job run
// normally. The group is not terminated.
TEST_F(RecoveryPathsTest, InheritFaultPropagatesThroughSyncWaitAndTheErrorBarrierRecovers) {
    constexpr u64 kSync = 0x100, kAfterWait = 0x200, kNext = 0x208;
    const u32 g = group_create(2);
    const u32 waiter = submit_instrs(g, 1, concat(inherit_wait_instrs(kSync), write_job_instrs(kAfterWait, 7)));
    advance(1 * kMs);
    EXPECT_EQ(fence_status(waiter), 0) << "the wait blocks until the sync object moves";
    const u32 faulty = submit_instrs(g, 0, fault_then_signal_instrs(0x58, kSync));
    const u32 next = submit_instrs(g, 1, write_job_instrs(kNext, 9));

    ASSERT_EQ(syncobj_wait({waiter, faulty, next}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(faulty), -EINVAL) << "the CS_FAULT job";
    EXPECT_EQ(read_data(kSync), 1u) << "the faulting stream still signalled";
    EXPECT_NE(read_data<u32>(kSync + 8), 0u) << "with the error propagated";
    EXPECT_EQ(fence_status(waiter), -EINVAL) << "the waiter inherited the fault";
    EXPECT_EQ(read_data(kAfterWait), 0u) << "the job after the rejecting wait was skipped";
    EXPECT_EQ(fence_status(next), 1) << "ERROR_BARRIER cleared queue 1's error state";
    EXPECT_EQ(read_data(kNext), 9u);
    EXPECT_TRUE(kshim::log_contains("CS_INHERIT_FAULT"));
    EXPECT_EQ(group_state(g).state, 0u) << "CS faults do not terminate the group";
}

// A tiling job that needs more chunks than the heap may ever have: the driver's TILER_OOM handling
// gets -ENOMEM from panthor_heap_grow, answers with a null chunk, and without an exception handler
// the firmware faults the job (CS_FAULT OUT_OF_MEMORY): that job fails with -EINVAL, the group and
// the next job are fine.
TEST_F(RecoveryPathsTest, TilerOomAtMaxChunksFaultsOnlyThatJob) {
    const drm_panthor_tiler_heap_create heap = tiler_heap_create(1, 1);
    const u32 g = group_create(1);
    const u32 job = submit_instrs(g, 0, tiler_instrs(heap, 2, 0x100));
    const u32 next = submit_instrs(g, 0, count_instrs(0x108));
    ASSERT_EQ(syncobj_wait({job, next}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(job), -EINVAL);
    EXPECT_EQ(fence_status(next), 1);
    EXPECT_EQ(read_data(0x108), 1u);
    EXPECT_TRUE(kshim::log_contains("CS_FAULT.EXCEPTION_TYPE: 0x60")) << "OUT_OF_MEMORY";
    EXPECT_EQ(group_state(g).state, 0u);
}

// The same job on a heap that may grow succeeds: the driver's reply is a fresh chunk.
TEST_F(RecoveryPathsTest, TilerOomBelowMaxChunksGrowsTheHeapAndTheJobCompletes) {
    const drm_panthor_tiler_heap_create heap = tiler_heap_create(1, 4);
    const u32 g = group_create(1);
    const u32 job = submit_instrs(g, 0, tiler_instrs(heap, 2, 0x100));
    ASSERT_EQ(syncobj_wait({job}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(job), 1);
    EXPECT_EQ(read_data(0x100), 1u);
}

// Growing fails because the chunk cannot be allocated: the same -ENOMEM reply, the same outcome;
// once memory is back, the next tiling job grows the heap.
TEST_F(RecoveryPathsTest, TilerOomWhoseAllocationFailsFaultsOnlyThatJob) {
    const drm_panthor_tiler_heap_create heap = tiler_heap_create(1, 4);
    const u32 g = group_create(1);
    // Every allocation of the heap-grow worker fails; the submit path has allocated already.
    const u32 job = submit_instrs(g, 0, tiler_instrs(heap, 2, 0x100));
    kshim::fault_inject_arm({.probability = 1.0});
    advance(5 * kMs);
    kshim::fault_inject_disarm();
    ASSERT_EQ(syncobj_wait({job}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(job), -EINVAL);
    EXPECT_EQ(group_state(g).state, 0u);

    const u32 again = submit_instrs(g, 0, tiler_instrs(heap, 2, 0x108));
    ASSERT_EQ(syncobj_wait({again}, 1000 * kMs), 0);
    EXPECT_EQ(fence_status(again), 1);
    EXPECT_EQ(read_data(0x108), 1u);
}

}  // namespace
}  // namespace panthor::testing
