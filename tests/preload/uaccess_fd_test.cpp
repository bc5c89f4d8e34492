// The kernel-side pieces the preload library plugs in (label preload): user copies checked against
// the process's real mappings (drm/uaccess.h, UaccessMode::FaultFixup and ProcessVm), and the DRM
// core's fd table numbering exports with real descriptors (drm/drm_file.h, DrmFdOps).
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include "drm/drm_file.h"
#include "drm/uaccess.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/dma-buf/sync_file.h"
#include "kernel_shim/fs/fdtable.h"
#include "tests/support/kernel_test.h"

namespace {

using drm::UaccessMode;
using drm::user_ptr;

class UaccessProcess : public kshim::testing::KernelTest, public ::testing::WithParamInterface<UaccessMode> {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        drm::uaccess_set_mode(GetParam());
    }
    void TearDown() override {
        drm::uaccess_set_mode(UaccessMode::Registry);
        KernelTest::TearDown();
    }
};

TEST_P(UaccessProcess, CopiesFromAndToMappedMemoryWithoutRegistering) {
    char src[64], dst[64] = {};
    for (int i = 0; i < 64; i++)
        src[i] = static_cast<char>(i * 3);
    EXPECT_EQ(drm::copy_from_user(dst, user_ptr(src), sizeof(src)), 0u);
    EXPECT_EQ(std::memcmp(src, dst, sizeof(src)), 0);
    char out[13] = {};
    EXPECT_EQ(drm::copy_to_user(user_ptr(out) + 1, "hello, world", 11), 0u);  // unaligned
    EXPECT_STREQ(out + 1, "hello, worl");
    EXPECT_TRUE(drm::uaccess_ok(user_ptr(src), sizeof(src)));
}

