// devcoredump: one pending dump per failing device, offset reads, the write that frees it, the
// 5-minute expiry on virtual time, the uevent listener, and nothing left after dev_coredump_put.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "kernel_shim/devcoredump.h"
#include "kernel_shim/kthread.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/time.h"
#include "tests/support/kernel_test.h"

using namespace kshim;

namespace {

char* kstrdup_text(const std::string& s, gfp_t gfp = GFP_KERNEL) {
    char* p = static_cast<char*>(kmalloc(s.size(), gfp));
    if (p)
        std::memcpy(p, s.data(), s.size());
    return p;
}

std::string read_all(Device* dev) {
    std::string out;
    char buf[3];  // small on purpose: offsets must add up
    for (loff_t off = 0;;) {
        const ssize_t n = devcd_read(dev, buf, off, sizeof(buf));
        if (n <= 0)
            break;
        out.append(buf, static_cast<size_t>(n));
        off += n;
    }
    return out;
}

int custom_frees = 0;
ssize_t upper_read(char* buffer, loff_t offset, size_t count, void* data, size_t datalen) {
    size_t n = 0;
    for (; n < count && static_cast<size_t>(offset) + n < datalen; n++)
        buffer[n] = static_cast<char>(std::toupper(static_cast<const char*>(data)[offset + static_cast<loff_t>(n)]));
    return static_cast<ssize_t>(n);
}
void counting_free(void* data) {
    custom_frees++;
    kfree(data);
}

}  // namespace

class Devcoredump : public kshim::testing::KernelTest {
protected:
    void TearDown() override {
        devcoredump_set_listener(nullptr);
        devcoredump_set_disabled(false);
        dev_coredump_put(&dev_);
        dev_coredump_put(&other_);
        EXPECT_EQ(devcoredump_live_count(), 0u);
        KernelTest::TearDown();
    }
    Device dev_{"devcd.test"};
    Device other_{"devcd.other"};
};

TEST_F(Devcoredump, ReadsAtOffsetsThenClearFreesIt) {
    EXPECT_FALSE(dev_coredump_pending(&dev_));
    EXPECT_EQ(devcd_size(&dev_), -ENOENT);
    dev_coredumpv(&dev_, kstrdup_text("hello devcoredump"), 17, GFP_KERNEL);
    ASSERT_TRUE(dev_coredump_pending(&dev_));
    EXPECT_EQ(devcd_size(&dev_), 17);
    EXPECT_EQ(read_all(&dev_), "hello devcoredump");
    char buf[8];
    EXPECT_EQ(devcd_read(&dev_, buf, 17, sizeof(buf)), 0);
    EXPECT_EQ(devcd_read(&dev_, buf, 100, sizeof(buf)), 0);
    EXPECT_EQ(devcd_read(&dev_, buf, -1, sizeof(buf)), -EINVAL);
    ASSERT_EQ(devcd_read(&dev_, buf, 6, 4), 4);
    EXPECT_EQ(std::string(buf, 4), "devc");
    EXPECT_FALSE(dev_coredump_pending(&other_));

    EXPECT_EQ(dev_coredump_clear(&dev_), 0);
    EXPECT_FALSE(dev_coredump_pending(&dev_));
    EXPECT_EQ(devcd_read(&dev_, buf, 0, sizeof(buf)), -ENOENT);
    EXPECT_EQ(dev_coredump_clear(&dev_), -ENOENT);
    advance_until_idle();
    EXPECT_EQ(devcoredump_live_count(), 0u);
}

TEST_F(Devcoredump, SecondDumpWhilePendingIsDroppedAndFreed) {
    dev_coredumpv(&dev_, kstrdup_text("first"), 5, GFP_KERNEL);
    dev_coredumpv(&dev_, kstrdup_text("second"), 6, GFP_KERNEL);  // freed at once (leak check)
    EXPECT_EQ(read_all(&dev_), "first");
    EXPECT_EQ(devcoredump_live_count(), 1u);
    // Another device is independent.
    dev_coredumpv(&other_, kstrdup_text("other"), 5, GFP_KERNEL);
    EXPECT_EQ(read_all(&other_), "other");
    // Once cleared, the next dump is taken.
    ASSERT_EQ(dev_coredump_clear(&dev_), 0);
    dev_coredumpv(&dev_, kstrdup_text("third"), 5, GFP_KERNEL);
    EXPECT_EQ(read_all(&dev_), "third");
    advance_until_idle(NSEC_PER_SEC);
}

TEST_F(Devcoredump, ExpiresAfterFiveMinutesOfVirtualTime) {
    dev_coredumpv(&dev_, kstrdup_text("old"), 3, GFP_KERNEL);
    const unsigned long start = jiffies;
    advance(299 * NSEC_PER_SEC);
    EXPECT_TRUE(dev_coredump_pending(&dev_));
    advance(2 * NSEC_PER_SEC);
    EXPECT_FALSE(dev_coredump_pending(&dev_));
    EXPECT_GE(jiffies - start, DEVCD_TIMEOUT);
    advance_until_idle(NSEC_PER_SEC);
    EXPECT_EQ(devcoredump_live_count(), 0u);
    // The device may dump again.
    dev_coredumpv(&dev_, kstrdup_text("new"), 3, GFP_KERNEL);
    EXPECT_EQ(read_all(&dev_), "new");
}

