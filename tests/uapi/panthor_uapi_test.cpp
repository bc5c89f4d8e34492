// Checks uapi/drm/panthor_drm.h (include/uapi/drm/panthor_drm.h, driver 1.8) against
// docs/hw/csf/uapi.md: every ioctl number decoded into direction, type, nr and size, the 1.6-1.8
// layouts and flag values, and the prefixes older clients pass.
#include "uapi/drm/panthor_drm.h"

#include <gtest/gtest.h>

#include <array>

namespace {

using namespace drm::uapi;

struct IoctlCase {
    const char* name;
    unsigned cmd;
    unsigned nr;  // index relative to DRM_COMMAND_BASE
    unsigned size;
    unsigned expected;  // encoded by hand: 3 << 30 | size << 16 | 'd' << 8 | (0x40 + nr)
};

constexpr unsigned encode(unsigned nr, unsigned size) {
    return 3u << 30 | size << 16 | 0x64u << 8 | (0x40u + nr);
}

const std::array<IoctlCase, 17> kIoctls = {{
    {"DEV_QUERY", DRM_IOCTL_PANTHOR_DEV_QUERY, 0x00, 16, 0xC0106440u},
    {"VM_CREATE", DRM_IOCTL_PANTHOR_VM_CREATE, 0x01, 16, 0xC0106441u},
    {"VM_DESTROY", DRM_IOCTL_PANTHOR_VM_DESTROY, 0x02, 8, 0xC0086442u},
    {"VM_BIND", DRM_IOCTL_PANTHOR_VM_BIND, 0x03, 24, 0xC0186443u},
    {"VM_GET_STATE", DRM_IOCTL_PANTHOR_VM_GET_STATE, 0x04, 8, 0xC0086444u},
    {"BO_CREATE", DRM_IOCTL_PANTHOR_BO_CREATE, 0x05, 24, 0xC0186445u},
    {"BO_MMAP_OFFSET", DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, 0x06, 16, 0xC0106446u},
    {"GROUP_CREATE", DRM_IOCTL_PANTHOR_GROUP_CREATE, 0x07, 56, 0xC0386447u},
    {"GROUP_DESTROY", DRM_IOCTL_PANTHOR_GROUP_DESTROY, 0x08, 8, 0xC0086448u},
    {"GROUP_SUBMIT", DRM_IOCTL_PANTHOR_GROUP_SUBMIT, 0x09, 24, 0xC0186449u},
    {"GROUP_GET_STATE", DRM_IOCTL_PANTHOR_GROUP_GET_STATE, 0x0a, 16, 0xC010644Au},
    {"TILER_HEAP_CREATE", DRM_IOCTL_PANTHOR_TILER_HEAP_CREATE, 0x0b, 40, 0xC028644Bu},
    {"TILER_HEAP_DESTROY", DRM_IOCTL_PANTHOR_TILER_HEAP_DESTROY, 0x0c, 8, 0xC008644Cu},
    {"BO_SET_LABEL", DRM_IOCTL_PANTHOR_BO_SET_LABEL, 0x0d, 16, 0xC010644Du},
    {"SET_USER_MMIO_OFFSET", DRM_IOCTL_PANTHOR_SET_USER_MMIO_OFFSET, 0x0e, 8, 0xC008644Eu},
    {"BO_SYNC", DRM_IOCTL_PANTHOR_BO_SYNC, 0x0f, 16, 0xC010644Fu},
    {"BO_QUERY_INFO", DRM_IOCTL_PANTHOR_BO_QUERY_INFO, 0x10, 16, 0xC0106450u},
}};

TEST(PanthorUapi, IoctlNumbersDecodeToTheirFields) {
    for (const IoctlCase& c : kIoctls) {
        SCOPED_TRACE(c.name);
        EXPECT_EQ(_IOC_DIR(c.cmd), 3u);      // read | write
        EXPECT_EQ(_IOC_TYPE(c.cmd), 0x64u);  // 'd'
        EXPECT_EQ(_IOC_NR(c.cmd), 0x40u + c.nr);
        EXPECT_EQ(DRM_IOCTL_NR(c.cmd) - DRM_COMMAND_BASE, c.nr);
        EXPECT_EQ(_IOC_SIZE(c.cmd), c.size);
        EXPECT_EQ(encode(c.nr, c.size), c.expected);
        EXPECT_EQ(c.cmd, c.expected);
    }
}

TEST(PanthorUapi, IoctlIndicesAreDenseUpToBoQueryInfo) {
    for (unsigned i = 0; i < kIoctls.size(); i++) {
        SCOPED_TRACE(kIoctls[i].name);
        EXPECT_EQ(_IOC_NR(kIoctls[i].cmd), DRM_COMMAND_BASE + i);
    }
    EXPECT_EQ(DRM_PANTHOR_BO_SYNC, 15);
    EXPECT_EQ(DRM_PANTHOR_BO_QUERY_INFO + 1, static_cast<int>(kIoctls.size()));
}

TEST(PanthorUapi, GpuInfoGrewAtTheEndAndNamedItsPadding) {
    // A 1.5 client's 104 bytes are a prefix; selected_coherency sits where pad0 was.
    EXPECT_EQ(sizeof(drm_panthor_gpu_info), 112u);
    EXPECT_EQ(offsetof(drm_panthor_gpu_info, selected_coherency), 68u);
    EXPECT_EQ(offsetof(drm_panthor_gpu_info, gpu_features), 104u);
    EXPECT_EQ(DRM_PANTHOR_GPU_COHERENCY_ACE_LITE, 0);
    EXPECT_EQ(DRM_PANTHOR_GPU_COHERENCY_ACE, 1);
    EXPECT_EQ(DRM_PANTHOR_GPU_COHERENCY_NONE, 31);
}

TEST(PanthorUapi, TimestampInfoKeepsThePre18Prefix) {
    EXPECT_EQ(sizeof(drm_panthor_timestamp_info), 56u);
    EXPECT_EQ(offsetof(drm_panthor_timestamp_info, flags), 24u);  // the old struct's end
    EXPECT_EQ(offsetof(drm_panthor_timestamp_info, cpu_timestamp_nsec), 48u);
    EXPECT_EQ(DRM_PANTHOR_TIMESTAMP_GPU | DRM_PANTHOR_TIMESTAMP_GPU_OFFSET | DRM_PANTHOR_TIMESTAMP_FREQ, 0x51);
    EXPECT_EQ(DRM_PANTHOR_TIMESTAMP_CPU_TYPE_MASK, 0xe);
    EXPECT_EQ(DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC_RAW, 4);
    EXPECT_EQ(DRM_PANTHOR_TIMESTAMP_DURATION, 0x80);
}

TEST(PanthorUapi, BoFlagsAndSyncLayouts) {
    EXPECT_EQ(DRM_PANTHOR_BO_NO_MMAP | DRM_PANTHOR_BO_WB_MMAP, 3);
    EXPECT_EQ(DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH, 0);
    EXPECT_EQ(DRM_PANTHOR_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE, 1);
    EXPECT_EQ(DRM_PANTHOR_BO_IS_IMPORTED, 1);
    EXPECT_EQ(sizeof(drm_panthor_bo_sync_op), 24u);
    EXPECT_EQ(sizeof(drm_panthor_bo_sync), 16u);
    EXPECT_EQ(sizeof(drm_panthor_bo_query_info), 16u);
    EXPECT_EQ(offsetof(drm_panthor_bo_query_info, create_flags), 8u);
}

}  // namespace
