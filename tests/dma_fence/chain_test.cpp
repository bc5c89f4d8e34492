// Behaviours of drivers/dma-buf/st-dma-fence-chain.c, which timeline syncobjs rely on.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "kernel_shim/dma-buf/dma-fence-chain.h"
#include "kernel_shim/sched.h"
#include "tests/dma_fence/mock_fence.h"

using namespace kshim;
using namespace dma_fence_test;

class FenceChain : public kshim::testing::KernelTest {};

static dma_fence* mock_chain(dma_fence* prev, dma_fence* fence, u64 seqno) {
    dma_fence_chain* c = dma_fence_chain_alloc();
    dma_fence_chain_init(c, dma_fence_get(prev), dma_fence_get(fence), seqno);
    return &c->base;
}

struct FenceChains {
    std::vector<dma_fence*> fences;
    std::vector<dma_fence*> chains;
    dma_fence* tail = nullptr;

    FenceChains(unsigned count, u64 (*seqno_fn)(unsigned)) {
        for (unsigned i = 0; i < count; i++) {
            fences.push_back(mock_fence());
            chains.push_back(mock_chain(tail, fences[i], seqno_fn(i)));
            tail = chains[i];
        }
    }
    ~FenceChains() {
        for (dma_fence* f : fences) {
            dma_fence_signal(f);
            dma_fence_put(f);
        }
        for (dma_fence* c : chains)
            dma_fence_put(c);
    }
};

static u64 seqno_inc(unsigned i) {
    return i + 1;
}
static u64 seqno_inc2(unsigned i) {
    return 2 * i + 2;
}

TEST_F(FenceChain, Sanity) {
    dma_fence* f = mock_fence();
    dma_fence* chain = mock_chain(nullptr, f, 1);
    EXPECT_TRUE(dma_fence_is_chain(chain));
    EXPECT_EQ(dma_fence_chain_contained(chain), f);
    EXPECT_EQ(chain->seqno, 1u);
    dma_fence_signal(f);
    EXPECT_TRUE(dma_fence_is_signaled(chain));
    dma_fence_put(f);
    dma_fence_put(chain);
}

TEST_F(FenceChain, LinksShareTimelineAndUse64BitSeqnos) {
    FenceChains fc(3, [](unsigned i) -> u64 { return (u64{1} << 33) + i; });
    EXPECT_EQ(fc.chains[0]->context, fc.chains[2]->context);
    EXPECT_TRUE(dma_fence_is_later(fc.chains[2], fc.chains[0]));
    EXPECT_TRUE(dma_fence_test_flag(fc.chains[0], DMA_FENCE_FLAG_SEQNO64_BIT));
}

