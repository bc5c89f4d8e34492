// The DRM ioctl entry point: number decoding, the size rules between the caller's struct and the
// kernel's, direction handling, user-pointer faults, permissions, and the core ioctls
// (VERSION, GET_CAP, GEM_CLOSE) with the errno of every rejected input.
#include <gtest/gtest.h>

#include <cstring>

#include "drm/drm_gem_shmem_helper.h"
#include "tests/support/kernel_test.h"
#include "tests/syncobj/syncobj_helpers.h"

using namespace syncobj_test;

namespace {

// A driver ioctl at DRM_COMMAND_BASE + 0 whose kernel struct is 16 bytes, and one (index 2)
// with a 200-byte struct (above the 128-byte stack buffer); index 1 is a hole.
struct Arg16 {
    u64 in;
    u64 out;
};
struct Arg200 {
    u8 bytes[200];
};

struct Seen {
    Arg16 arg{};
    int calls = 0;
    int ret = 0;
} seen;

int echo_ioctl(drm_device*, void* data, drm_file*) {
    auto* a = static_cast<Arg16*>(data);
    seen.arg = *a;
    seen.calls++;
    a->out = a->in + 1;
    return seen.ret;
}
int big_ioctl(drm_device*, void* data, drm_file*) {
    auto* a = static_cast<Arg200*>(data);
    for (int i = 0; i < 200; i++)
        a->bytes[i] = static_cast<u8>(a->bytes[i] + 1);
    return 0;
}
int primary_only_ioctl(drm_device*, void*, drm_file*) {
    return 0;
}

constexpr unsigned ECHO = DRM_IOWR<Arg16>(DRM_COMMAND_BASE + 0);
constexpr unsigned BIG = DRM_IOWR<Arg200>(DRM_COMMAND_BASE + 2);
constexpr unsigned PRIMARY = DRM_IOWR<Arg16>(DRM_COMMAND_BASE + 3);
constexpr unsigned DRM_IOCTL_ECHO = ECHO;
constexpr unsigned DRM_IOCTL_BIG = BIG;
constexpr unsigned DRM_IOCTL_PRIMARY = PRIMARY;

const IoctlDesc driver_ioctls[] = {
    DRM_IOCTL_DEF_DRV(ECHO, echo_ioctl, DRM_RENDER_ALLOW),
    IoctlDesc{},
    DRM_IOCTL_DEF_DRV(BIG, big_ioctl, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PRIMARY, primary_only_ioctl, 0),
};

int opens = 0, postcloses = 0, open_ret = 0;
int test_open(drm_device*, drm_file* f) {
    opens++;
    if (!open_ret)
        f->driver_priv = &opens;
    return open_ret;
}
void test_postclose(drm_device*, drm_file* f) {
    EXPECT_EQ(f->driver_priv, &opens);
    postcloses++;
}

DriverDesc test_driver(u32 features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE) {
    DriverDesc d = full_driver();
    d.driver_features = features;
    d.ioctls = driver_ioctls;
    d.open = test_open;
    d.postclose = test_postclose;
    return d;
}

unsigned with_size(unsigned cmd, unsigned size) {
    return _IOC(_IOC_DIR(cmd), _IOC_TYPE(cmd), _IOC_NR(cmd), size);
}
unsigned with_dir(unsigned cmd, unsigned dir) {
    return _IOC(dir, _IOC_TYPE(cmd), _IOC_NR(cmd), _IOC_SIZE(cmd));
}

}  // namespace

class DrmIoctl : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        seen = Seen{};
        opens = postcloses = open_ret = 0;
    }
};

TEST_F(DrmIoctl, DriverIoctlRoundTripsItsStruct) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    Arg16 a{41, 0};
    EXPECT_EQ(call(o.file, ECHO, &a), 0);
    EXPECT_EQ(seen.calls, 1);
    EXPECT_EQ(seen.arg.in, 41u);
    EXPECT_EQ(a.out, 42u);
}

TEST_F(DrmIoctl, SmallerUserStructIsZeroExtendedInAndTruncatedOut) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    // Userspace knows an 8-byte version of the struct; the bytes after it are not its own.
    struct {
        u64 in;
        u64 canary;
    } buf{7, 0x5a5a5a5a5a5a5a5aull};
    UserRange r(&buf, 8);
    EXPECT_EQ(ioctl(o.file, with_size(ECHO, 8), &buf), 0);
    EXPECT_EQ(seen.arg.in, 7u);
    EXPECT_EQ(seen.arg.out, 0u);                   // zero-extended, not the canary
    EXPECT_EQ(buf.canary, 0x5a5a5a5a5a5a5a5aull);  // the kernel's `out` field was not copied back
}

