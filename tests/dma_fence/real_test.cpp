// Real threads (runs under TSan): the races the simulated runner cannot produce.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "kernel_shim/dma-buf/dma-fence-chain.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/time.h"
#include "tests/dma_fence/mock_fence.h"

using namespace kshim;
using namespace dma_fence_test;

class FenceReal : public kshim::testing::RealKernelTest {};

struct RaceCb {
    dma_fence_cb cb;
    std::atomic<int> runs{0};
    static void func(dma_fence*, dma_fence_cb* cb) { container_of(cb, RaceCb, cb)->runs.fetch_add(1); }
};

TEST_F(FenceReal, CallbackRacingSignalIsRunOrRefusedNeverLost) {
    // Rounds of a few fences; both threads start each round together (a two-sided barrier on
    // atomics), so adds and signals of the same fence really overlap.
    constexpr int kRounds = 1000, kBatch = 4, N = kRounds * kBatch;
    std::vector<dma_fence*> fences;
    for (int i = 0; i < N; i++)
        fences.push_back(mock_fence());
    std::vector<RaceCb> cbs(N);
    std::vector<int> ret(N);
    std::atomic<int> main_round{-1}, signal_round{-1};
    Task* signaller = kthread_run(
        [&] {
            for (int r = 0; r < kRounds; r++) {
                while (main_round.load() < r)
                    cond_resched();
                for (int i = r * kBatch; i < (r + 1) * kBatch; i++)
                    dma_fence_signal(fences[i]);
                signal_round.store(r);
            }
            return 0;
        },
        "signaller");
    for (int r = 0; r < kRounds; r++) {
        while (signal_round.load() < r - 1)
            cond_resched();
        main_round.store(r);
        for (int i = r * kBatch; i < (r + 1) * kBatch; i++)
            ret[i] = dma_fence_add_callback(fences[i], &cbs[i].cb, RaceCb::func);
    }
    kthread_stop(signaller);
    int added = 0, refused = 0;
    for (int i = 0; i < N; i++) {
        ASSERT_TRUE(dma_fence_is_signaled(fences[i]));
        if (ret[i] == 0) {
            added++;
            EXPECT_EQ(cbs[i].runs.load(), 1) << i;
        } else {
            refused++;
            EXPECT_EQ(ret[i], -ENOENT) << i;
            EXPECT_EQ(cbs[i].runs.load(), 0) << i;
        }
        EXPECT_FALSE(dma_fence_cb_pending(&cbs[i].cb));
        dma_fence_put(fences[i]);
    }
    EXPECT_EQ(added + refused, N);
    RecordProperty("added", added);
    RecordProperty("refused", refused);
}

TEST_F(FenceReal, RemoveCallbackRacingSignal) {
    constexpr int kRounds = 1000, kBatch = 4, N = kRounds * kBatch;
    std::vector<dma_fence*> fences;
    std::vector<RaceCb> cbs(N);
    for (int i = 0; i < N; i++) {
        fences.push_back(mock_fence());
        ASSERT_EQ(dma_fence_add_callback(fences[i], &cbs[i].cb, RaceCb::func), 0);
    }
    std::vector<char> removed(N);
    std::atomic<int> main_round{-1}, signal_round{-1};
    Task* signaller = kthread_run(
        [&] {
            for (int r = 0; r < kRounds; r++) {
                while (main_round.load() < r)
                    cond_resched();
                for (int i = r * kBatch; i < (r + 1) * kBatch; i++)
                    dma_fence_signal(fences[i]);
                signal_round.store(r);
            }
            return 0;
        },
        "signaller");
    for (int r = 0; r < kRounds; r++) {
        while (signal_round.load() < r - 1)
            cond_resched();
        main_round.store(r);
        for (int i = r * kBatch; i < (r + 1) * kBatch; i++)
            removed[i] = dma_fence_remove_callback(fences[i], &cbs[i].cb);
    }
    kthread_stop(signaller);
    int n_removed = 0;
    for (int i = 0; i < N; i++) {
        // Exactly one of: removed before the signal, or run by it.
        EXPECT_EQ(cbs[i].runs.load(), removed[i] ? 0 : 1) << i;
        n_removed += removed[i];
        dma_fence_put(fences[i]);
    }
    RecordProperty("removed", n_removed);
}

