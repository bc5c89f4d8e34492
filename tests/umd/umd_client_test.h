// The fixture of the umd client tests: the panthor fixture's device and file, with a
// umd::PanthorClient opened on it through the in-process backend. Teardown closes the client
// (its mappings go, as at process exit) and checks that no mapping was left behind.
//
// DOC: Real mode. With UPANTHOR_UMD_BACKEND=real the same tests run as a real process does:
// the client is opened on a RealFdBackend over /dev/dri/renderD128, which the preload library
// (LD_PRELOAD=libupanthor_preload.so, docs/preload.md) serves with its own driver on the
// real-thread runtime. The fixture then probes no driver of its own and its runtime is a
// real-thread one too (its clock, advance() and run_until() are wall time, as the driver's are);
// `file` stays null. What a process cannot see of the kernel is either read the way a process
// reads it (fence status from a sync_file's SYNC_IOC_FILE_INFO, fdinfo from /proc/self/fdinfo,
// a fence held past the file as a sync_file), or, where no such route exists, the check is
// skipped in that mode only: the count of live mappings, runtime PM state (wait_autosuspend() is
// true when the node shows none). A test that needs a route the preload does not serve yet is
// skipped with the reason (real_mode_requires()).
#pragma once
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "drm/drm_mmap.h"
#include "host/drm_file_backend.h"
#include "kernel_shim/time.h"
#include "tests/panthor/panthor_test.h"
#include "uapi/drm/drm.h"
#include "uapi/linux/sync_file.h"
#include "umd/panthor_client.h"
#include "umd/real_fd_backend.h"

namespace umd::testing {

// UPANTHOR_UMD_BACKEND=real: the tests talk to /dev/dri/renderD128 (see above).
inline bool real_backend_mode() {
    const char* e = std::getenv("UPANTHOR_UMD_BACKEND");
    return e && std::strcmp(e, "real") == 0;
}

class UmdClientTest : public panthor::testing::PanthorTest {
protected:
    // What a real-mode test may need beyond plain ioctls (real_mode_requires()).
    enum RealNeed : unsigned {
        kFenceErrors = 1u << 0,  // a fence's error status: SYNC_IOC_FILE_INFO on a sync_file export
        kFdinfo = 1u << 1,       // DRM fdinfo through /proc/self/fdinfo/<fd>
    };

    kshim::RuntimeOptions runtime_options() const override {
        kshim::RuntimeOptions o = PanthorTest::runtime_options();
        if (real_mode()) {
            o.mode = kshim::Mode::Real;
            o.preempt_probability = 0.0;
        }
        return o;
    }
    bool probe_in_setup() const override { return !real_mode(); }

    void SetUp() override {
        PanthorTest::SetUp();
        if (HasFatalFailure())
            return;
        if (real_mode()) {
            Result<std::unique_ptr<RealFdBackend>> be = RealFdBackend::open();
            ASSERT_TRUE(be.ok()) << "open(" << RealFdBackend::kRenderNode << "): " << std::strerror(-be.error())
                                 << " (real mode runs under LD_PRELOAD=libupanthor_preload.so)";
            real_backend_ = std::move(*be);
        } else {
            mmaps_before_ = drm::drm_mmap_live();
            backend_ = std::make_unique<DrmFileBackend>(file);
        }
        Result<std::unique_ptr<PanthorClient>> c = PanthorClient::open(backend());
        ASSERT_TRUE(c.ok()) << c.error();
        client_ = std::move(*c);
    }
    void TearDown() override {
        close_client();
        if (!real_mode()) {
            EXPECT_EQ(drm::drm_mmap_live(), mmaps_before_);
        }
        PanthorTest::TearDown();
    }

    static bool real_mode() { return real_backend_mode(); }
    PanthorClient& c() { return *client_; }
    Backend& backend() { return real_backend_ ? static_cast<Backend&>(*real_backend_) : *backend_; }
    // What a process exit does to the client's side: its mappings go, then the fd is closed.
    void close_client() {
        client_.reset();
        backend_.reset();
        real_backend_.reset();
    }

    // Real mode: skips the test (from SetUp) unless the preload serves everything in `needs`.
    // UPANTHOR_UMD_REAL_ALL=1 runs it anyway, to see what the missing route breaks.
    void real_mode_requires(unsigned needs) {
        if (!real_mode() || !client_)
            return;
        if (const char* all = std::getenv("UPANTHOR_UMD_REAL_ALL"); all && std::strcmp(all, "1") == 0)
            return;
        if ((needs & kFenceErrors) && !real_has_fence_errors())
            GTEST_SKIP() << "real mode: the preload does not answer SYNC_IOC_FILE_INFO on a sync_file export";
        if ((needs & kFdinfo) && real_fdinfo_text().find("drm-driver:") == std::string::npos)
            GTEST_SKIP() << "real mode: the preload does not serve DRM fdinfo in /proc/self/fdinfo";
    }

