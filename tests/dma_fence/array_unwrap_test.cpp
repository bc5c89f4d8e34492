// dma_fence_array (all / any, errors) and drivers/dma-buf/st-dma-fence-unwrap.c (iteration
// through arrays and chains, and dma_fence_unwrap_merge).
#include <gtest/gtest.h>

#include <set>

#include "kernel_shim/dma-buf/dma-fence-unwrap.h"
#include "kernel_shim/sched.h"
#include "tests/dma_fence/mock_fence.h"

using namespace kshim;
using namespace dma_fence_test;

class FenceArray : public kshim::testing::KernelTest {};
class FenceUnwrap : public kshim::testing::KernelTest {};

// Takes the references to the members, as dma_fence_array_create does.
static dma_fence* mock_array(std::initializer_list<dma_fence*> members, bool signal_on_any = false) {
    auto** fences = static_cast<dma_fence**>(kcalloc(members.size(), sizeof(dma_fence*), GFP_KERNEL));
    int i = 0;
    for (dma_fence* f : members)
        fences[i++] = f;
    dma_fence_array* a = dma_fence_array_create(i, fences, dma_fence_context_alloc(1), 1, signal_on_any);
    return &a->base;
}

static dma_fence* mock_chain(dma_fence* prev, dma_fence* fence) {
    dma_fence_chain* c = dma_fence_chain_alloc();
    dma_fence_chain_init(c, prev, fence, 1);
    return &c->base;
}

static std::set<dma_fence*> unwrapped(dma_fence* head) {
    std::set<dma_fence*> seen;
    dma_fence_unwrap iter;
    dma_fence* f;
    dma_fence_unwrap_for_each(f, &iter, head) seen.insert(f);
    return seen;
}

// ---- dma_fence_array ----
TEST_F(FenceArray, SignalsWhenAllMembersSignal) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    EXPECT_TRUE(dma_fence_is_array(array));
    CountingCb cb;
    ASSERT_EQ(dma_fence_add_callback(array, &cb.cb, CountingCb::func), 0);
    dma_fence_signal(f1);
    advance_until_idle();
    EXPECT_FALSE(dma_fence_is_signaled(array));
    EXPECT_EQ(cb.runs, 0);
    dma_fence_signal(f2);
    advance_until_idle();
    EXPECT_EQ(cb.runs, 1);
    EXPECT_EQ(dma_fence_get_status(array), 1);
    dma_fence_put(array);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(FenceArray, SignaledWithoutEnablingChecksMembers) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    dma_fence_signal(f1);
    EXPECT_FALSE(dma_fence_is_signaled(array));
    dma_fence_signal(f2);
    EXPECT_TRUE(dma_fence_is_signaled(array));  // through ops->signaled, no work item needed
    EXPECT_EQ(dma_fence_get_status(array), 1);
    dma_fence_put(array);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(FenceArray, SignalOnAny) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f1), dma_fence_get(f2)}, true);
    Task* waiter = kthread_run([array] { return static_cast<int>(dma_fence_wait(array, false)); }, "waiter");
    advance_until_idle();
    dma_fence_signal(f2);
    EXPECT_EQ(kthread_stop(waiter), 0);
    EXPECT_TRUE(dma_fence_is_signaled(array));
    EXPECT_FALSE(dma_fence_is_signaled(f1));
    dma_fence_signal(f1);
    dma_fence_put(array);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(FenceArray, AlreadySignalledMembersComplete) {
    dma_fence* f1 = mock_fence();
    dma_fence_signal(f1);
    dma_fence* array = mock_array({dma_fence_get(f1)});
    CountingCb cb;
    EXPECT_EQ(dma_fence_add_callback(array, &cb.cb, CountingCb::func), -ENOENT);
    EXPECT_TRUE(dma_fence_is_signaled(array));
    EXPECT_EQ(dma_fence_get_status(array), 1);
    dma_fence_put(array);
    dma_fence_put(f1);
}

TEST_F(FenceArray, PropagatesFirstMemberError) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    dma_fence_enable_sw_signaling(array);
    EXPECT_EQ(dma_fence_get_status(array), 0);
    dma_fence_set_error(f2, -EIO);
    dma_fence_signal(f2);
    dma_fence_set_error(f1, -ENOMEM);
    dma_fence_signal(f1);
    EXPECT_EQ(dma_fence_wait(array, false), 0);
    EXPECT_EQ(dma_fence_get_status(array), -EIO);
    dma_fence_put(array);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(FenceArray, ErrorOfAlreadySignalledMember) {
    dma_fence* f1 = mock_fence();
    dma_fence_set_error(f1, -ETIMEDOUT);
    dma_fence_signal(f1);
    dma_fence* f2 = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    dma_fence_enable_sw_signaling(array);
    dma_fence_signal(f2);
    advance_until_idle();
    EXPECT_EQ(dma_fence_get_status(array), -ETIMEDOUT);
    dma_fence_put(array);
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(FenceArray, CleanCompletionHasNoError) {
    dma_fence* f1 = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f1)});
    dma_fence_enable_sw_signaling(array);
    dma_fence_signal(f1);
    advance_until_idle();
    EXPECT_EQ(array->error, 0);  // the internal "pending" marker never leaks out
    EXPECT_EQ(dma_fence_get_status(array), 1);
    dma_fence_put(array);
    dma_fence_put(f1);
}

