// Small kernel helpers: xarray/idr, kref, read_poll_timeout, logging, the trace file.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "kernel_shim/iopoll.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/log.h"
#include "kernel_shim/trace.h"
#include "kernel_shim/workqueue.h"
#include "kernel_shim/xarray.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

class Misc : public kshim::testing::SweepableKernelTest {};

TEST_F(Misc, XaAllocTakesTheLowestFreeIdInRange) {
    XArray<int> xa(XA_FLAGS_ALLOC1);
    int a, b, c;
    u32 id;
    ASSERT_EQ(xa.alloc(&id, &a, xa_limit_32b, GFP_KERNEL), 0);
    EXPECT_EQ(id, 1u);  // ALLOC1: ids from 1, as GEM handles
    ASSERT_EQ(xa.alloc(&id, &b, xa_limit_32b, GFP_KERNEL), 0);
    EXPECT_EQ(id, 2u);
    EXPECT_EQ(xa.erase(1), &a);
    ASSERT_EQ(xa.alloc(&id, &c, xa_limit_32b, GFP_KERNEL), 0);
    EXPECT_EQ(id, 1u);
    EXPECT_EQ(xa.load(1), &c);
    EXPECT_EQ(xa.load(7), nullptr);
    EXPECT_EQ(xa.alloc(&id, nullptr, xa_limit_32b, GFP_KERNEL), -EINVAL);
}

TEST_F(Misc, XaAllocReportsAFullRangeAndInjectedFailure) {
    XArray<int> xa;
    int v;
    u32 id;
    ASSERT_EQ(xa.alloc(&id, &v, XA_LIMIT(5, 6), GFP_KERNEL), 0);
    ASSERT_EQ(xa.alloc(&id, &v, XA_LIMIT(5, 6), GFP_KERNEL), 0);
    EXPECT_EQ(xa.alloc(&id, &v, XA_LIMIT(5, 6), GFP_KERNEL), -EBUSY);
    fault_inject_arm({.fail_nth = 1, .only_cache = "xarray"});
    EXPECT_EQ(xa.alloc(&id, &v, xa_limit_32b, GFP_KERNEL), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(xa.size(), 2u);
}

// Random allocs in random ranges, stores at chosen ids and erases, against a plain set of used
// ids: the lowest free id in the range is what alloc hands out, every time.
TEST_F(Misc, XaAllocMatchesALinearScanUnderRandomUse) {
    XArray<int> xa(XA_FLAGS_ALLOC1);
    std::set<u32> used;
    int v;
    std::mt19937 rng(7);
    for (int step = 0; step < 20000; step++) {
        const u32 op = rng() % 10;
        if (op < 5) {
            const u32 lo = rng() % 4 == 0 ? rng() % 200 : 0, hi = lo + rng() % 300;
            u64 expect = lo == 0 ? 1 : lo;
            while (used.count(static_cast<u32>(expect)))
                expect++;
            u32 id = 0;
            const int ret = xa.alloc(&id, &v, XA_LIMIT(lo, hi), GFP_KERNEL);
            if (expect > hi) {
                ASSERT_EQ(ret, -EBUSY) << "step " << step;
            } else {
                ASSERT_EQ(ret, 0) << "step " << step;
                ASSERT_EQ(id, expect) << "step " << step;
                used.insert(id);
            }
        } else if (op < 6) {
            const u32 id = 1 + rng() % 400;
            const bool had = used.count(id);
            ASSERT_EQ(xa.store(id, &v) != nullptr, had);
            used.insert(id);
        } else if (!used.empty()) {
            auto it = used.begin();
            std::advance(it, rng() % used.size());
            ASSERT_EQ(xa.erase(*it), &v);
            used.erase(it);
        }
    }
    EXPECT_EQ(xa.size(), used.size());
}

TEST_F(Misc, XaAllocCyclicWraps) {
    XArray<int> xa;
    int v;
    u32 id, next = 0;
    EXPECT_EQ(xa.alloc_cyclic(&id, &v, XA_LIMIT(1, 3), &next, GFP_KERNEL), 0);
    EXPECT_EQ(id, 1u);
    EXPECT_EQ(xa.alloc_cyclic(&id, &v, XA_LIMIT(1, 3), &next, GFP_KERNEL), 0);
    EXPECT_EQ(xa.alloc_cyclic(&id, &v, XA_LIMIT(1, 3), &next, GFP_KERNEL), 0);
    EXPECT_EQ(id, 3u);
    xa.erase(2);
    EXPECT_EQ(xa.alloc_cyclic(&id, &v, XA_LIMIT(1, 3), &next, GFP_KERNEL), 1);  // wrapped
    EXPECT_EQ(id, 2u);
}

TEST_F(Misc, IdrAllocReturnsEnospcWhenFull) {
    XArray<int> idr;
    int v;
    EXPECT_EQ(idr_alloc(&idr, &v, 1, 3, GFP_KERNEL), 1);
    EXPECT_EQ(idr_alloc(&idr, &v, 1, 3, GFP_KERNEL), 2);
    EXPECT_EQ(idr_alloc(&idr, &v, 1, 3, GFP_KERNEL), -ENOSPC);
}

TEST_F(Misc, KrefReleasesOnceOnTheLastPut) {
    kref k;
    kref_init(&k);
    int released = 0;
    auto release = [&](kref*) { released++; };
    kref_get(&k);
    EXPECT_EQ(kref_read(&k), 2u);
    EXPECT_EQ(kref_put(&k, release), 0);
    EXPECT_EQ(kref_put(&k, release), 1);
    EXPECT_EQ(released, 1);
    EXPECT_FALSE(kref_get_unless_zero(&k));
}

TEST_F(Misc, ReadPollTimeoutLetsTimePassUntilTheRegisterChanges) {
    u32 reg = 0;
    timer_list t;
    timer_setup(&t, [&](timer_list*) { reg = 0x10; });
    mod_timer(&t, jiffies + 3);  // the "hardware" flips the bit 12 ms from now
    u32 val = 0;
    auto read_reg = [&] { return reg; };
    int ret = read_poll_timeout(read_reg, val, val & 0x10, 100, 100000, false);
    EXPECT_EQ(ret, 0);
    EXPECT_EQ(val, 0x10u);
    EXPECT_GE(ktime_get(), ms_to_ktime(12));
    EXPECT_LT(ktime_get(), ms_to_ktime(13));
}

TEST_F(Misc, ReadPollTimeoutTimesOut) {
    u32 val = 0;
    auto read_zero = [] { return 0u; };
    EXPECT_EQ(read_poll_timeout(read_zero, val, val == 1, 10, 1000, false), -ETIMEDOUT);
    EXPECT_GE(ktime_get(), us_to_ktime(1000));
    preempt_disable();  // the atomic form busy-waits, legal here
    EXPECT_EQ(read_poll_timeout_atomic(read_zero, val, val == 1, 0, 50, false), -ETIMEDOUT);
    preempt_enable();
}

TEST_F(Misc, DeviceMessagesAreCapturedForTests) {
    Device dev{"panthor"};
    dev_info(&dev, "GPU %s id 0x%x\n", "G610", 0xa867);
    dev_dbg(&dev, "only in the capture");
    EXPECT_TRUE(log_contains("GPU G610 id 0xa867"));
    EXPECT_TRUE(log_contains("only in the capture"));
    EXPECT_FALSE(log_contains("only in the capture", LogLevel::Info));
    auto lines = log_lines();
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0].device, "panthor");
    EXPECT_EQ(lines[0].level, LogLevel::Info);
}