TEST_F(FenceChain, OutOfOrderSeqnoStartsNewTimelineWithoutGoingBack) {
    dma_fence* f1 = mock_fence();
    dma_fence* f2 = mock_fence();
    dma_fence* c1 = mock_chain(nullptr, f1, 10);
    dma_fence* c2 = mock_chain(c1, f2, 5);
    EXPECT_NE(c2->context, c1->context);
    EXPECT_EQ(c2->seqno, 10u);
    EXPECT_EQ(to_dma_fence_chain(c2)->prev_seqno, 0u);
    for (dma_fence* f : {f1, f2}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
    dma_fence_put(c2);
    dma_fence_put(c1);
}

TEST_F(FenceChain, FindSeqno) {
    FenceChains fc(64, seqno_inc);
    dma_fence* fence = dma_fence_get(fc.tail);
    EXPECT_EQ(dma_fence_chain_find_seqno(&fence, 0), 0);  // 0: the head itself
    EXPECT_EQ(fence, fc.tail);
    dma_fence_put(fence);

    for (unsigned i = 0; i < fc.chains.size(); i++) {
        fence = dma_fence_get(fc.tail);
        ASSERT_EQ(dma_fence_chain_find_seqno(&fence, i + 1), 0);
        dma_fence_put(fence);
        ASSERT_EQ(fence, fc.chains[i]);

        dma_fence_get(fence);
        ASSERT_EQ(dma_fence_chain_find_seqno(&fence, i + 1), 0);  // finding self
        dma_fence_put(fence);
        ASSERT_EQ(fence, fc.chains[i]);

        dma_fence_get(fence);
        ASSERT_EQ(dma_fence_chain_find_seqno(&fence, i + 2), -EINVAL);  // a future point
        dma_fence_put(fence);

        dma_fence_get(fence);
        ASSERT_EQ(dma_fence_chain_find_seqno(&fence, i), 0);
        dma_fence_put(fence);
        if (i > 0) {
            ASSERT_EQ(fence, fc.chains[i - 1]);
        }
    }
}

TEST_F(FenceChain, FindSeqnoOnPlainFenceIsInvalid) {
    dma_fence* f = mock_fence();
    dma_fence* p = f;
    EXPECT_EQ(dma_fence_chain_find_seqno(&p, 1), -EINVAL);
    dma_fence_put(f);
}

TEST_F(FenceChain, FindSignaledGivesNothingToWaitFor) {
    FenceChains fc(2, seqno_inc);
    dma_fence_signal(fc.fences[0]);
    dma_fence* fence = dma_fence_get(fc.tail);
    ASSERT_EQ(dma_fence_chain_find_seqno(&fence, 1), 0);
    dma_fence_put(fence);
    EXPECT_EQ(fence, nullptr);
}

TEST_F(FenceChain, FindOutOfOrderWaitsForEarliestUnsignalled) {
    FenceChains fc(3, seqno_inc);
    dma_fence_signal(fc.fences[1]);
    dma_fence* fence = dma_fence_get(fc.tail);
    ASSERT_EQ(dma_fence_chain_find_seqno(&fence, 2), 0);
    dma_fence_put(fence);
    // Point 2 is done only once point 1 is: wait for link 1.
    EXPECT_EQ(fence, fc.chains[0]);
}

TEST_F(FenceChain, FindGapRoundsUpToNextLink) {
    FenceChains fc(64, seqno_inc2);
    for (unsigned i = 0; i < fc.chains.size(); i++) {
        dma_fence* fence = dma_fence_get(fc.tail);
        ASSERT_EQ(dma_fence_chain_find_seqno(&fence, 2 * i + 1), 0);
        dma_fence_put(fence);
        ASSERT_EQ(fence, fc.chains[i]);
        dma_fence_get(fence);
        ASSERT_EQ(dma_fence_chain_find_seqno(&fence, 2 * i + 2), 0);
        dma_fence_put(fence);
        ASSERT_EQ(fence, fc.chains[i]);
    }
}

TEST_F(FenceChain, WalkCollectsSignalledLinks) {
    FenceChains fc(4, seqno_inc);
    dma_fence_signal(fc.fences[1]);
    dma_fence_signal(fc.fences[2]);
    // Walking from the tail skips links 2 and 1 (signalled) and unlinks them.
    dma_fence* prev = dma_fence_chain_walk(dma_fence_get(fc.tail));
    EXPECT_EQ(prev, fc.chains[0]);
    EXPECT_EQ(to_dma_fence_chain(fc.tail)->prev, fc.chains[0]);
    dma_fence_put(prev);
    // The collected links lost the reference the chain held.
    EXPECT_EQ(kref_read(&fc.chains[2]->refcount), 1u);
    // Walking a plain fence ends the walk.
    EXPECT_EQ(dma_fence_chain_walk(dma_fence_get(fc.fences[0])), nullptr);
}

TEST_F(FenceChain, SignalForward) {
    FenceChains fc(64, seqno_inc);
    for (unsigned i = 0; i < fc.chains.size(); i++) {
        dma_fence_signal(fc.fences[i]);
        ASSERT_TRUE(dma_fence_is_signaled(fc.chains[i])) << i;
        if (i + 1 < fc.chains.size()) {
            ASSERT_FALSE(dma_fence_is_signaled(fc.chains[i + 1])) << i;
        }
    }
}

TEST_F(FenceChain, SignalBackward) {
    FenceChains fc(64, seqno_inc);
    for (unsigned i = fc.chains.size(); i--;) {
        dma_fence_signal(fc.fences[i]);
        if (i > 0) {
            ASSERT_FALSE(dma_fence_is_signaled(fc.chains[i])) << i;
        }
    }
    for (unsigned i = 0; i < fc.chains.size(); i++)
        ASSERT_TRUE(dma_fence_is_signaled(fc.chains[i])) << i;
}

TEST_F(FenceChain, CallbackOnLinkRunsOnlyWhenPrefixSignalled) {
    FenceChains fc(3, seqno_inc);
    CountingCb cb;
    ASSERT_EQ(dma_fence_add_callback(fc.chains[1], &cb.cb, CountingCb::func), 0);
    dma_fence_signal(fc.fences[1]);
    advance_until_idle();
    EXPECT_EQ(cb.runs, 0);
    dma_fence_signal(fc.fences[0]);
    advance_until_idle();
    EXPECT_EQ(cb.runs, 1);
    EXPECT_TRUE(dma_fence_test_flag(fc.chains[1], DMA_FENCE_FLAG_SIGNALED_BIT));
    EXPECT_FALSE(dma_fence_is_signaled(fc.chains[2]));
}

enum class Order { Forward, Backward, Random };
class FenceChainWait : public FenceChain, public ::testing::WithParamInterface<Order> {};

TEST_P(FenceChainWait, TailWaiterWakesAfterAllSignalled) {
    FenceChains fc(4 << 10, seqno_inc);
    std::vector<dma_fence*> order = fc.fences;
    if (GetParam() == Order::Backward)
        std::reverse(order.begin(), order.end());
    if (GetParam() == Order::Random)
        std::shuffle(order.begin(), order.end(), std::mt19937(rt().seed()));
    bool done = false;
    Task* waiter = kthread_run(
        [&] {
            int r = static_cast<int>(dma_fence_wait(fc.tail, false));
            done = true;
            return r;
        },
        "dmabuf/wait");
    advance_until_idle();
    for (size_t i = 0; i < order.size(); i++) {
        EXPECT_FALSE(done);
        dma_fence_signal(order[i]);
        if (i % 512 == 0)
            advance_until_idle();
    }
    EXPECT_EQ(kthread_stop(waiter), 0);
    EXPECT_TRUE(done);
}

INSTANTIATE_TEST_SUITE_P(Orders, FenceChainWait, ::testing::Values(Order::Forward, Order::Backward, Order::Random),
                         [](const ::testing::TestParamInfo<Order>& info) {
                             return info.param == Order::Forward    ? std::string("Forward")
                                    : info.param == Order::Backward ? std::string("Backward")
                                                                    : std::string("Random");
                         });

class FenceChainPreempt : public FenceChain {
protected:
    RuntimeOptions runtime_options() const override {
        RuntimeOptions o = FenceChain::runtime_options();
        o.preempt_probability = 0.3;
        return o;
    }
};

TEST_F(FenceChainPreempt, FindRaceWithConcurrentSignals) {
    FenceChains fc(256, seqno_inc);
    int errors = 0;
    std::vector<Task*> threads;
    for (int t = 0; t < 3; t++) {
        threads.push_back(kthread_run(
            [&, t] {
                std::mt19937 rng(rt().seed() * 7 + t);
                for (int it = 0; it < 400; it++) {
                    dma_fence* fence = dma_fence_get(fc.tail);
                    u64 seqno = rng() % fc.chains.size() + 1;
                    if (dma_fence_chain_find_seqno(&fence, seqno)) {
                        errors++;
                        dma_fence_put(fence);
                        break;
                    }
                    if (fence) {
                        // We can only find ourselves if we are the link we were looking for.
                        if (fence->seqno == seqno && dma_fence_chain_find_seqno(&fence, seqno))
                            errors++;
                        dma_fence_put(fence);
                    }
                    dma_fence_signal(fc.fences[rng() % (fc.fences.size() - 1)]);
                    cond_resched();
                }
                return 0;
            },
            "dmabuf/find"));
    }
    for (Task* t : threads)
        kthread_stop(t);
    EXPECT_EQ(errors, 0);
}

TEST_F(FenceChain, LongChainReleaseDoesNotRecurse) {
    // Dropping the tail of a 100k-link chain whose fences all signalled must not overflow the
    // stack (the release unlinks predecessors iteratively).
    dma_fence* tail = nullptr;
    for (unsigned i = 0; i < 100000; i++) {
        dma_fence* f = mock_fence();
        dma_fence_signal(f);
        dma_fence_chain* c = dma_fence_chain_alloc();
        dma_fence_chain_init(c, tail, f, i + 1);  // takes both references
        tail = &c->base;
    }
    dma_fence_put(tail);
}

TEST_F(FenceChain, SetDeadlineReachesEveryContainedFence) {
    static int deadlines;
    deadlines = 0;
    static const dma_fence_ops ops = {
        .get_driver_name = mock_name,
        .get_timeline_name = mock_name,
        .release = mock_release,
        .set_deadline = [](dma_fence*, ktime_t) { deadlines++; },
    };
    dma_fence* f1 = mock_fence(0, 0, &ops);
    dma_fence* f2 = mock_fence(0, 0, &ops);
    dma_fence* c1 = mock_chain(nullptr, f1, 1);
    dma_fence* c2 = mock_chain(c1, f2, 2);
    dma_fence_set_deadline(c2, 100);
    EXPECT_EQ(deadlines, 2);
    for (dma_fence* f : {f1, f2}) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
    dma_fence_put(c1);
    dma_fence_put(c2);
}

TEST_F(FenceChain, ChainOfChainSignalsWithItsInnerFence) {
    // Upstream allows a link to wrap another link (a timeline point imported from a sync_file
    // exported from another timeline's point); it signals when the innermost fence does.
    dma_fence* f = mock_fence();
    dma_fence* inner = mock_chain(nullptr, f, 1);
    dma_fence_chain* outer = dma_fence_chain_alloc();
    dma_fence_chain_init(outer, nullptr, dma_fence_get(inner), 1);
    EXPECT_FALSE(dma_fence_is_signaled(&outer->base));
    dma_fence_signal(f);
    advance_until_idle();
    EXPECT_TRUE(dma_fence_is_signaled(inner));
    EXPECT_TRUE(dma_fence_is_signaled(&outer->base));
    dma_fence_put(&outer->base);
    dma_fence_put(inner);
    dma_fence_put(f);
}

TEST_F(FenceChain, UnusedChainCanBeFreed) {
    dma_fence_chain* c = dma_fence_chain_alloc();
    ASSERT_NE(c, nullptr);
    dma_fence_chain_free(c);
}

// Upstream's selftests enable signalling on every link. Signalled backwards in one burst, each
// link's re-arm used to run only after the signaller yielded, and then every one of them walked
// the whole signalled prefix: n²/2 walk steps (8 million for 4,096 links, ~10 s under ASan).
// The count of walk steps and irq_work runs, not the time, is what must stay linear.
enum class Burst { Forward, Backward };
class FenceChainBurst : public FenceChain, public ::testing::WithParamInterface<Burst> {};

TEST_P(FenceChainBurst, EveryLinkEnabledSignalsInLinearWork) {
    constexpr unsigned kLinks = 4 << 10;
    FenceChains fc(kLinks, seqno_inc);
    for (dma_fence* c : fc.chains)
        dma_fence_enable_sw_signaling(c);
    u64 steps = dma_fence_chain_walk_steps();
    u64 runs = irq_work_run_count();
    if (GetParam() == Burst::Backward) {
        for (unsigned i = kLinks; i--;)
            dma_fence_signal(fc.fences[i]);
    } else {
        for (unsigned i = 0; i < kLinks; i++)
            dma_fence_signal(fc.fences[i]);
    }
    // Delivered before the signaller yields: nothing is left for other tasks to do.
    for (dma_fence* c : fc.chains)
        ASSERT_TRUE(dma_fence_test_signaled_flag(c));
    steps = dma_fence_chain_walk_steps() - steps;
    runs = irq_work_run_count() - runs;
    EXPECT_LE(steps, 4u * kLinks) << "walk steps";
    EXPECT_LE(runs, 4u * kLinks) << "irq_work runs";
}

INSTANTIATE_TEST_SUITE_P(Orders, FenceChainBurst, ::testing::Values(Burst::Forward, Burst::Backward),
                         [](const ::testing::TestParamInfo<Burst>& info) {
                             return info.param == Burst::Forward ? std::string("Forward") : std::string("Backward");
                         });