TEST_P(UaccessProcess, BadPointersFaultInsteadOfCrashing) {
    char buf[64];
    EXPECT_EQ(drm::copy_from_user(buf, 16, 8), 8u);  // the NULL page
    EXPECT_EQ(drm::copy_from_user(buf, 0, 8), 8u);
    EXPECT_EQ(drm::copy_to_user(~0ull - 4, buf, 8), 8u);  // wraps
    // A page that was mapped and is gone.
    void* gone = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(gone, MAP_FAILED);
    munmap(gone, 4096);
    EXPECT_EQ(drm::copy_from_user(buf, user_ptr(gone), 8), 8u);
    EXPECT_EQ(drm::copy_to_user(user_ptr(gone), buf, 8), 8u);
    // A read-only page takes reads, not writes.
    char* ro = static_cast<char*>(mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(ro, MAP_FAILED);
    EXPECT_EQ(drm::copy_from_user(buf, user_ptr(ro), 64), 0u);
    EXPECT_EQ(drm::copy_to_user(user_ptr(ro), buf, 8), 8u);
    // A copy running off the end of a mapping into a hole.
    char* two = static_cast<char*>(mmap(nullptr, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(two, MAP_FAILED);
    munmap(two + 4096, 4096);
    EXPECT_NE(drm::copy_from_user(buf, user_ptr(two + 4096 - 32), 64), 0u);
    munmap(two, 4096);
    munmap(ro, 4096);
    // Still working afterwards (the fixup left no signal blocked).
    char ok[8] = "abcdefg";
    EXPECT_EQ(drm::copy_from_user(buf, user_ptr(ok), 8), 0u);
    EXPECT_EQ(drm::copy_from_user(buf, 16, 8), 8u);
}

// `upanthor serve` reaches its clients' memory through a gate it closes before it drops their
// connections (kshim::UaccessGate): from then on a copy faults and nothing lands in the client.
using UaccessGate = kshim::testing::KernelTest;

TEST_F(UaccessGate, AClosedGateFaultsEveryCopyAndCopiesNothing) {
    drm::uaccess_set_mode(UaccessMode::ProcessVm);
    kshim::UaccessGate gate;
    kshim::uaccess_set_target(getpid(), &gate);
    char user[16] = "client memory!", kernel[16] = {};
    EXPECT_EQ(drm::copy_from_user(kernel, user_ptr(user), sizeof(user)), 0u) << "an open gate passes copies";
    EXPECT_STREQ(kernel, "client memory!");
    EXPECT_FALSE(gate.closed());
    gate.close();
    EXPECT_TRUE(gate.closed());
    const char late[16] = "late copy-out";
    EXPECT_EQ(drm::copy_to_user(user_ptr(user), late, sizeof(late)), sizeof(late));
    EXPECT_STREQ(user, "client memory!") << "a copy-out through a closed gate wrote the client";
    std::memset(kernel, 0, sizeof(kernel));
    EXPECT_EQ(drm::copy_from_user(kernel, user_ptr(user), sizeof(user)), sizeof(user));
    EXPECT_EQ(kernel[0], 0);
    // The thread's next client is reached without a gate again.
    kshim::uaccess_set_target(0);
    EXPECT_EQ(drm::copy_to_user(user_ptr(user), late, sizeof(late)), 0u);
    EXPECT_STREQ(user, "late copy-out");
    drm::uaccess_set_mode(UaccessMode::Registry);
}

INSTANTIATE_TEST_SUITE_P(Modes, UaccessProcess, ::testing::Values(UaccessMode::FaultFixup, UaccessMode::ProcessVm),
                         [](const auto& info) {
                             return info.param == UaccessMode::FaultFixup ? "FaultFixup" : "ProcessVm";
                         });

// A stand-in for the preload library's host-backed table: numbers from 1000 made by the backend,
// raw dups (from 2000) found through lookup_miss.
struct FakeFds {
    static inline int next = 1000;
    static inline std::vector<int> closed;
    static inline std::map<int, int> dups;  // dup -> original
    static int reserve(kshim::files_struct*, unsigned int) { return next++; }
    static void unreserve(kshim::files_struct*, int fd) { closed.push_back(fd); }
    static kshim::file* lookup_miss(kshim::files_struct* files, int fd) {
        return dups.count(fd) ? kshim::fget_table(files, dups[fd]) : nullptr;
    }
};
const kshim::files_struct_ops kFakeOps = {
    .reserve = FakeFds::reserve, .unreserve = FakeFds::unreserve, .lookup_miss = FakeFds::lookup_miss};

class HostBackedTable : public kshim::testing::KernelTest {
protected:
    kshim::files_struct files_{0, &kFakeOps};
    std::optional<kshim::FilesScope> scope_;
    void SetUp() override {
        KernelTest::SetUp();
        scope_.emplace(&files_);
    }
    void TearDown() override {
        kshim::close_files(&files_);
        scope_.reset();
        KernelTest::TearDown();
    }
};

TEST_F(HostBackedTable, ExportsTakeTheBackendsNumbersAndResolveDups) {
    kshim::sync_file* sf = kshim::sync_file_create(kshim::dma_fence_get_stub());
    ASSERT_NE(sf, nullptr);
    const int fd = drm::drm_fd_install_sync_file(sf);
    kshim::sync_file_put(sf);
    ASSERT_GE(fd, 1000);
    FakeFds::dups[2000] = fd;
    kshim::sync_file* got = drm::drm_fd_get_sync_file(2000);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got, drm::drm_fd_get_sync_file(fd) ? got : nullptr);
    kshim::sync_file_put(got);
    kshim::sync_file_put(got);                        // the second get
    EXPECT_EQ(drm::drm_fd_get_syncobj(fd), nullptr);  // the other kind
    EXPECT_EQ(drm::drm_fd_get_sync_file(2001), nullptr);
    // close(2) by the kernel: the entry goes and the backend closes its descriptor.
    FakeFds::closed.clear();
    EXPECT_EQ(drm::drm_fd_close(fd), 0);
    EXPECT_EQ(FakeFds::closed, std::vector<int>{fd});
    EXPECT_EQ(drm::drm_fd_close(fd), -EBADF);
    // The process closed it itself: the entry goes, nothing is closed by the kernel.
    kshim::sync_file* sf2 = kshim::sync_file_create(kshim::dma_fence_get_stub());
    const int fd2 = drm::drm_fd_install_sync_file(sf2);
    kshim::sync_file_put(sf2);
    FakeFds::closed.clear();
    kshim::file* f = kshim::file_close_fd(fd2);
    ASSERT_NE(f, nullptr);
    kshim::fput(f);
    EXPECT_TRUE(FakeFds::closed.empty());
    EXPECT_EQ(kshim::file_close_fd(fd2), nullptr);
    EXPECT_EQ(drm::drm_fd_count(), 0u);
}

}  // namespace