    // ---- real mode: what a process reads of the kernel ----

    // dma_fence_get_status of the fence at (handle, point) as a process sees it: the fence in a
    // sync_file (a timeline point through a transfer to a scratch binary syncobj first), asked with
    // SYNC_IOC_FILE_INFO; without that ioctl, a zero-timeout wait (1 signalled, 0 pending: no
    // error status). Else the lookup's errno, as the kernel's find_fence gives it.
    int real_fence_status(u32 handle, u64 point = 0) {
        if (real_has_fence_errors()) {
            const int fd = real_sync_file(handle, point);
            if (fd < 0)
                return fd;
            const int st = sync_file_status_of(fd);
            (void)backend().close_fd(fd);
            return st;
        }
        Result<u32> w = point ? c().syncobj_timeline_wait({&handle, 1}, {&point, 1}, 0) : c().syncobj_wait(handle, 0);
        return w.ok() ? 1 : w.error() == -ETIME ? 0 : w.error();
    }
    // A sync_file descriptor of the fence at (handle, point) (a timeline point through a scratch
    // binary syncobj), or the errno of the lookup.
    int real_sync_file(u32 handle, u64 point) {
        u32 src = handle, scratch = 0;
        if (point) {
            Result<u32> t = c().syncobj_create();
            if (!t)
                return t.error();
            scratch = src = *t;
            if (Status s = c().syncobj_transfer(scratch, 0, handle, point); !s) {
                (void)c().syncobj_destroy(scratch);
                return s.error();
            }
        }
        Result<int> fd = c().syncobj_handle_to_fd(src, drm::uapi::DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE);
        if (scratch)
            (void)c().syncobj_destroy(scratch);
        return fd ? *fd : fd.error();
    }
    // /proc/self/fdinfo/<fd> of the client's descriptor ("" when unreadable).
    std::string real_fdinfo_text() {
        if (!real_backend_)
            return {};
        const std::string path = "/proc/self/fdinfo/" + std::to_string(real_backend_->fd());
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return {};
        std::string text;
        char buf[1024];
        for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;)
            text.append(buf, static_cast<size_t>(n));
        ::close(fd);
        return text;
    }

    // Shadows PanthorTest's: runtime PM is not visible through a render node unless its sysfs
    // power/runtime_status is served; without it the check is skipped (true).
    bool wait_autosuspend() {
        if (!real_mode())
            return PanthorTest::wait_autosuspend();
        const char* status = "/sys/dev/char/226:128/device/power/runtime_status";
        if (::access(status, R_OK) != 0)
            return true;
        return run_until(
            [&] {
                char buf[32] = {};
                const int fd = ::open(status, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                    return false;
                const ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
                ::close(fd);
                return n > 0 && std::strncmp(buf, "suspended", 9) == 0;
            },
            kshim::ms_to_ktime(1000));
    }

    std::unique_ptr<DrmFileBackend> backend_;      // in-process mode
    std::unique_ptr<RealFdBackend> real_backend_;  // real mode
    std::unique_ptr<PanthorClient> client_;
    long mmaps_before_ = 0;

private:
    // SYNC_IOC_FILE_INFO's status of a sync_file descriptor, or -errno.
    static int sync_file_status_of(int fd) {
        drm::uapi::sync_file_info info{};
        return ::ioctl(fd, drm::uapi::SYNC_IOC_FILE_INFO, &info) ? -errno : info.status;
    }
    // Whether the preload answers SYNC_IOC_FILE_INFO (asked once, on a signalled syncobj).
    bool real_has_fence_errors() {
        if (fence_errors_ < 0) {
            fence_errors_ = 0;
            if (Result<u32> h = c().syncobj_create(drm::uapi::DRM_SYNCOBJ_CREATE_SIGNALED)) {
                if (const int fd = real_sync_file(*h, 0); fd >= 0) {
                    fence_errors_ = sync_file_status_of(fd) == 1;
                    (void)backend().close_fd(fd);
                }
                (void)c().syncobj_destroy(*h);
            }
        }
        return fence_errors_ == 1;
    }
    int fence_errors_ = -1;
};

}  // namespace umd::testing