TEST_F(FenceReal, WaitWokenBySignalFromAnotherThread) {
    constexpr int N = 200;
    std::vector<dma_fence*> fences;
    for (int i = 0; i < N; i++)
        fences.push_back(mock_fence());
    Task* signaller = kthread_run(
        [&] {
            for (dma_fence* f : fences) {
                udelay(20);
                dma_fence_signal(f);
            }
            return 0;
        },
        "signaller");
    for (dma_fence* f : fences)
        EXPECT_GT(dma_fence_wait_timeout(f, false, msecs_to_jiffies(10000)), 0);
    kthread_stop(signaller);
    for (dma_fence* f : fences)
        dma_fence_put(f);
}

TEST_F(FenceReal, ChainTailWaiterAcrossThreads) {
    constexpr int N = 512;
    std::vector<dma_fence*> fences;
    dma_fence* tail = nullptr;
    for (int i = 0; i < N; i++) {
        fences.push_back(mock_fence());
        dma_fence_chain* c = dma_fence_chain_alloc();
        dma_fence_chain_init(c, tail, dma_fence_get(fences[i]), i + 1);
        tail = &c->base;
    }
    Task* signaller = kthread_run(
        [&] {
            for (int i = N; i--;)
                dma_fence_signal(fences[i]);
            return 0;
        },
        "signaller");
    EXPECT_EQ(dma_fence_wait(tail, false), 0);
    kthread_stop(signaller);
    for (dma_fence* f : fences)
        dma_fence_put(f);
    dma_fence_put(tail);
    advance_until_idle();
}

// Every link enabled, fences signalled backwards by two threads at once: each thread runs the
// re-arms its own signals raised (irq_work is per task), and links complete on either thread.
TEST_F(FenceReal, ChainEveryLinkEnabledTwoSignallers) {
    constexpr int N = 1024;
    std::vector<dma_fence*> fences, chains;
    dma_fence* tail = nullptr;
    for (int i = 0; i < N; i++) {
        fences.push_back(mock_fence());
        dma_fence_chain* c = dma_fence_chain_alloc();
        dma_fence_chain_init(c, dma_fence_get(tail), dma_fence_get(fences[i]), i + 1);
        tail = &c->base;
        chains.push_back(tail);
        dma_fence_enable_sw_signaling(tail);
    }
    auto signal_from = [&](int parity) {
        return kthread_run(
            [&fences, parity] {
                for (int i = N; i--;)
                    if (i % 2 == parity)
                        dma_fence_signal(fences[i]);
                return 0;
            },
            "signaller");
    };
    Task* a = signal_from(0);
    Task* b = signal_from(1);
    for (dma_fence* c : chains)
        EXPECT_EQ(dma_fence_wait(c, false), 0);
    kthread_stop(a);
    kthread_stop(b);
    for (dma_fence* f : fences)
        dma_fence_put(f);
    for (dma_fence* c : chains)
        dma_fence_put(c);
    advance_until_idle();
}

TEST_F(FenceReal, UnlockedResvReadersWhileWriterAddsAndReallocates) {
    dma_resv obj;
    std::atomic<bool> stop{false};
    std::atomic<long> seen{0};
    Task* reader = kthread_run(
        [&] {
            while (!stop.load()) {
                unsigned n;
                dma_fence** fences;
                if (dma_resv_get_fences(&obj, DMA_RESV_USAGE_BOOKKEEP, &n, &fences) == 0) {
                    seen.fetch_add(n);
                    for (unsigned i = 0; i < n; i++)
                        dma_fence_put(fences[i]);
                    kfree(fences);
                }
                dma_resv_test_signaled(&obj, DMA_RESV_USAGE_READ);
            }
            return 0;
        },
        "reader");
    std::vector<dma_fence*> mine;
    for (int i = 0; i < 300; i++) {
        dma_fence* f = mock_fence(dma_fence_context_alloc(1), 1);
        ASSERT_EQ(dma_resv_lock(&obj, nullptr), 0);
        ASSERT_EQ(dma_resv_reserve_fences(&obj, 1), 0);
        dma_resv_add_fence(&obj, f, i % 2 ? DMA_RESV_USAGE_READ : DMA_RESV_USAGE_BOOKKEEP);
        dma_resv_unlock(&obj);
        if (i % 3 == 0)
            dma_fence_signal(f);
        mine.push_back(f);
    }
    stop.store(true);
    kthread_stop(reader);
    for (dma_fence* f : mine) {
        dma_fence_signal(f);
        dma_fence_put(f);
    }
    dma_resv_fini(&obj);
}
