// (no upstream counterpart) fuzz_ioctl's device-level ops (fuzz/ioctl_ops.h, family Core): the
// DRM core's VERSION and GET_CAP, panthor's DEV_QUERY (panthor_drv.c), and any command number
// with arbitrary bytes, which reaches drm_ioctl's own checks of number, direction and size.
#include <algorithm>
#include <cstring>

#include "fuzz/ioctl_program.h"
#include "uapi/drm/drm.h"

namespace upanthor_fuzz {

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;

void IoctlProgram::op_version(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm::uapi::drm_version a{};
    uint8_t* host = nullptr;
    size_t cap = 0;
    a.name_len = in_.below(3) == 0 ? in_.edge_u64() : in_.u8() % 16;
    a.name = reinterpret_cast<char*>(user_buffer(std::min<size_t>(a.name_len, 256), &host, &cap));
    a.date_len = in_.u8() % 4;
    a.date = reinterpret_cast<char*>(user_buffer(a.date_len, &host, &cap));
    a.desc_len = in_.u8() % 32;
    a.desc = reinterpret_cast<char*>(user_buffer(a.desc_len, &host, &cap));
    ioctl(f, DRM_IOCTL_VERSION, a, "VERSION");
}

void IoctlProgram::op_get_cap(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_get_cap a{};
    a.capability = in_.pick<u64>(
        {DRM_CAP_SYNCOBJ, DRM_CAP_SYNCOBJ_TIMELINE, DRM_CAP_TIMESTAMP_MONOTONIC, DRM_CAP_PRIME, 0, in_.edge_u64()});
    ioctl(f, DRM_IOCTL_GET_CAP, a, "GET_CAP");
}

// Any command number, any direction and size, arbitrary bytes.
void IoctlProgram::op_raw_ioctl(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    uint8_t raw[256];
    in_.bytes(raw, sizeof raw);
    const unsigned nr = in_.u8();
    const unsigned dir = in_.u8() & 3;
    const unsigned size = in_.u8();
    const unsigned cmd = (dir << 30) | (size << 16) | ('d' << 8) | nr;
    size_t cap = 0;
    uint8_t* host = mem_.alloc(256, &cap);
    std::memcpy(host, raw, cap);
    mem_.reg(host, cap);
    note("raw_ioctl", drm::ioctl(f, cmd, host));
}

void IoctlProgram::op_dev_query(const IoctlOpCall& c) {
    drm::drm_file* f = c.file;
    drm_panthor_dev_query a{};
    // Types 0-4 (4 = MMU_INFO, 1.9) and the first unknown one.
    a.type = in_.u8() < 230 ? in_.u8() % 6 : in_.edge_u32();
    static constexpr u32 sizes[] = {sizeof(drm_panthor_gpu_info),       sizeof(drm_panthor_csif_info),
                                    sizeof(drm_panthor_timestamp_info), sizeof(drm_panthor_group_priorities_info),
                                    sizeof(drm_panthor_mmu_info),       0};
    const uint8_t s = in_.u8();
    a.size = s < 128   ? sizes[a.type < 6 ? a.type : 5]
             : s < 160 ? 0
             : s < 192 ? sizes[s % 5] + (s & 8) - 4
                       : in_.edge_u32();
    uint8_t* host = nullptr;
    size_t cap = 0;
    a.pointer = in_.u8() < 32 ? 0 : user_buffer(std::min<size_t>(a.size, 4096), &host, &cap);
    // TIMESTAMP_INFO reads its flags (1.8): the size byte's low bits give every valid set and the
    // invalid CPU types 3-7 (the errno rows cover the bits above 7). No input byte is taken, so
    // saved inputs keep their op streams.
    constexpr size_t kFlagsOff = offsetof(drm_panthor_timestamp_info, flags);
    if (a.type == DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO && host && cap >= kFlagsOff + 4 &&
        a.pointer == drm::user_ptr(host)) {
        const u32 flags = s & 0x7f;
        std::memcpy(host + kFlagsOff, &flags, 4);
    }
    ioctl(f, DRM_IOCTL_PANTHOR_DEV_QUERY, a, "DEV_QUERY");
}

}  // namespace upanthor_fuzz