TEST_F(DrmIoctl, LargerUserStructIsCopiedWhole) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    struct {
        Arg16 a;
        u64 extra;
    } buf{{1, 0}, 99};
    UserRange r(buf);
    EXPECT_EQ(ioctl(o.file, with_size(ECHO, sizeof buf), &buf), 0);
    EXPECT_EQ(buf.a.out, 2u);
    EXPECT_EQ(buf.extra, 99u);  // copied in and back out unchanged
}

TEST_F(DrmIoctl, DirectionBitsOfBothSidesGateTheCopies) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    Arg16 a{5, 1234};
    // Write-only from the caller: copied in, nothing copied back.
    EXPECT_EQ(call(o.file, with_dir(ECHO, _IOC_WRITE), &a), 0);
    EXPECT_EQ(seen.arg.in, 5u);
    EXPECT_EQ(a.out, 1234u);
    // Read-only: nothing copied in (the handler sees zeros), the result copied out.
    a = Arg16{5, 1234};
    EXPECT_EQ(call(o.file, with_dir(ECHO, _IOC_READ), &a), 0);
    EXPECT_EQ(seen.arg.in, 0u);
    EXPECT_EQ(a.in, 0u);
    EXPECT_EQ(a.out, 1u);
    // No direction: the handler still runs on a zeroed kernel struct, no copies at all.
    a = Arg16{5, 1234};
    EXPECT_EQ(ioctl(o.file, with_dir(ECHO, _IOC_NONE), nullptr), 0);
    EXPECT_EQ(seen.calls, 3);
    EXPECT_EQ(seen.arg.in, 0u);
}

TEST_F(DrmIoctl, TheTypeByteIsNotChecked) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    Arg16 a{1, 0};
    unsigned other_type = _IOC(_IOC_READ | _IOC_WRITE, 'x', _IOC_NR(ECHO), sizeof(Arg16));
    EXPECT_EQ(call(o.file, other_type, &a), 0);  // as upstream: the VFS already routed it
    EXPECT_EQ(a.out, 2u);
}

TEST_F(DrmIoctl, UnknownIoctlsAreEinval) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    Arg16 a{};
    UserRange r(a);
    EXPECT_EQ(ioctl(o.file, DRM_IOWR<Arg16>(DRM_COMMAND_BASE + 1), &a), -EINVAL);  // hole
    EXPECT_EQ(ioctl(o.file, DRM_IOWR<Arg16>(DRM_COMMAND_BASE + 4), &a), -EINVAL);  // past the table
    EXPECT_EQ(ioctl(o.file, DRM_IOWR<Arg16>(DRM_COMMAND_END - 1), &a), -EINVAL);
    EXPECT_EQ(ioctl(o.file, DRM_IOWR<Arg16>(0x01), &a), -EINVAL);  // core, not served
    EXPECT_EQ(ioctl(o.file, DRM_IOWR<Arg16>(0xA0), &a), -EINVAL);  // core, not served
    EXPECT_EQ(ioctl(o.file, DRM_IOWR<Arg16>(0xFF), &a), -EINVAL);  // past the core table
    EXPECT_EQ(ioctl(o.file, DRM_IOWR<Arg16>(0xCE), &a), -EINVAL);  // MODE_GETFB2: no KMS
    EXPECT_EQ(seen.calls, 0);
}

TEST_F(DrmIoctl, BadArgumentPointerIsEfault) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    Arg16 a{3, 0};
    EXPECT_EQ(ioctl(o.file, ECHO, &a), -EFAULT);  // not registered as user memory
    EXPECT_EQ(seen.calls, 0);
    EXPECT_EQ(ioctl(o.file, ECHO, nullptr), -EFAULT);
    {
        UserRange r(&a, 8);  // only half of it mapped
        EXPECT_EQ(ioctl(o.file, ECHO, &a), -EFAULT);
    }
    EXPECT_EQ(seen.calls, 0);
}

TEST_F(DrmIoctl, OutCopyHappensEvenWhenTheHandlerFails) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    seen.ret = -EIO;
    Arg16 a{10, 0};
    EXPECT_EQ(call(o.file, ECHO, &a), -EIO);
    EXPECT_EQ(a.out, 11u);
}

