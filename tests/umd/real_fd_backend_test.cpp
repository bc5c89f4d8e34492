// umd::RealFdBackend against the node the preload library serves: errors come back as -errno,
// only its own mappings can be unmapped and the rest go with it, and its clock is the one the
// driver's absolute timeouts are measured on (a mismatch would make a 30 ms wait return at once or
// never). These waits take real time: the driver behind the node runs on the real-thread runtime.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/time.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "uapi/drm/drm.h"
#include "umd/panthor_client.h"
#include "umd/real_fd_backend.h"

namespace umd {
namespace {

constexpr s64 kMs = 1'000'000;
// The kernel turns an absolute timeout into whole jiffies (drm_timeout_abs_to_jiffies: rounded
// down, plus one) and a jiffy timer fires on a tick, so a wait may end up to a jiffy (4 ms at the
// shim's HZ of 250) before its deadline; a clock mismatch would be off by the whole uptime.
constexpr s64 kJiffy = 4 * kMs;

// Whether /proc/self/maps has a mapping of the preload's page arena (the memfd BO mappings are
// made from) at `addr`. Asked by content, not by "is anything mapped there": another thread of
// the process may have reused the address range since.
bool maps_bo_pages_at(const void* addr) {
    const auto a = reinterpret_cast<std::uintptr_t>(addr);
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        std::uintptr_t lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2 && lo <= a && a < hi)
            return line.find("memfd:upanthor-phys") != std::string::npos;
    }
    return false;
}

class RealFdBackendTest : public ::testing::Test {
protected:
    void SetUp() override {
        Result<std::unique_ptr<RealFdBackend>> be = RealFdBackend::open();
        ASSERT_TRUE(be.ok()) << "open(" << RealFdBackend::kRenderNode << "): " << std::strerror(-be.error())
                             << " (this test runs under LD_PRELOAD=libupanthor_preload.so)";
        be_ = std::move(*be);
        Result<std::unique_ptr<PanthorClient>> c = PanthorClient::open(*be_);
        ASSERT_TRUE(c.ok()) << c.error();
        client_ = std::move(*c);
    }
    void TearDown() override {
        client_.reset();
        be_.reset();
    }

    std::unique_ptr<RealFdBackend> be_;
    std::unique_ptr<PanthorClient> client_;
};

TEST(RealFdBackendOpen, AMissingNodeIsENOENT) {
    EXPECT_EQ(RealFdBackend::open("/dev/dri/renderD200").error(), -ENOENT);
}

TEST_F(RealFdBackendTest, IoctlAndCloseErrorsAreNegativeErrnos) {
    drm::uapi::drm_syncobj_destroy args{};
    args.handle = 12345;
    EXPECT_EQ(be_->ioctl(drm::uapi::DRM_IOCTL_SYNCOBJ_DESTROY, &args), -EINVAL);
    EXPECT_EQ(be_->close_fd(-1), -EBADF);
}

TEST_F(RealFdBackendTest, OnlyItsOwnMappingsUnmapAndTheRestGoWithIt) {
    Result<Bo> bo = client_->bo_create(0x10000);
    ASSERT_TRUE(bo.ok()) << bo.error();
    Result<void*> a = client_->bo_mmap(bo->handle, bo->size);
    Result<void*> b = client_->bo_mmap(bo->handle, bo->size);
    ASSERT_TRUE(a.ok() && b.ok());
    static_cast<volatile u8*>(*a)[0] = 0x5A;
    EXPECT_EQ(static_cast<volatile u8*>(*b)[0], 0x5A);                       // one BO, two views of the same pages
    EXPECT_EQ(be_->munmap(static_cast<u8*>(*a) + 0x1000, 0x1000), -EINVAL);  // part of a mapping
    EXPECT_EQ(be_->munmap(*a, bo->size), 0);
    EXPECT_EQ(be_->munmap(*a, bo->size), -EINVAL);      // gone already
    ASSERT_TRUE(client_->bo_destroy(bo->handle).ok());  // b keeps the pages

    EXPECT_TRUE(maps_bo_pages_at(*b));
    client_.reset();
    be_.reset();
    EXPECT_FALSE(maps_bo_pages_at(*b));  // unmapped with the backend
}

TEST_F(RealFdBackendTest, AWaitTimesOutOnTheBackendsClock) {
    Result<u32> h = client_->syncobj_create();
    ASSERT_TRUE(h.ok());
    const s64 t0 = be_->monotonic_ns();
    EXPECT_EQ(client_->syncobj_wait(*h, t0 + 30 * kMs, drm::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT).error(),
              -ETIME);
    const s64 waited = be_->monotonic_ns() - t0;
    EXPECT_GE(waited, 30 * kMs - kJiffy);
    EXPECT_LT(waited, 5000 * kMs);
    EXPECT_TRUE(client_->syncobj_destroy(*h).ok());
}

void on_alarm(int) {}

// A signal during a wait is not the wait's answer: the ioctl is restarted with the same absolute
// deadline (as drmIoctl does), so the wait still ends at its deadline.
TEST_F(RealFdBackendTest, ASignalDuringAWaitRestartsItWithTheSameDeadline) {
    struct sigaction sa {
    }, old{};
    sa.sa_handler = on_alarm;  // no SA_RESTART: the ioctl sees EINTR
    sigemptyset(&sa.sa_mask);
    ASSERT_EQ(sigaction(SIGALRM, &sa, &old), 0);
    Result<u32> h = client_->syncobj_create();
    ASSERT_TRUE(h.ok());
    itimerval it{};
    it.it_value.tv_usec = 10'000;  // 10 ms into the 60 ms wait
    ASSERT_EQ(setitimer(ITIMER_REAL, &it, nullptr), 0);
    const s64 t0 = be_->monotonic_ns();
    EXPECT_EQ(client_->syncobj_wait(*h, t0 + 60 * kMs, drm::uapi::DRM_SYNCOBJ_WAIT_FLAGS_WAIT_FOR_SUBMIT).error(),
              -ETIME);
    const s64 waited = be_->monotonic_ns() - t0;
    EXPECT_GE(waited, 60 * kMs - kJiffy);
    EXPECT_LT(waited, 5000 * kMs);
    it = {};
    setitimer(ITIMER_REAL, &it, nullptr);
    sigaction(SIGALRM, &old, nullptr);
    EXPECT_TRUE(client_->syncobj_destroy(*h).ok());
}

}  // namespace
}  // namespace umd