TEST_F(FenceArray, ArrayOutlivesCallerWhileCallbacksPending) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    dma_fence_enable_sw_signaling(array);
    dma_fence_put(array);  // the armed callbacks keep it alive
    dma_fence_signal(f1);
    dma_fence_signal(f2);
    advance_until_idle();  // teardown checks the array was freed once both ran
    dma_fence_put(f1);
    dma_fence_put(f2);
}

TEST_F(FenceArray, MatchContextAndIteration) {
    u64 ctx = dma_fence_context_alloc(1);
    dma_fence* f1 = mock_fence(ctx, 1);
    dma_fence* f2 = mock_fence(ctx, 2);
    dma_fence* array = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    EXPECT_TRUE(dma_fence_match_context(array, ctx));
    EXPECT_FALSE(dma_fence_match_context(array, ctx + 1));
    EXPECT_TRUE(dma_fence_match_context(f1, ctx));
    dma_fence* f;
    unsigned i;
    std::vector<dma_fence*> seen;
    dma_fence_array_for_each(f, i, array) seen.push_back(f);
    EXPECT_EQ(seen, (std::vector<dma_fence*>{f1, f2}));
    EXPECT_EQ(dma_fence_array_first(f1), f1);
    EXPECT_EQ(dma_fence_array_next(f1, 1), nullptr);
    for (dma_fence* x : {f1, f2}) {
        dma_fence_signal(x);
        dma_fence_put(x);
    }
    dma_fence_put(array);
}

TEST_F(FenceArray, NestedContainerWarns) {
    dma_fence* f1 = mock_fence();
    dma_fence* inner = mock_array({dma_fence_get(f1)});
    dma_fence* outer = mock_array({dma_fence_get(inner)});
    EXPECT_TRUE(expect_report(ReportKind::Warn));
    dma_fence_signal(f1);
    dma_fence_put(outer);
    dma_fence_put(inner);
    dma_fence_put(f1);
}

// ---- dma_fence_unwrap ----
TEST_F(FenceUnwrap, Sanity) {
    dma_fence* f = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f)});
    dma_fence* chain = mock_chain(nullptr, array);
    dma_fence_signal(f);
    dma_fence_put(chain);
    dma_fence_put(f);
}

TEST_F(FenceUnwrap, Array) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* array = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    EXPECT_EQ(unwrapped(array), (std::set<dma_fence*>{f1, f2}));
    for (dma_fence* x : {f1, f2}) {
        dma_fence_signal(x);
        dma_fence_put(x);
    }
    dma_fence_put(array);
}

TEST_F(FenceUnwrap, Chain) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* chain = mock_chain(dma_fence_get(f1), dma_fence_get(f2));
    EXPECT_EQ(unwrapped(chain), (std::set<dma_fence*>{f1, f2}));
    for (dma_fence* x : {f1, f2}) {
        dma_fence_signal(x);
        dma_fence_put(x);
    }
    dma_fence_put(chain);
}

TEST_F(FenceUnwrap, ChainOfArrays) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* f3 = mock_fence();
    dma_fence* a1 = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    dma_fence* c1 = mock_chain(nullptr, a1);
    dma_fence* c2 = mock_chain(c1, dma_fence_get(f3));
    EXPECT_EQ(unwrapped(c2), (std::set<dma_fence*>{f1, f2, f3}));
    for (dma_fence* x : {f1, f2, f3}) {
        dma_fence_signal(x);
        dma_fence_put(x);
    }
    dma_fence_put(c2);
}

TEST_F(FenceUnwrap, PlainFenceUnwrapsToItself) {
    dma_fence* f = mock_fence();
    EXPECT_EQ(unwrapped(f), (std::set<dma_fence*>{f}));
    dma_fence_signal(f);
    dma_fence_put(f);
}

TEST_F(FenceUnwrap, MergeDistinctContextsMakesArray) {
    dma_fence* f1 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* f2 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* f3 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* a = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    dma_fence* m = dma_fence_unwrap_merge(a, f3);
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(dma_fence_is_array(m));
    EXPECT_EQ(unwrapped(m), (std::set<dma_fence*>{f1, f2, f3}));
    for (dma_fence* x : {f1, f2, f3})
        dma_fence_signal(x);
    EXPECT_TRUE(dma_fence_is_signaled(m));
    for (dma_fence* x : {f1, f2, f3, a, m})
        dma_fence_put(x);
}

