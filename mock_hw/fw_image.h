// The mali_csffw.bin firmware image (docs/hw/csf/firmware-image.md): an in-memory model, a writer,
// and a reader that validates like panthor_fw.c's loader does, plus the default image our MCU model
// boots. The default image's code section starts with a MockFwHeader, which the MCU checks when it
// boots (a real MCU would execute the code there).
#pragma once
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kernel_shim/types.h"
#include "mock_hw/config.h"

namespace mock_hw {

using kshim::u32;
using kshim::u8;

struct FwSection {
    std::string name;
    u32 flags = 0;  // CSF_FW_BINARY_IFACE_ENTRY_*
    u32 va_start = 0;
    u32 va_end = 0;        // exclusive
    std::vector<u8> data;  // initial contents (may be shorter than the section: ZERO fills)
};

// An entry the reader does not interpret (CONFIG, TRACE_BUFFER...): kept for round trips.
struct FwOtherEntry {
    u32 type = 0;
    bool optional = false;
    std::vector<u8> payload;
};

struct FwImage {
    u8 minor = 0;
    u8 major = 0;
    u32 version_hash = 0;
    std::vector<FwSection> sections;
    std::optional<std::string> git_sha;  // BUILD_INFO_METADATA "git_sha: <sha>"
    std::vector<FwOtherEntry> others;

    const FwSection* find(u32 va_start) const;
};

// Serialises `img`; section data and the build-info string follow the entries.
std::vector<u8> write_fw_image(const FwImage& img);

// Parses and validates like panthor's loader: -EINVAL for a bad magic, a major above
// CSF_FW_BINARY_HEADER_MAJOR_MAX, a size larger than the file, a misaligned or overlong entry,
// an unknown non-optional entry, unsupported section flags, inverted or out-of-file data ranges,
// unaligned VAs, or no shared section at CSF_MCU_SHARED_REGION_START. A bad build-info entry is
// not fatal (git_sha stays empty), as in panthor.
int parse_fw_image(std::span<const u8> bytes, FwImage* out);

// The code-section header of our mock firmware (at MCU VA kMockFwCodeVa).
struct MockFwHeader {
    u32 magic;
    u32 abi;
    u32 group_num;
    u32 stream_num;
};
inline constexpr u32 kMockFwMagic = 0x57465055;  // "UPFW"
inline constexpr u32 kMockFwAbi = 1;
inline constexpr u32 kMockFwCodeVa = 0x0;
inline constexpr u32 kMockFwDataVa = 0x00100000;

// The image the MCU model expects: a code section (RD|EX, cached) at 0 starting with a
// MockFwHeader, a small data section (RD|WR, zero-filled), and the shared interface section
// (RD|WR|SHARED|ZERO, uncached) at 0x04000000 sized for `mcu`'s group/stream counts.
FwImage default_fw_image(const McuConfig& mcu = {});

}  // namespace mock_hw
