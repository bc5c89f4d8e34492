// Where the mock firmware puts the interface blocks inside the shared section (MCU VA
// 0x04000000). panthor finds everything by following the control blocks, so only the fixed
// offsets of docs/hw/csf/fw-interfaces.md matter to it (GLB control at 0, CSG i control at
// 0x1000 + i * group_stride, CS j control at +0x40 + j * stream_stride); the rest is our choice.
// The default firmware image sizes its shared section with required_size().
#pragma once
#include "hw/csf/fw_iface.h"
#include "kernel_shim/types.h"

namespace mock_hw {

using kshim::u32;

struct McuLayout {
    u32 group_num = 8;
    u32 stream_num = 8;

    static constexpr u32 kShared = panthor::CSF_MCU_SHARED_REGION_START;
    static constexpr u32 kGlbControl = 0x0;
    static constexpr u32 kGlbInput = 0x100;
    static constexpr u32 kGlbOutput = 0x200;
    static constexpr u32 kStreamStride = 0x10;  // CS control blocks are 0xC bytes
    static constexpr u32 kCsgInputSize = 0x80;
    static constexpr u32 kCsgOutputSize = 0x80;
    static constexpr u32 kCsInputSize = 0x80;
    static constexpr u32 kCsOutputSize = 0x100;

    static constexpr u32 align(u32 x, u32 a) { return (x + a - 1) & ~(a - 1); }

    u32 group_stride() const { return align(panthor::CSF_STREAM_CONTROL_OFFSET + stream_num * kStreamStride, 0x100); }
    u32 csg_control(u32 i) const { return panthor::CSF_GROUP_CONTROL_OFFSET + i * group_stride(); }
    u32 cs_control(u32 i, u32 j) const {
        return csg_control(i) + panthor::CSF_STREAM_CONTROL_OFFSET + j * kStreamStride;
    }
    // Input/output blocks follow the control blocks, one page-aligned area per CSG.
    u32 io_base() const { return align(csg_control(group_num), 0x1000); }
    u32 csg_io_stride() const {
        return align(kCsgInputSize + kCsgOutputSize + stream_num * (kCsInputSize + kCsOutputSize), 0x1000);
    }
    u32 csg_input(u32 i) const { return io_base() + i * csg_io_stride(); }
    u32 csg_output(u32 i) const { return csg_input(i) + kCsgInputSize; }
    u32 cs_input(u32 i, u32 j) const { return csg_output(i) + kCsgOutputSize + j * kCsInputSize; }
    u32 cs_output(u32 i, u32 j) const {
        return csg_output(i) + kCsgOutputSize + stream_num * kCsInputSize + j * kCsOutputSize;
    }
    // Bytes of the shared section the interface occupies.
    u32 required_size() const { return io_base() + group_num * csg_io_stride(); }
};

static_assert(sizeof(panthor::panthor_fw_global_input_iface) <= McuLayout::kGlbOutput - McuLayout::kGlbInput);
static_assert(sizeof(panthor::panthor_fw_csg_input_iface) <= McuLayout::kCsgInputSize);
static_assert(sizeof(panthor::panthor_fw_csg_output_iface) <= McuLayout::kCsgOutputSize);
static_assert(sizeof(panthor::panthor_fw_cs_input_iface) <= McuLayout::kCsInputSize);
static_assert(sizeof(panthor::panthor_fw_cs_output_iface) <= McuLayout::kCsOutputSize);
static_assert(sizeof(panthor::panthor_fw_cs_control_iface) <= McuLayout::kStreamStride);

}  // namespace mock_hw