TEST_F(Devcoredump, CustomTimeoutReaderAndDestructor) {
    custom_frees = 0;
    dev_coredumpm_timeout(&dev_, kstrdup_text("abc"), 3, GFP_KERNEL, upper_read, counting_free, HZ);
    EXPECT_EQ(read_all(&dev_), "ABC");
    advance(2 * NSEC_PER_SEC);
    advance_until_idle(NSEC_PER_SEC);
    EXPECT_FALSE(dev_coredump_pending(&dev_));
    EXPECT_EQ(custom_frees, 1);
    // A dropped dump goes through the driver's destructor too.
    dev_coredumpm(&dev_, kstrdup_text("x"), 1, GFP_KERNEL, upper_read, counting_free);
    dev_coredumpm(&dev_, kstrdup_text("y"), 1, GFP_KERNEL, upper_read, counting_free);
    EXPECT_EQ(custom_frees, 2);
    dev_coredump_put(&dev_);
    EXPECT_EQ(custom_frees, 3);
}

TEST_F(Devcoredump, ListenerIsToldFromAWorkItemAndMayReadAndClear) {
    std::vector<std::string> seen;
    devcoredump_set_listener([&](Device* dev) {
        EXPECT_EQ(dev, &dev_);
        seen.push_back(read_all(dev));
        EXPECT_EQ(dev_coredump_clear(dev), 0);
    });
    // Taken under a spinlock with GFP_ATOMIC: the listener must not run here.
    SpinLock lock{"devcd.test.lock"};
    {
        SpinGuard g(lock);
        dev_coredumpv(&dev_, kstrdup_text("one", GFP_ATOMIC), 3, GFP_ATOMIC);
    }
    EXPECT_TRUE(seen.empty());
    advance_until_idle(NSEC_PER_SEC);
    ASSERT_EQ(seen, std::vector<std::string>{"one"});
    EXPECT_FALSE(dev_coredump_pending(&dev_));
    EXPECT_EQ(devcoredump_live_count(), 0u);
    dev_coredumpv(&dev_, kstrdup_text("two"), 3, GFP_KERNEL);
    advance_until_idle(NSEC_PER_SEC);
    EXPECT_EQ(seen, (std::vector<std::string>{"one", "two"}));
}

TEST_F(Devcoredump, PutAtDeviceRemovalFreesPendingAndClearedDumps) {
    dev_coredumpv(&dev_, kstrdup_text("pending"), 7, GFP_KERNEL);
    dev_coredumpv(&other_, kstrdup_text("cleared"), 7, GFP_KERNEL);
    ASSERT_EQ(dev_coredump_clear(&other_), 0);  // its release work has not run yet
    EXPECT_EQ(devcoredump_live_count(), 2u);
    dev_coredump_put(&dev_);
    dev_coredump_put(&other_);
    EXPECT_EQ(devcoredump_live_count(), 0u);
    EXPECT_FALSE(dev_coredump_pending(&dev_));
    // The timer went with it: nothing fires later.
    advance(400 * NSEC_PER_SEC);
    EXPECT_EQ(devcoredump_live_count(), 0u);
}

TEST_F(Devcoredump, DisabledDropsDumps) {
    devcoredump_set_disabled(true);
    dev_coredumpv(&dev_, kstrdup_text("dropped"), 7, GFP_KERNEL);
    EXPECT_FALSE(dev_coredump_pending(&dev_));
    devcoredump_set_disabled(false);
    dev_coredumpv(&dev_, kstrdup_text("taken"), 5, GFP_KERNEL);
    EXPECT_TRUE(dev_coredump_pending(&dev_));
}

// Real threads (TSan): kthreads dump for two devices while the listener, in workqueue workers,
// reads and clears; every dump taken is seen whole exactly once, the rest are dropped and freed.
class DevcoredumpReal : public kshim::testing::RealKernelTest {};

TEST_F(DevcoredumpReal, ConcurrentDumpsAndListener) {
    Device devs[2] = {Device{"devcd.real0"}, Device{"devcd.real1"}};
    std::atomic<int> seen{0};
    std::atomic<bool> garbled{false};
    devcoredump_set_listener([&](Device* dev) {
        const std::string d = read_all(dev);
        if (d.empty())
            return;
        if (d != std::string(d.size(), d[0]))
            garbled = true;
        if (dev_coredump_clear(dev) == 0)
            seen++;
    });
    std::vector<Task*> ts;
    for (int i = 0; i < 4; i++)
        ts.push_back(kthread_run(
            [&, i] {
                for (int k = 0; k < 200; k++) {
                    const std::string text(16 + k % 7, static_cast<char>('a' + i));
                    dev_coredumpv(&devs[(i + k) % 2], kstrdup_text(text), text.size(), GFP_KERNEL);
                }
                return 0;
            },
            "dumper"));
    for (Task* t : ts)
        kthread_stop(t);
    EXPECT_TRUE(run_until([&] { return !dev_coredump_pending(&devs[0]) && !dev_coredump_pending(&devs[1]); },
                          5 * NSEC_PER_SEC));
    devcoredump_set_listener(nullptr);
    dev_coredump_put(&devs[0]);
    dev_coredump_put(&devs[1]);
    EXPECT_GE(seen.load(), 2);
    EXPECT_FALSE(garbled.load());
    EXPECT_EQ(devcoredump_live_count(), 0u);
}
