// Test-managed resources (kernel_shim/kunit/resource.h, lib/kunit/resource.c) and how the
// fixture releases them: newest first, after a failed ASSERT_ too, before the leak check.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/kunit/resource.h"
#include "tests/support/kernel_test.h"

namespace {
using namespace kshim;

// An action that appends its tag to a log.
struct Tagged {
    std::vector<int>* log;
    int tag;
};
void log_tag(void* ctx) {
    auto* t = static_cast<Tagged*>(ctx);
    t->log->push_back(t->tag);
}

class Kunit : public kshim::testing::KernelTest {};

TEST_F(Kunit, ActionsRunNewestFirst) {
    std::vector<int> log;
    Tagged t[3] = {{&log, 1}, {&log, 2}, {&log, 3}};
    for (auto& x : t)
        ASSERT_EQ(kunit_add_action(test, log_tag, &x), 0);
    EXPECT_TRUE(log.empty());
    EXPECT_EQ(kunit_resource_count(test), 3u);
    kunit_cleanup(test);
    EXPECT_EQ(log, (std::vector<int>{3, 2, 1}));
    EXPECT_EQ(kunit_resource_count(test), 0u);
}

// What an action registers while the list is being released runs too, next.
TEST_F(Kunit, ActionRegisteredDuringCleanupRunsNext) {
    static std::vector<int> log;
    log.clear();
    ASSERT_EQ(kunit_add_action(
                  test, [](void*) { log.push_back(1); }, nullptr),
              0);
    ASSERT_EQ(kunit_add_action(
                  test,
                  [](void* t) {
                      log.push_back(2);
                      kunit_add_action(
                          static_cast<kunit*>(t), [](void*) { log.push_back(3); }, nullptr);
                  },
                  test),
              0);
    kunit_cleanup(test);
    EXPECT_EQ(log, (std::vector<int>{2, 3, 1}));
}

// Removal and release take the most recent registration of the pair only (its position shows
// in the order of the rest); a pair that is not registered is ignored.
TEST_F(Kunit, RemoveAndReleaseTakeTheNewestMatchOnly) {
    std::vector<int> log;
    Tagged a{&log, 1}, x{&log, 2}, b{&log, 3}, y{&log, 4};
    ASSERT_EQ(kunit_add_action(test, log_tag, &a), 0);
    ASSERT_EQ(kunit_add_action(test, log_tag, &x), 0);
    ASSERT_EQ(kunit_add_action(test, log_tag, &a), 0);
    kunit_release_action(test, log_tag, &a);  // the second a runs now, once
    EXPECT_EQ(log, (std::vector<int>{1}));

    ASSERT_EQ(kunit_add_action(test, log_tag, &b), 0);
    ASSERT_EQ(kunit_add_action(test, log_tag, &y), 0);
    ASSERT_EQ(kunit_add_action(test, log_tag, &b), 0);
    kunit_remove_action(test, log_tag, &b);  // the second b never runs
    EXPECT_EQ(kunit_resource_count(test), 4u);

    Tagged z{&log, 5};
    kunit_remove_action(test, log_tag, &z);  // not registered: nothing
    kunit_release_action(test, log_tag, &z);
    EXPECT_EQ(kunit_resource_count(test), 4u);
    EXPECT_EQ(log, (std::vector<int>{1}));

    kunit_cleanup(test);  // a x b y remain, released newest first
    EXPECT_EQ(log, (std::vector<int>{1, 4, 3, 2, 1}));
}

// When the list node cannot be allocated, _or_reset runs the action at once and returns the
// error, and the action is not run again at the end; plain kunit_add_action does not run it.
TEST_F(Kunit, OrResetRunsTheActionAtOnceWhenRegisteringFails) {
    std::vector<int> log;
    Tagged a{&log, 1}, b{&log, 2};
    FaultPlan plan;
    plan.fail_nth = 1;
    fault_inject_arm(plan);
    EXPECT_EQ(kunit_add_action_or_reset(test, log_tag, &a), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(log, (std::vector<int>{1}));
    fault_inject_arm(plan);
    EXPECT_EQ(kunit_add_action(test, log_tag, &b), -ENOMEM);
    fault_inject_disarm();
    EXPECT_EQ(log, (std::vector<int>{1}));
    EXPECT_EQ(kunit_resource_count(test), 0u);
    EXPECT_EQ(kunit_add_action_or_reset(test, log_tag, &b), 0);  // and without a failure, later
    EXPECT_EQ(log, (std::vector<int>{1}));
    kunit_cleanup(test);
    EXPECT_EQ(log, (std::vector<int>{1, 2}));
}

TEST_F(Kunit, KzallocIsZeroedAndFreedAtTheEndOrByKfree) {
    const long before = mem_counters().kmalloc_live;
    auto* p = static_cast<unsigned char*>(kunit_kzalloc(test, 100, GFP_KERNEL));
    ASSERT_NE(p, nullptr);
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(p[i], 0) << i;
    auto* q = static_cast<int*>(kunit_kcalloc(test, 4, sizeof(int), GFP_KERNEL));
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(q[3], 0);
    EXPECT_NE(kunit_kmalloc(test, 8, GFP_KERNEL), nullptr);
    EXPECT_EQ(kunit_kmalloc_array(test, SIZE_MAX / 2, 4, GFP_KERNEL), nullptr);  // overflows
    EXPECT_GT(mem_counters().kmalloc_live, before);
    kunit_kfree(test, p);
    kunit_kfree(test, nullptr);
    EXPECT_EQ(kunit_resource_count(test), 2u);
    kunit_cleanup(test);
    EXPECT_EQ(mem_counters().kmalloc_live, before);
}

// The data allocates, the list node does not: nothing leaks and the caller sees nullptr.
TEST_F(Kunit, KzallocFailsCleanlyWhenTheNodeCannotBeAllocated) {
    const long before = mem_counters().kmalloc_live;
    FaultPlan plan;
    plan.fail_nth = 2;
    fault_inject_arm(plan);
    EXPECT_EQ(kunit_kzalloc(test, 64, GFP_KERNEL), nullptr);
    fault_inject_disarm();
    EXPECT_EQ(mem_counters().kmalloc_live, before);
    EXPECT_EQ(kunit_resource_count(test), 0u);
}

TEST_F(Kunit, TypedObjectsAreDestroyed) {
    static int destroyed;
    destroyed = 0;
    struct Obj {
        ~Obj() { destroyed++; }
    };
    Obj* a = kunit_knew<Obj>(test, GFP_KERNEL);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(kunit_knew<Obj>(test, GFP_KERNEL), nullptr);
    kunit_kdelete(test, a);
    EXPECT_EQ(destroyed, 1);
    kunit_cleanup(test);
    EXPECT_EQ(destroyed, 2);
}

TEST_F(Kunit, TheFixtureTestIsCurrent) {
    ASSERT_NE(test, nullptr);
    EXPECT_EQ(kunit_get_current_test(), test);
}

// The fixture's end: the test's memory and actions are released by TearDown.
class KunitTeardown : public kshim::testing::KernelTest {
protected:
    void TearDown() override {
        KernelTest::TearDown();  // fails this test if the memory below were reported leaked
        EXPECT_EQ(ran_, 1);
        EXPECT_EQ(kunit_get_current_test(), nullptr);
    }
    int ran_ = 0;
};

TEST_F(KunitTeardown, ReleasesTheTestsResources) {
    ASSERT_NE(kunit_kzalloc(test, 256, GFP_KERNEL), nullptr);
    ASSERT_EQ(kunit_add_action(
                  test, [](void* r) { ++*static_cast<int*>(r); }, &ran_),
              0);
}

// A KernelTest run by hand inside an outer test, so its failures can be intercepted and read.
class NestedKernelTest : public kshim::testing::KernelTest {
public:
    template <class Body>
    void run(Body body) {
        SetUp();
        body(test);
        TearDown();
    }
    void TestBody() override {}
};

struct Outcome {
    std::vector<std::string> failures;
    bool mentions(const std::string& s) const {
        for (auto& f : failures)
            if (f.find(s) != std::string::npos)
                return true;
        return false;
    }
};

template <class Body>
Outcome run_nested(Body body) {
    ::testing::TestPartResultArray results;
    {
        ::testing::ScopedFakeTestPartResultReporter reporter(
            ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
        NestedKernelTest t;
        t.run(body);
    }
    Outcome o;
    for (int i = 0; i < results.size(); i++)
        o.failures.push_back(results.GetTestPartResult(i).message());
    return o;
}

// After a failed ASSERT_ returned from the body, the resources are still released (the action
// ran, the memory is not reported as leaked) and the failure is the only one.
TEST(KunitNested, ReleasedAfterAFailedAssertBeforeTheLeakCheck) {
    static int ran;
    ran = 0;
    Outcome o = run_nested([](kunit* test) {
        ASSERT_NE(kunit_kzalloc(test, 128, GFP_KERNEL), nullptr);
        ASSERT_EQ(kunit_add_action(
                      test, [](void*) { ran++; }, nullptr),
                  0);
        ASSERT_TRUE(false) << "deliberate";
        ran = 100;  // not reached
    });
    EXPECT_EQ(ran, 1);
    ASSERT_EQ(o.failures.size(), 1u) << (o.failures.empty() ? "" : o.failures.back());
    EXPECT_TRUE(o.mentions("deliberate"));
}

// Memory that is not test-managed is still a leak.
TEST(KunitNested, OtherAllocationsAreStillLeaks) {
    static void* leaked;
    Outcome o = run_nested([](kunit* test) {
        ASSERT_NE(kunit_kzalloc(test, 128, GFP_KERNEL), nullptr);
        leaked = kzalloc(32, GFP_KERNEL);  // not freed within the nested test
    });
    kfree(leaked);
    ASSERT_EQ(o.failures.size(), 1u);
    EXPECT_TRUE(o.mentions("leaked at the end of the test"));
}

// An action may free what the leak check would otherwise report: it runs before the check.
TEST(KunitNested, AnActionFreesBeforeTheLeakCheck) {
    Outcome o = run_nested([](kunit* test) {
        void* p = kzalloc(32, GFP_KERNEL);
        ASSERT_EQ(kunit_add_action_or_reset(
                      test, [](void* x) { kfree(x); }, p),
                  0);
    });
    EXPECT_TRUE(o.failures.empty()) << o.failures.front();
}

}  // namespace
