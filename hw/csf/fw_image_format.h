// The mali_csffw.bin firmware image format: mirrors the CSF_FW_BINARY_* definitions and binary
// header structs of drivers/gpu/drm/panthor/panthor_fw.c. Definitions only.
#pragma once
#include <cstddef>
#include <cstdint>

#include "hw/bits.h"

namespace panthor {

inline constexpr uint32_t CSF_FW_BINARY_HEADER_MAGIC = 0xc3f13a6e;
inline constexpr uint32_t CSF_FW_BINARY_HEADER_MAJOR_MAX = 0;

constexpr uint32_t CSF_FW_BINARY_ENTRY_TYPE(uint32_t ehdr) {
    return ehdr & 0xff;
}
constexpr uint32_t CSF_FW_BINARY_ENTRY_SIZE(uint32_t ehdr) {
    return (ehdr >> 8) & 0xff;
}
inline constexpr uint32_t CSF_FW_BINARY_ENTRY_UPDATE = BIT(30);
inline constexpr uint32_t CSF_FW_BINARY_ENTRY_OPTIONAL = BIT(31);

inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_RD = BIT(0);
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_WR = BIT(1);
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_EX = BIT(2);
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_NONE = 0u << 3;
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_CACHED = 1u << 3;
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_UNCACHED_COHERENT = 2u << 3;
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_CACHED_COHERENT = 3u << 3;
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_MASK = GENMASK(4, 3);
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_PROT = BIT(5);
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_SHARED = BIT(30);
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_ZERO = BIT(31);
inline constexpr uint32_t CSF_FW_BINARY_IFACE_ENTRY_SUPPORTED_FLAGS =
    CSF_FW_BINARY_IFACE_ENTRY_RD | CSF_FW_BINARY_IFACE_ENTRY_WR | CSF_FW_BINARY_IFACE_ENTRY_EX |
    CSF_FW_BINARY_IFACE_ENTRY_CACHE_MODE_MASK | CSF_FW_BINARY_IFACE_ENTRY_PROT | CSF_FW_BINARY_IFACE_ENTRY_SHARED |
    CSF_FW_BINARY_IFACE_ENTRY_ZERO;

enum panthor_fw_binary_entry_type : uint32_t {
    CSF_FW_BINARY_ENTRY_TYPE_IFACE = 0,
    CSF_FW_BINARY_ENTRY_TYPE_CONFIG = 1,
    CSF_FW_BINARY_ENTRY_TYPE_FUTF_TEST = 2,
    CSF_FW_BINARY_ENTRY_TYPE_TRACE_BUFFER = 3,
    CSF_FW_BINARY_ENTRY_TYPE_TIMELINE_METADATA = 4,
    CSF_FW_BINARY_ENTRY_TYPE_BUILD_INFO_METADATA = 6,
};

struct panthor_fw_binary_hdr {
    uint32_t magic;
    uint8_t minor;
    uint8_t major;
    uint16_t padding1;
    uint32_t version_hash;
    uint32_t padding2;
    uint32_t size;
};

struct panthor_fw_binary_section_entry_hdr {
    uint32_t flags;
    struct {
        uint32_t start;
        uint32_t end;
    } va;
    struct {
        uint32_t start;
        uint32_t end;
    } data;
};

struct panthor_fw_build_info_hdr {
    uint32_t meta_start;
    uint32_t meta_size;
};
inline constexpr char BUILD_INFO_GIT_SHA_TAG[] = "git_sha: ";  // 9 bytes, no NUL

inline constexpr char CSF_FW_NAME[] = "mali_csffw.bin";

static_assert(sizeof(panthor_fw_binary_hdr) == 20);
static_assert(offsetof(panthor_fw_binary_hdr, major) == 5);
static_assert(offsetof(panthor_fw_binary_hdr, version_hash) == 8);
static_assert(offsetof(panthor_fw_binary_hdr, size) == 16);
static_assert(sizeof(panthor_fw_binary_section_entry_hdr) == 20);
static_assert(offsetof(panthor_fw_binary_section_entry_hdr, data) == 12);
static_assert(sizeof(panthor_fw_build_info_hdr) == 8);

}  // namespace panthor