TEST_F(DrmIoctl, BigStructsGoThroughKmalloc) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    Arg200 a{};
    for (int i = 0; i < 200; i++)
        a.bytes[i] = static_cast<u8>(i);
    EXPECT_EQ(call(o.file, BIG, &a), 0);
    for (int i = 0; i < 200; i++)
        ASSERT_EQ(a.bytes[i], static_cast<u8>(i + 1));
    // Smaller user struct: the tail the handler incremented from zero is not copied back.
    Arg200 b{};
    std::memset(b.bytes, 0x77, sizeof b.bytes);
    b.bytes[0] = 1;
    UserRange r(&b, 100);
    EXPECT_EQ(ioctl(o.file, with_size(BIG, 100), &b), 0);
    EXPECT_EQ(b.bytes[0], 2);
    EXPECT_EQ(b.bytes[99], 0x78);
    EXPECT_EQ(b.bytes[100], 0x77);
}

TEST_F(DrmIoctl, RenderFilesOnlyGetRenderAllowIoctls) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened render(&dev);
    Arg16 a{};
    EXPECT_EQ(call(render.file, PRIMARY, &a), -EACCES);
    drm_file* primary = nullptr;
    ASSERT_EQ(drm_open(&dev, &primary, /*render=*/false), 0);
    EXPECT_EQ(call(primary, PRIMARY, &a), 0);
    drm_release(primary);
}

TEST_F(DrmIoctl, UnpluggedDeviceIsEnodev) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    dev.unplug();
    Arg16 a{};
    EXPECT_EQ(call(o.file, ECHO, &a), -ENODEV);
    drm_file* f = nullptr;
    EXPECT_EQ(drm_open(&dev, &f), -ENODEV);
}

TEST_F(DrmIoctl, OpenAndPostcloseHooksRun) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    {
        Opened o(&dev);
        EXPECT_EQ(opens, 1);
        EXPECT_EQ(o.file->driver_priv, &opens);
    }
    EXPECT_EQ(postcloses, 1);
    open_ret = -ENOMEM;
    drm_file* f = nullptr;
    EXPECT_EQ(drm_open(&dev, &f), -ENOMEM);
    EXPECT_EQ(f, nullptr);
    EXPECT_EQ(postcloses, 1);
}

TEST_F(DrmIoctl, MisplacedDriverIoctlWarns) {
    static const IoctlDesc bad[] = {DRM_IOCTL_DEF_DRV(BIG, big_ioctl, DRM_RENDER_ALLOW)};  // nr base+2 at 0
    DriverDesc d = full_driver();
    d.ioctls = bad;
    DrmDevice dev(d);
    EXPECT_TRUE(expect_report(ReportKind::Warn));
}

// ---- DRM_IOCTL_VERSION ----

TEST_F(DrmIoctl, VersionFillsNumbersAndStrings) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    char name[64] = {}, date[64] = {}, desc[64] = {};
    UserRange rn(name), rd(date), rs(desc);
    uapi::drm_version v{};
    v.name = name;
    v.name_len = sizeof name;
    v.date = date;
    v.date_len = sizeof date;
    v.desc = desc;
    v.desc_len = sizeof desc;
    EXPECT_EQ(call(o.file, DRM_IOCTL_VERSION, &v), 0);
    EXPECT_EQ(v.version_major, 1);
    EXPECT_EQ(v.version_minor, 5);
    EXPECT_EQ(v.version_patchlevel, 0);
    EXPECT_EQ(v.name_len, std::strlen("upanthor-test"));
    EXPECT_STREQ(name, "upanthor-test");
    EXPECT_EQ(v.date_len, 1u);
    EXPECT_STREQ(date, "0");
    EXPECT_STREQ(desc, "syncobj test device");
}

TEST_F(DrmIoctl, VersionTruncatesWithoutNulAndReportsTheFullLength) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    char name[8];
    std::memset(name, '#', sizeof name);
    UserRange rn(name);
    uapi::drm_version v{};
    v.name = name;
    v.name_len = 4;
    EXPECT_EQ(call(o.file, DRM_IOCTL_VERSION, &v), 0);
    EXPECT_EQ(std::memcmp(name, "upan####", 8), 0);
    EXPECT_EQ(v.name_len, std::strlen("upanthor-test"));
    EXPECT_EQ(v.desc_len, std::strlen("syncobj test device"));  // null buffer: length only
}

TEST_F(DrmIoctl, VersionWithBadStringPointerIsEfault) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    char name[32];
    uapi::drm_version v{};
    v.name = name;  // not registered
    v.name_len = sizeof name;
    EXPECT_EQ(call(o.file, DRM_IOCTL_VERSION, &v), -EFAULT);
}

// ---- DRM_IOCTL_GET_CAP ----

