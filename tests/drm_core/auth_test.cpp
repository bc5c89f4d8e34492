// The DRM master and authentication (drm/drm_auth.h) and drm_ioctl_permit's rules, as a client
// of the primary and render nodes sees them: the first primary opener is master, others join it
// and are authenticated through GET_MAGIC/AUTH_MAGIC; SET/DROP_MASTER need CAP_SYS_ADMIN unless
// the file was master and the caller is its opener's process; render files have no master.
#include <gtest/gtest.h>

#include "drm/drm_auth.h"
#include "drm/drm_ioctl.h"
#include "kernel_shim/cred.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace syncobj_test;

namespace {

// A device with a DRM_AUTH and a DRM_ROOT_ONLY driver ioctl, to check drm_ioctl_permit.
int noop_ioctl(drm_device*, void*, drm_file*) {
    return 0;
}
constexpr unsigned kAuthIoctl = drm::uapi::DRM_IO(drm::uapi::DRM_COMMAND_BASE + 0);
constexpr unsigned kRootIoctl = drm::uapi::DRM_IO(drm::uapi::DRM_COMMAND_BASE + 1);
constexpr IoctlDesc kDriverIoctls[] = {
    {kAuthIoctl, DRM_AUTH | DRM_RENDER_ALLOW, noop_ioctl, "AUTH_ONLY"},
    {kRootIoctl, DRM_ROOT_ONLY, noop_ioctl, "ROOT_ONLY"},
};
const DriverDesc& auth_driver() {
    static const DriverDesc d = [] {
        DriverDesc x = full_driver();
        x.ioctls = kDriverIoctls;
        return x;
    }();
    return d;
}

constexpr int kPid = 100;

}  // namespace

class DrmAuth : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        // The test body is a user process without capabilities, pid kPid.
        kshim::override_creds(&user);
        kshim::current()->tgid = kPid;
        dev = std::make_unique<drm_device>(auth_driver());
    }
    void TearDown() override {
        for (drm_file* f : files)
            drm_release(f);
        files.clear();
        dev.reset();
        kshim::current()->tgid = 0;
        kshim::revert_creds(nullptr);
        KernelTest::TearDown();
    }

    drm_file* open(bool render = false) {
        drm_file* f = nullptr;
        EXPECT_EQ(drm_open(dev.get(), &f, render), 0);
        files.push_back(f);
        return f;
    }
    void close(drm_file* f) {
        std::erase(files, f);
        drm_release(f);
    }
    int call(drm_file* f, unsigned cmd, drm::uapi::drm_auth* a = nullptr) {
        drm::uapi::drm_auth scratch{};
        drm::uapi::drm_auth* arg = a ? a : &scratch;
        drm::UserRange r(arg, sizeof(*arg));
        return drm::ioctl(f, cmd, arg);
    }
    bool is_master(drm_file* f) { return drm_is_current_master(f); }

    kshim::cred user = kshim::user_cred();
    kshim::cred admin = kshim::user_cred(kshim::cap_raise(kshim::CAP_EMPTY_SET, kshim::CAP_SYS_ADMIN));
    std::unique_ptr<drm_device> dev;
    std::vector<drm_file*> files;
};

TEST_F(DrmAuth, FirstPrimaryOpenerIsMasterOthersJoinIt) {
    drm_file* a = open();
    drm_file* b = open();
    drm_file* r = open(true);
    EXPECT_TRUE(is_master(a));
    EXPECT_TRUE(a->authenticated);
    EXPECT_FALSE(is_master(b));
    EXPECT_FALSE(b->authenticated);
    EXPECT_EQ(b->master, a->master);
    EXPECT_FALSE(is_master(r));
    EXPECT_EQ(r->master, nullptr);
    // The master goes with its file; the next primary opener becomes master.
    close(a);
    EXPECT_FALSE(is_master(b));
    drm_file* c = open();
    EXPECT_TRUE(is_master(c));
    EXPECT_NE(c->master, b->master);
}

