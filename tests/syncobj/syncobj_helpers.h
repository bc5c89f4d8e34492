// Shared by the drm_core and syncobj tests: a device with the syncobj features, files on it, an
// ioctl helper that registers the argument struct as user memory, and a test fence.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "drm/drm_ioctl.h"
#include "drm/drm_syncobj.h"
#include "drm/uaccess.h"
#include "kernel_shim/slab.h"

namespace syncobj_test {

using namespace kshim;
using DrmDevice = drm::drm_device;
using namespace drm;
using namespace drm::uapi;

struct TestFence {
    dma_fence base;
    SpinLock lock{"test_fence"};
};
inline const char* test_fence_name(dma_fence*) {
    return "test";
}
inline void test_fence_release(dma_fence* f) {
    kdelete(container_of(f, TestFence, base));
}
inline const dma_fence_ops test_fence_ops = {
    .use_64bit_seqno = true,
    .get_driver_name = test_fence_name,
    .get_timeline_name = test_fence_name,
    .release = test_fence_release,
};
// An unsignalled fence on its own context (one reference).
inline dma_fence* new_fence() {
    auto* f = knew<TestFence>(GFP_KERNEL);
    dma_fence_init(&f->base, &test_fence_ops, &f->lock, dma_fence_context_alloc(1), 1);
    return &f->base;
}

inline const DriverDesc& full_driver() {
    static const DriverDesc d = {
        .name = "upanthor-test",
        .desc = "syncobj test device",
        .major = 1,
        .minor = 5,
        .patchlevel = 0,
        .driver_features = DRIVER_GEM | DRIVER_RENDER | DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE,
    };
    return d;
}

// Calls an ioctl with `args` registered as user memory of sizeof(T) bytes.
template <class T>
int call(drm_file* f, unsigned cmd, T* args) {
    UserRange r(*args);
    return drm::ioctl(f, cmd, args);
}

// A File on a device, closed at the end of the test body scope.
struct Opened {
    explicit Opened(drm::drm_device* dev) { EXPECT_EQ(drm_open(dev, &file), 0); }
    ~Opened() {
        if (file)
            drm_release(file);
    }
    drm_file* file = nullptr;

    u32 create(u32 flags = 0) {
        uapi::drm_syncobj_create c{0, flags};
        EXPECT_EQ(call(file, DRM_IOCTL_SYNCOBJ_CREATE, &c), 0);
        return c.handle;
    }
    // Puts `fence` in the binary slot of `handle` (kernel API; the caller keeps its reference).
    void replace(u32 handle, dma_fence* fence) {
        drm_syncobj* s = drm_syncobj_find(file, handle);
        ASSERT_NE(s, nullptr);
        drm_syncobj_replace_fence(s, fence);
        drm_syncobj_put(s);
    }
    void add_point(u32 handle, dma_fence* fence, u64 point) {
        drm_syncobj* s = drm_syncobj_find(file, handle);
        ASSERT_NE(s, nullptr);
        drm_syncobj_add_point(s, dma_fence_chain_alloc(), fence, point);
        drm_syncobj_put(s);
    }
    int wait(std::vector<u32> handles, u32 flags, s64 timeout_abs, u32* first = nullptr) {
        UserRange r(handles.data(), handles.size() * sizeof(u32));
        drm_syncobj_wait w{};
        w.handles = user_ptr(handles.data());
        w.count_handles = static_cast<u32>(handles.size());
        w.flags = flags;
        w.timeout_nsec = timeout_abs;
        w.first_signaled = 0xdead;
        int ret = call(file, DRM_IOCTL_SYNCOBJ_WAIT, &w);
        if (first)
            *first = w.first_signaled;
        return ret;
    }
    int timeline_wait(std::vector<u32> handles, std::vector<u64> points, u32 flags, s64 timeout_abs,
                      u32* first = nullptr) {
        UserRange rh(handles.data(), handles.size() * sizeof(u32));
        UserRange rp(points.data(), points.size() * sizeof(u64));
        drm_syncobj_timeline_wait w{};
        w.handles = user_ptr(handles.data());
        w.points = user_ptr(points.data());
        w.count_handles = static_cast<u32>(handles.size());
        w.flags = flags;
        w.timeout_nsec = timeout_abs;
        int ret = call(file, DRM_IOCTL_SYNCOBJ_TIMELINE_WAIT, &w);
        if (first)
            *first = w.first_signaled;
        return ret;
    }
    int array_op(unsigned cmd, std::vector<u32> handles) {
        UserRange r(handles.data(), handles.size() * sizeof(u32));
        drm_syncobj_array a{user_ptr(handles.data()), static_cast<u32>(handles.size()), 0};
        return call(file, cmd, &a);
    }
    int timeline_signal(std::vector<u32> handles, std::vector<u64> points) {
        UserRange rh(handles.data(), handles.size() * sizeof(u32));
        UserRange rp(points.data(), points.size() * sizeof(u64));
        drm_syncobj_timeline_array a{user_ptr(handles.data()), user_ptr(points.data()),
                                     static_cast<u32>(handles.size()), 0};
        return call(file, DRM_IOCTL_SYNCOBJ_TIMELINE_SIGNAL, &a);
    }
    u64 query(u32 handle, u32 flags = 0) {
        u64 point = ~0ull;
        UserRange rh(&handle, sizeof handle);
        UserRange rp(&point, sizeof point);
        drm_syncobj_timeline_array a{user_ptr(&handle), user_ptr(&point), 1, flags};
        EXPECT_EQ(call(file, DRM_IOCTL_SYNCOBJ_QUERY, &a), 0);
        return point;
    }
    int transfer(u32 src, u64 src_point, u32 dst, u64 dst_point, u32 flags = 0) {
        drm_syncobj_transfer t{src, dst, src_point, dst_point, flags, 0};
        return call(file, DRM_IOCTL_SYNCOBJ_TRANSFER, &t);
    }
};

}  // namespace syncobj_test
