// Checks uapi/drm/panfrost_drm.h (include/uapi/drm/panfrost_drm.h, driver 1.6) against
// jm-interface.md §4: every ioctl number decoded into direction, type, nr and size, and the
// layout facts old and new clients rely on.
#include "uapi/drm/panfrost_drm.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <string>

namespace {

using namespace drm::uapi;

struct IoctlCase {
    const char* name;
    unsigned cmd;
    unsigned dir;  // _IOC_WRITE, or _IOC_READ | _IOC_WRITE
    unsigned nr;   // index relative to DRM_COMMAND_BASE
    unsigned size;
    unsigned expected;  // encoded by hand: dir << 30 | size << 16 | 'd' << 8 | (0x40 + nr)
};

constexpr unsigned W = 1;
constexpr unsigned RW = 3;

constexpr unsigned encode(unsigned dir, unsigned nr, unsigned size) {
    return dir << 30 | size << 16 | 0x64u << 8 | (0x40u + nr);
}

const std::array<IoctlCase, 14> kIoctls = {{
    {"SUBMIT", DRM_IOCTL_PANFROST_SUBMIT, W, 0x00, 48, 0x40306440u},
    {"WAIT_BO", DRM_IOCTL_PANFROST_WAIT_BO, W, 0x01, 16, 0x40106441u},
    {"CREATE_BO", DRM_IOCTL_PANFROST_CREATE_BO, RW, 0x02, 24, 0xC0186442u},
    {"MMAP_BO", DRM_IOCTL_PANFROST_MMAP_BO, RW, 0x03, 16, 0xC0106443u},
    {"GET_PARAM", DRM_IOCTL_PANFROST_GET_PARAM, RW, 0x04, 16, 0xC0106444u},
    {"GET_BO_OFFSET", DRM_IOCTL_PANFROST_GET_BO_OFFSET, RW, 0x05, 16, 0xC0106445u},
    {"PERFCNT_ENABLE", DRM_IOCTL_PANFROST_PERFCNT_ENABLE, W, 0x06, 8, 0x40086446u},
    {"PERFCNT_DUMP", DRM_IOCTL_PANFROST_PERFCNT_DUMP, W, 0x07, 8, 0x40086447u},
    {"MADVISE", DRM_IOCTL_PANFROST_MADVISE, RW, 0x08, 12, 0xC00C6448u},
    {"SET_LABEL_BO", DRM_IOCTL_PANFROST_SET_LABEL_BO, RW, 0x09, 16, 0xC0106449u},
    {"JM_CTX_CREATE", DRM_IOCTL_PANFROST_JM_CTX_CREATE, RW, 0x0a, 8, 0xC008644Au},
    {"JM_CTX_DESTROY", DRM_IOCTL_PANFROST_JM_CTX_DESTROY, RW, 0x0b, 8, 0xC008644Bu},
    {"SYNC_BO", DRM_IOCTL_PANFROST_SYNC_BO, RW, 0x0c, 16, 0xC010644Cu},
    {"QUERY_BO_INFO", DRM_IOCTL_PANFROST_QUERY_BO_INFO, RW, 0x0d, 16, 0xC010644Du},
}};

TEST(PanfrostUapi, IoctlNumbersDecodeToTheirFields) {
    for (const IoctlCase& c : kIoctls) {
        SCOPED_TRACE(c.name);
        EXPECT_EQ(_IOC_DIR(c.cmd), c.dir);
        EXPECT_EQ(_IOC_TYPE(c.cmd), 0x64u);  // 'd'
        EXPECT_EQ(_IOC_NR(c.cmd), 0x40u + c.nr);
        EXPECT_EQ(DRM_IOCTL_NR(c.cmd) - DRM_COMMAND_BASE, c.nr);
        EXPECT_EQ(_IOC_SIZE(c.cmd), c.size);
        EXPECT_EQ(encode(c.dir, c.nr, c.size), c.expected);
        EXPECT_EQ(c.cmd, c.expected);
    }
}

TEST(PanfrostUapi, IoctlIndicesAreDenseAndInTheDriverRange) {
    // The driver table has one entry per index, 0x00..0x0d; the core rejects anything beyond.
    for (unsigned i = 0; i < kIoctls.size(); i++) {
        SCOPED_TRACE(kIoctls[i].name);
        EXPECT_EQ(_IOC_NR(kIoctls[i].cmd), DRM_COMMAND_BASE + i);
        EXPECT_LT(_IOC_NR(kIoctls[i].cmd), DRM_COMMAND_END);
    }
    EXPECT_EQ(DRM_PANFROST_QUERY_BO_INFO + 1, kIoctls.size());
}

TEST(PanfrostUapi, PreJmContextSubmitIsAPrefixOfTheCurrentOne) {
    // A 1.4 client passes 40 bytes; the fields it knows sit at the same offsets and the core
    // zero-fills jm_ctx_handle and pad.
    EXPECT_EQ(offsetof(drm_panfrost_submit, jm_ctx_handle), 40u);
    EXPECT_EQ(_IOC(_IOC_WRITE, DRM_IOCTL_BASE, DRM_COMMAND_BASE + DRM_PANFROST_SUBMIT, 40), 0x40286440u);
    EXPECT_EQ(DRM_IOCTL_NR(0x40286440u), DRM_IOCTL_NR(DRM_IOCTL_PANFROST_SUBMIT));

    std::array<unsigned char, sizeof(drm_panfrost_submit)> raw{};
    const __u64 jc = 0x1122334455667788ull;
    const __u32 requirements = PANFROST_JD_REQ_FS | PANFROST_JD_REQ_CYCLE_COUNT;
    std::memcpy(raw.data() + 0, &jc, sizeof(jc));
    std::memcpy(raw.data() + 36, &requirements, sizeof(requirements));
    drm_panfrost_submit submit;
    std::memcpy(&submit, raw.data(), sizeof(submit));
    EXPECT_EQ(submit.jc, jc);
    EXPECT_EQ(submit.requirements, 3u);
    EXPECT_EQ(submit.jm_ctx_handle, 0u);
    EXPECT_EQ(submit.pad, 0u);
}

TEST(PanfrostUapi, FlagAndEnumValues) {
    EXPECT_EQ(PANFROST_BO_NOEXEC | PANFROST_BO_HEAP | PANFROST_BO_WB_MMAP, 7u);
    EXPECT_EQ(PANFROST_MADV_DONTNEED, 1u);
    EXPECT_EQ(PANFROST_BO_SYNC_CPU_CACHE_FLUSH_AND_INVALIDATE, 1u);
    EXPECT_EQ(DRM_PANFROST_BO_IS_IMPORTED, 1u);
    EXPECT_EQ(PANFROST_JM_CTX_PRIORITY_HIGH, 2);
    EXPECT_EQ(DRM_PANFROST_GPU_COHERENCY_NONE, 31);
    EXPECT_EQ(DRM_PANFROST_PARAM_NR_CORE_GROUPS, 38);
    EXPECT_EQ(DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP, 41);
    EXPECT_EQ(DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES, 43);
    EXPECT_EQ(DRM_PANFROST_PARAM_SELECTED_COHERENCY, 44);
}

TEST(PanfrostUapi, CoredumpHeaderLayout) {
    // The magic reads "PANF" in memory on a little-endian host; objects follow a 2000-byte header.
    panfrost_dump_object_header hdr{};
    hdr.magic = PANFROSTDUMP_MAGIC;
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(&hdr.magic), 4), "PANF");
    EXPECT_EQ(sizeof(panfrost_dump_object_header), 2000u);
    EXPECT_EQ(offsetof(panfrost_dump_object_header, reghdr), 16u);
    EXPECT_EQ(offsetof(panfrost_dump_object_header, bomap) + offsetof(pan_bomap_hdr, iova), 24u);
    EXPECT_EQ(PANFROSTDUMP_BUF_TRAILER, 3u);
}

}  // namespace
