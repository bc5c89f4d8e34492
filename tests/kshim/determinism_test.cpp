// Simulated mode: same seed, same interleaving and trace; seeds explore other interleavings.
#include <gtest/gtest.h>

#include <set>

#include "kernel_shim/mutex.h"
#include "kernel_shim/trace.h"
#include "kernel_shim/workqueue.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {
// A deliberately racy read-modify-write: the preemption point between the read and the write
// lets another task's update be lost in some interleavings.
int racy_sample(u64 seed, std::string* trace_out = nullptr) {
    int counter = 0;
    kshim::testing::run_simulated(
        seed,
        [&] {
            if (trace_out)
                trace::set_enabled(true);
            std::vector<Task*> ts;
            for (int i = 0; i < 2; i++)
                ts.push_back(kthread_run(
                    [&] {
                        int v = counter;
                        preempt_point();
                        counter = v + 1;
                        return 0;
                    },
                    "racer"));
            for (Task* t : ts)
                kthread_stop(t);
            if (trace_out)
                *trace_out = trace::to_json();
        },
        0.5);
    return counter;
}
}  // namespace

TEST(Determinism, SameSeedGivesTheSameResultAndTrace) {
    for (u64 seed : {1u, 2u, 3u, 99u}) {
        std::string a, b;
        int ra = racy_sample(seed, &a);
        int rb = racy_sample(seed, &b);
        EXPECT_EQ(ra, rb) << "seed " << seed;
        EXPECT_EQ(a, b) << "seed " << seed;
        EXPECT_NE(a.find("\"racer\""), std::string::npos);
    }
}

TEST(Determinism, ASweepOfSeedsFindsBothOutcomesOfTheRace) {
    std::set<int> outcomes;
    for (u64 seed = 1; seed <= 64 && outcomes.size() < 2; seed++)
        outcomes.insert(racy_sample(seed));
    EXPECT_EQ(outcomes, (std::set<int>{1, 2}));  // the lost update and the correct sum
}

TEST(Determinism, MutexProtectedCounterNeverLosesUpdatesAcrossSeeds) {
    for (u64 seed = 1; seed <= 32; seed++) {
        int counter = 0;
        kshim::testing::run_simulated(
            seed,
            [&] {
                Mutex m;
                std::vector<Task*> ts;
                for (int i = 0; i < 4; i++)
                    ts.push_back(kthread_run(
                        [&] {
                            for (int k = 0; k < 10; k++) {
                                MutexGuard g(m);
                                int v = counter;
                                preempt_point();
                                counter = v + 1;
                            }
                            return 0;
                        },
                        "locked-racer"));
                for (Task* t : ts)
                    kthread_stop(t);
            },
            0.3);
        ASSERT_EQ(counter, 40) << "seed " << seed;
    }
}

// cond_resched: with preemption points on, however unlikely a preemption is, it
// always lets a runnable task in; with them off it never switches, like every preemption point.
TEST(CondResched, YieldsToARunnableTaskWheneverPreemptionPointsAreOn) {
    kshim::testing::run_simulated(
        7,
        [] {
            std::atomic<bool> flag{false};
            Task* t = kthread_run(
                [&] {
                    flag.store(true);
                    return 0;
                },
                "setter");
            // Before: a preemption point taken with probability 1e-12, so this loop never ended.
            for (int rounds = 0; !flag.load() && rounds < 1000; rounds++)
                cond_resched();
            EXPECT_TRUE(flag.load());
            kthread_stop(t);
        },
        1e-12);
}

TEST(CondResched, NeverSwitchesWithPreemptionPointsOff) {
    kshim::testing::run_simulated(
        7,
        [] {
            std::atomic<bool> ran{false};
            Task* t = kthread_run(
                [&] {
                    ran.store(true);
                    return 0;
                },
                "other");
            for (int i = 0; i < 100; i++)
                cond_resched();
            EXPECT_FALSE(ran.load());
            kthread_stop(t);
            EXPECT_TRUE(ran.load());
        },
        0.0);
}