TEST_F(DrmAuth, MagicAuthenticatesAClientOnce) {
    drm_file* m = open();
    drm_file* c = open();
    EXPECT_EQ(call(c, kAuthIoctl), -EACCES);  // DRM_AUTH: not authenticated yet
    drm::uapi::drm_auth a{};
    ASSERT_EQ(call(c, DRM_IOCTL_GET_MAGIC, &a), 0);
    EXPECT_NE(a.magic, 0u);
    drm::uapi::drm_auth again{};
    ASSERT_EQ(call(c, DRM_IOCTL_GET_MAGIC, &again), 0);
    EXPECT_EQ(again.magic, a.magic);  // one magic per file
    // Only the master authenticates, and only magics it handed out.
    EXPECT_EQ(call(c, DRM_IOCTL_AUTH_MAGIC, &a), -EACCES);
    drm::uapi::drm_auth bogus{a.magic + 7};
    EXPECT_EQ(call(m, DRM_IOCTL_AUTH_MAGIC, &bogus), -EINVAL);
    ASSERT_EQ(call(m, DRM_IOCTL_AUTH_MAGIC, &a), 0);
    EXPECT_TRUE(c->authenticated);
    EXPECT_EQ(call(c, kAuthIoctl), 0);
    EXPECT_EQ(call(m, DRM_IOCTL_AUTH_MAGIC, &a), -EINVAL);  // used up
    // A later client never gets a magic still held by a file.
    drm_file* d = open();
    drm::uapi::drm_auth ad{};
    ASSERT_EQ(call(d, DRM_IOCTL_GET_MAGIC, &ad), 0);
    EXPECT_NE(ad.magic, a.magic);
}

TEST_F(DrmAuth, RenderFilesNeedNoAuthAndGetNoMasterIoctls) {
    drm_file* r = open(true);
    EXPECT_EQ(call(r, kAuthIoctl), 0);
    EXPECT_EQ(call(r, DRM_IOCTL_GET_MAGIC), -EACCES);
    EXPECT_EQ(call(r, DRM_IOCTL_SET_MASTER), -EACCES);
    EXPECT_EQ(call(r, DRM_IOCTL_DROP_MASTER), -EACCES);
}

TEST_F(DrmAuth, RootOnlyNeedsCapSysAdmin) {
    drm_file* m = open();
    EXPECT_EQ(call(m, kRootIoctl), -EACCES);
    kshim::ScopedCreds as_admin(&admin);
    EXPECT_EQ(call(m, kRootIoctl), 0);
}

TEST_F(DrmAuth, AnOpenerWithCapSysAdminIsAuthenticated) {
    open();
    kshim::ScopedCreds as_admin(&admin);
    drm_file* c = open();
    EXPECT_TRUE(c->authenticated);
    EXPECT_FALSE(is_master(c));
}

TEST_F(DrmAuth, FormerMasterDropsAndRetakesWithoutPrivilege) {
    drm_file* m = open();
    drm_file* other = open();
    ASSERT_EQ(call(m, DRM_IOCTL_DROP_MASTER), 0);
    EXPECT_FALSE(is_master(m));
    EXPECT_EQ(dev->master, nullptr);
    EXPECT_EQ(call(m, DRM_IOCTL_DROP_MASTER), -EINVAL);  // not master any more
    // A file that never was master needs CAP_SYS_ADMIN.
    EXPECT_EQ(call(other, DRM_IOCTL_SET_MASTER), -EACCES);
    ASSERT_EQ(call(m, DRM_IOCTL_SET_MASTER), 0);
    EXPECT_TRUE(is_master(m));
    EXPECT_EQ(call(m, DRM_IOCTL_SET_MASTER), 0);  // already master: nothing to do
    {
        // With CAP_SYS_ADMIN, but another file is master: busy.
        kshim::ScopedCreds as_admin(&admin);
        EXPECT_EQ(call(other, DRM_IOCTL_SET_MASTER), -EBUSY);
        ASSERT_EQ(call(m, DRM_IOCTL_DROP_MASTER), 0);
        ASSERT_EQ(call(other, DRM_IOCTL_SET_MASTER), 0);  // a master of its own
    }
    EXPECT_TRUE(is_master(other));
    EXPECT_NE(other->master, m->master);
    EXPECT_FALSE(is_master(m));
}

TEST_F(DrmAuth, AnotherProcessNeedsCapSysAdminForAFormerMastersFile) {
    drm_file* m = open();
    ASSERT_EQ(call(m, DRM_IOCTL_DROP_MASTER), 0);
    // The file handed to another process (fd passing): that process is not its opener.
    kshim::current()->tgid = kPid + 1;
    EXPECT_EQ(call(m, DRM_IOCTL_SET_MASTER), -EACCES);
    kshim::ScopedCreds as_admin(&admin);
    EXPECT_EQ(call(m, DRM_IOCTL_SET_MASTER), 0);
}
