// Valhall (v10) job descriptors that the RUN_* instructions point at: what a CSF GPU reads from
// memory before any shader runs. Only the fields the mock checks or sizes a job by are named;
// the rest stay opaque words. Layouts: docs/hw/csf/descriptors.md (Mesa's genxml v10.xml is the
// public source of these facts).
#pragma once
#include <cstddef>
#include <cstdint>

namespace panthor::valhall {

// Descriptor Type, bits [3:0] of the first word of most descriptors.
enum DescriptorType : uint32_t {
    kDescNull = 0,
    kDescSampler = 1,
    kDescTexture = 2,
    kDescAttribute = 5,
    kDescDepthStencil = 7,
    kDescShader = 8,
    kDescBuffer = 9,
    kDescPlane = 10,
};

// Shader stage, bits [7:4] of a Shader Program Descriptor.
enum ShaderStage : uint32_t { kStageCompute = 1, kStageFragment = 2, kStageVertex = 3 };

// Shader Program Descriptor (SPD): 32 bytes, 32-byte aligned.
struct ShaderProgram {
    uint32_t word0;  // type [3:0], stage [7:4], flags
    uint32_t preload;
    uint64_t binary;  // GPU VA of the shader's first instruction
    uint32_t reserved[4];
};
static_assert(sizeof(ShaderProgram) == 32 && offsetof(ShaderProgram, binary) == 8);
constexpr uint32_t spd_type(uint32_t word0) {
    return word0 & 0xF;
}
constexpr uint32_t spd_stage(uint32_t word0) {
    return (word0 >> 4) & 0xF;
}

// Thread Storage Descriptor (TSD, "Local Storage"): 32 bytes, 64-byte aligned.
struct LocalStorage {
    uint32_t tls_size;  // [4:0]
    uint32_t wls;       // instances, size base and scale
    uint64_t tls_base;  // [47:0] VA, address mode [63:60]
    uint64_t wls_base;
    uint64_t reserved;
};
static_assert(sizeof(LocalStorage) == 32);

// Resource table entry: 32 bytes, 64-byte aligned. A resource-table pointer (SRT) carries the
// entry count in its low 6 bits (the table is 64-byte aligned).
struct Resource {
    uint64_t address;  // [55:0] VA of the descriptors, bit 56 "contains descriptors"
    uint64_t size;     // bytes
    uint64_t reserved[2];
};
static_assert(sizeof(Resource) == 32);
constexpr uint64_t kSrtCountMask = 0x3F;

// A FAU (fast-access uniforms) pointer: VA in [55:0], the count of 64-bit entries in [63:56].
constexpr uint64_t kFauAddrMask = (uint64_t{1} << 56) - 1;
constexpr uint32_t fau_count(uint64_t fau) {
    return static_cast<uint32_t>(fau >> 56);
}

// RUN_COMPUTE r33: the packed workgroup size, each axis stored minus one.
constexpr uint32_t wg_size_x(uint32_t r33) {
    return (r33 & 0x3FF) + 1;
}
constexpr uint32_t wg_size_y(uint32_t r33) {
    return ((r33 >> 10) & 0x3FF) + 1;
}
constexpr uint32_t wg_size_z(uint32_t r33) {
    return ((r33 >> 20) & 0x3FF) + 1;
}

// RUN_FRAGMENT d40, the framebuffer pointer: bit 0 type (1 = this multi-target framebuffer
// format), bit 1 a ZS/CRC extension follows the parameters, [5:2] render targets minus one,
// [63:6] the 64-byte-aligned VA of the Framebuffer Parameters.
constexpr bool fbd_ptr_is_mfbd(uint64_t p) {
    return (p & 1) != 0;
}
constexpr bool fbd_ptr_has_zs_crc(uint64_t p) {
    return (p & 2) != 0;
}
constexpr uint32_t fbd_ptr_rt_count(uint64_t p) {
    return static_cast<uint32_t>((p >> 2) & 0xF) + 1;
}
constexpr uint64_t fbd_ptr_addr(uint64_t p) {
    return p & ~uint64_t{0x3F};
}

// Framebuffer Parameters: 64 bytes, then 64 bytes of padding, the optional 64-byte ZS/CRC
// extension and one 64-byte Render Target per target.
struct FramebufferParameters {
    uint32_t word0;  // pre/post-frame shader modes, layer index
    uint32_t word1;
    uint64_t frame_argument;
    uint64_t sample_locations;
    uint64_t frame_shader_dcds;
    uint32_t size;       // width - 1 [15:0], height - 1 [31:16]
    uint32_t bound_min;  // x [15:0], y [31:16]
    uint32_t bound_max;  // x [15:0], y [31:16]
    uint32_t word11;     // samples, tile size log2 [12:9], render targets - 1 [22:19]
    uint32_t word12;     // Z/S clear, write, preload enables
    uint32_t z_clear;    // float
    uint64_t tiler;      // the Tiler Context's VA
};
static_assert(sizeof(FramebufferParameters) == 64 && offsetof(FramebufferParameters, size) == 32 &&
              offsetof(FramebufferParameters, word11) == 44 && offsetof(FramebufferParameters, tiler) == 56);
constexpr uint32_t kFramebufferHeaderSize = 128;  // parameters + padding
constexpr uint32_t kZsCrcExtensionSize = 64;
constexpr uint32_t kRenderTargetSize = 64;
constexpr uint32_t fbd_effective_tile_size(uint32_t word11) {
    return 1u << ((word11 >> 9) & 0xF);  // pixels per tile
}
constexpr uint32_t fbd_width(uint32_t size) {
    return (size & 0xFFFF) + 1;
}
constexpr uint32_t fbd_height(uint32_t size) {
    return (size >> 16) + 1;
}

// Tiler Context: 32-byte header of a 64-byte-aligned descriptor (the tiler's private state
// follows at +96).
struct TilerContextHeader {
    uint64_t polygon_list;
    uint32_t word2;    // hierarchy mask, sample pattern
    uint32_t fb_size;  // width - 1 [15:0], height - 1 [31:16]
    uint32_t word4;    // layer count - 1, layer offset
    uint32_t word5;
    uint64_t heap;  // the Tiler Heap descriptor's VA
};
static_assert(sizeof(TilerContextHeader) == 32 && offsetof(TilerContextHeader, heap) == 24);

// A RUN_FRAGMENT / RUN_FULLSCREEN bounding box register (r42 min, r43 max): x [15:0], y [31:16],
// in pixels, inclusive.
constexpr uint32_t bbox_x(uint32_t r) {
    return r & 0xFFFF;
}
constexpr uint32_t bbox_y(uint32_t r) {
    return r >> 16;
}

}  // namespace panthor::valhall