// The capture is a ring of the newest 65536 lines, as printk's buffer: a run that logs without end
// does not grow the process without bound.
TEST_F(Misc, TheLogKeepsTheNewestLinesOnly) {
    Device dev{"panthor"};
    for (int i = 0; i < 70000; i++)
        dev_dbg(&dev, "line %d", i);
    const auto lines = log_lines();
    ASSERT_EQ(lines.size(), 65536u);
    EXPECT_EQ(lines.front().text, "line 4464");
    EXPECT_EQ(lines.back().text, "line 69999");
    EXPECT_FALSE(log_contains("line 0"));
}

class TracedRuntime : public kshim::testing::KernelTest {
protected:
    RuntimeOptions runtime_options() const override {
        RuntimeOptions o;
        o.trace_path = path();
        return o;
    }
    static std::string path() { return ::testing::TempDir() + "kshim_trace_test.json"; }
};

TEST_F(TracedRuntime, TraceFileHasATrackPerTaskAndSlicesForWork) {
    std::remove(path().c_str());
    work_struct w;
    INIT_WORK(&w, [](work_struct*) { msleep(2); });
    queue_work(system_wq(), &w);
    advance_until_idle();
    trace::counter("credits", 3);
    std::string json = trace::to_json();
    EXPECT_NE(json.find("\"thread_name\",\"args\":{\"name\":\"kworker/events:0\"}"), std::string::npos) << json;
    EXPECT_NE(json.find("\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":0.000,\"name\":\"[](work_struct*) { msleep(2); }\""),
              std::string::npos)
        << json;
    EXPECT_NE(json.find("\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":2000.000"), std::string::npos) << json;
    EXPECT_NE(json.find("\"ph\":\"C\""), std::string::npos);
}

TEST(TraceFile, IsWrittenWhenTheRuntimeEnds) {
    std::string p = ::testing::TempDir() + "kshim_trace_written.json";
    std::remove(p.c_str());
    {
        RuntimeOptions o;
        o.trace_path = p;
        kshim::testing::TestWorld w(o);
        msleep(1);
    }
    std::ifstream f(p);
    ASSERT_TRUE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_EQ(ss.str().rfind("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", 0), 0u);
    EXPECT_NE(ss.str().find("\"main\""), std::string::npos);
}