TEST_F(FenceUnwrap, MergeDuplicateGivesTheFenceItself) {
    dma_fence* f1 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* m = dma_fence_unwrap_merge(f1, f1);
    EXPECT_EQ(m, f1);
    dma_fence_put(m);
    dma_fence_signal(f1);
    dma_fence_put(f1);
}

TEST_F(FenceUnwrap, MergeKeepsLatestPerContext) {
    u64 ctx = dma_fence_context_alloc(1);
    dma_fence* f1 = mock_fence(ctx, 1);
    dma_fence* f2 = mock_fence(ctx, 2);
    dma_fence* other = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* m = dma_fence_unwrap_merge(f1, other, f2);
    EXPECT_EQ(unwrapped(m), (std::set<dma_fence*>{f2, other}));
    dma_fence* m2 = dma_fence_unwrap_merge(f2, f1);
    EXPECT_EQ(m2, f2);  // one context: just the later fence
    for (dma_fence* x : {f1, f2, other}) {
        dma_fence_signal(x);
        dma_fence_put(x);
    }
    dma_fence_put(m);
    dma_fence_put(m2);
}

TEST_F(FenceUnwrap, MergeDropsSignalledFences) {
    dma_fence* f1 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* f2 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence_signal(f1);
    dma_fence* m = dma_fence_unwrap_merge(f1, f2);
    EXPECT_EQ(m, f2);
    dma_fence_put(m);
    dma_fence_signal(f2);
    for (dma_fence* x : {f1, f2})
        dma_fence_put(x);
}

TEST_F(FenceUnwrap, MergeOfSignalledGivesStubWithLatestTimestamp) {
    dma_fence* f1 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence* f2 = mock_fence(dma_fence_context_alloc(1), 1);
    dma_fence_signal_timestamp(f1, 500);
    dma_fence_signal_timestamp(f2, 900);
    dma_fence* m = dma_fence_unwrap_merge(f1, f2);
    ASSERT_NE(m, nullptr);
    EXPECT_NE(m, f1);
    EXPECT_NE(m, f2);
    EXPECT_TRUE(dma_fence_is_signaled(m));
    EXPECT_EQ(dma_fence_timestamp(m), 900);
    for (dma_fence* x : {f1, f2, m})
        dma_fence_put(x);
}

TEST_F(FenceUnwrap, MergeComplexFlattensEverything) {
    u64 c1 = dma_fence_context_alloc(1), c2 = dma_fence_context_alloc(1), c3 = dma_fence_context_alloc(1);
    dma_fence* f1 = mock_fence(c1, 1);
    dma_fence* f2 = mock_fence(c2, 1);
    dma_fence* f3 = mock_fence(c1, 2);
    dma_fence* f4 = mock_fence(c3, 5);
    dma_fence* arr = mock_array({dma_fence_get(f1), dma_fence_get(f2)});
    dma_fence* ch = mock_chain(mock_chain(nullptr, dma_fence_get(f3)), dma_fence_get(f4));
    dma_fence* m = dma_fence_unwrap_merge(arr, ch, f2);
    ASSERT_NE(m, nullptr);
    // f1 is superseded by f3 (same context, later); f2 appears twice; no containers inside.
    EXPECT_EQ(unwrapped(m), (std::set<dma_fence*>{f2, f3, f4}));
    dma_fence_array* a = to_dma_fence_array(m);
    ASSERT_NE(a, nullptr);
    for (unsigned i = 0; i < a->num_fences; i++)
        EXPECT_FALSE(dma_fence_is_container(a->fences[i]));
    for (dma_fence* x : {f1, f2, f3, f4})
        dma_fence_signal(x);
    EXPECT_TRUE(dma_fence_is_signaled(m));
    for (dma_fence* x : {f1, f2, f3, f4, arr, ch, m})
        dma_fence_put(x);
}

TEST_F(FenceUnwrap, DedupArraySortsAndKeepsLatest) {
    u64 c1 = dma_fence_context_alloc(1), c2 = dma_fence_context_alloc(1);
    dma_fence* a = mock_fence(c2, 1);
    dma_fence* b = mock_fence(c1, 3);
    dma_fence* c = mock_fence(c1, 7);
    dma_fence* d = mock_fence(c2, 4);
    dma_fence* arr[4] = {dma_fence_get(a), dma_fence_get(b), dma_fence_get(c), dma_fence_get(d)};
    int n = dma_fence_dedup_array(arr, 4);
    ASSERT_EQ(n, 2);
    EXPECT_EQ(arr[0], c);
    EXPECT_EQ(arr[1], d);
    dma_fence_put(arr[0]);
    dma_fence_put(arr[1]);
    for (dma_fence* x : {a, b, c, d})
        dma_fence_put(x);
}