TEST_F(DrmIoctl, GetCapAnswersSyncobjCaps) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    drm_get_cap c{DRM_CAP_SYNCOBJ, 77};
    EXPECT_EQ(call(o.file, DRM_IOCTL_GET_CAP, &c), 0);
    EXPECT_EQ(c.value, 1u);
    c = {DRM_CAP_SYNCOBJ_TIMELINE, 77};
    EXPECT_EQ(call(o.file, DRM_IOCTL_GET_CAP, &c), 0);
    EXPECT_EQ(c.value, 1u);
    c = {DRM_CAP_TIMESTAMP_MONOTONIC, 77};
    EXPECT_EQ(call(o.file, DRM_IOCTL_GET_CAP, &c), 0);
    EXPECT_EQ(c.value, 1u);
}

TEST_F(DrmIoctl, GetCapWithoutTheFeatureIsZero) {
    DriverDesc d = test_driver(DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ);
    DrmDevice dev(d);
    Opened o(&dev);
    drm_get_cap c{DRM_CAP_SYNCOBJ_TIMELINE, 77};
    EXPECT_EQ(call(o.file, DRM_IOCTL_GET_CAP, &c), 0);
    EXPECT_EQ(c.value, 0u);
}

TEST_F(DrmIoctl, GetCapUnknownCapIsEopnotsuppOnRenderOnlyAndEinvalOnKms) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    drm_get_cap c{0x1234, 77};
    EXPECT_EQ(call(o.file, DRM_IOCTL_GET_CAP, &c), -EOPNOTSUPP);
    EXPECT_EQ(c.value, 0u);
    DriverDesc kms = test_driver(DRIVER_GEM | DRIVER_MODESET);
    DrmDevice kdev(kms);
    Opened ko(&kdev);
    c = {0x1234, 77};
    EXPECT_EQ(call(ko.file, DRM_IOCTL_GET_CAP, &c), -EINVAL);
}

// ---- DRM_IOCTL_GEM_CLOSE ----

TEST_F(DrmIoctl, GemCloseDropsTheHandleOnce) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    Opened o(&dev);
    drm_gem_shmem_object* bo = nullptr;
    ASSERT_EQ(drm_gem_shmem_create(nullptr, PAGE_SIZE, &bo), 0);
    u32 handle = 0;
    ASSERT_EQ(o.file->gem.handle_create(&bo->base, &handle), 0);
    drm_gem_object_put(&bo->base);
    drm_gem_close c{handle, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_GEM_CLOSE, &c), 0);
    EXPECT_EQ(o.file->gem.count(), 0u);
    EXPECT_EQ(call(o.file, DRM_IOCTL_GEM_CLOSE, &c), -EINVAL);
    c = {0, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_GEM_CLOSE, &c), -EINVAL);
}

TEST_F(DrmIoctl, FileCloseDropsGemHandles) {
    DriverDesc d = test_driver();
    DrmDevice dev(d);
    drm_gem_shmem_object* bo = nullptr;
    ASSERT_EQ(drm_gem_shmem_create(nullptr, PAGE_SIZE, &bo), 0);
    {
        Opened o(&dev);
        u32 handle = 0;
        ASSERT_EQ(o.file->gem.handle_create(&bo->base, &handle), 0);
    }
    EXPECT_EQ(kref_read(&bo->base.refcount), 1u);
    drm_gem_object_put(&bo->base);
}

TEST_F(DrmIoctl, GemCloseWithoutGemFeatureIsEopnotsupp) {
    DriverDesc d = test_driver(DRIVER_RENDER);
    DrmDevice dev(d);
    Opened o(&dev);
    drm_gem_close c{1, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_GEM_CLOSE, &c), -EOPNOTSUPP);
}

TEST_F(DrmIoctl, SyncobjIoctlsWithoutTheFeatureAreEopnotsupp) {
    DriverDesc d = test_driver(DRIVER_GEM | DRIVER_RENDER);
    DrmDevice dev(d);
    Opened o(&dev);
    uapi::drm_syncobj_create c{0, 0};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_CREATE, &c), -EOPNOTSUPP);
    drm_syncobj_timeline_array q{};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_QUERY, &q), -EOPNOTSUPP);
    drm_syncobj_transfer t{};
    EXPECT_EQ(call(o.file, DRM_IOCTL_SYNCOBJ_TRANSFER, &t), -EOPNOTSUPP);
}

TEST_F(DrmIoctl, UaccessRegistryHandlesOverlapAndNull) {
    char buf[64] = {};
    UserRange a(buf, 32);
    UserRange b(buf + 16, 48);
    EXPECT_TRUE(uaccess_ok(user_ptr(buf), 64));  // covered by the chain of both
    EXPECT_FALSE(uaccess_ok(user_ptr(buf), 65));
    EXPECT_FALSE(uaccess_ok(0, 1));
    EXPECT_TRUE(uaccess_ok(0, 0));
    EXPECT_EQ(copy_to_user(user_ptr(buf + 60), "abcdefgh", 8), 8u);  // nothing copied on a fault
}
