// (no upstream counterpart) libFuzzer target: arbitrary bytes as the firmware file given to
// probe (fuzz/fw_image_program.h). A finding aborts, so libFuzzer saves the input.
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "fuzz/fw_image_program.h"
#include "fuzz/panthor_world.h"
#include "hw/csf/fw_image_format.h"

namespace {
// The MCU VA bytes the image's section entries ask for, as panthor's loader walks them. The
// loader allocates and maps every section (as upstream's does: the firmware is trusted), so an
// image asking for gigabytes is as costly here as there; such inputs are skipped, like the huge
// BOs of fuzz_ioctl, so that the RSS limit only catches real leaks.
uint64_t section_bytes(const uint8_t* data, size_t size) {
    using namespace panthor;
    panthor_fw_binary_hdr hdr;
    if (size < sizeof(hdr))
        return 0;
    std::memcpy(&hdr, data, sizeof(hdr));
    const size_t end = std::min<size_t>(size, hdr.size);
    uint64_t total = 0;
    for (size_t off = sizeof(hdr); off + sizeof(uint32_t) <= end;) {
        uint32_t ehdr;
        std::memcpy(&ehdr, data + off, sizeof(ehdr));
        const size_t esize = CSF_FW_BINARY_ENTRY_SIZE(ehdr);
        if (esize < sizeof(uint32_t) || off + esize > end)
            break;
        panthor_fw_binary_section_entry_hdr sec;
        if (CSF_FW_BINARY_ENTRY_TYPE(ehdr) == CSF_FW_BINARY_ENTRY_TYPE_IFACE &&
            esize >= sizeof(uint32_t) + sizeof(sec)) {
            std::memcpy(&sec, data + off + sizeof(uint32_t), sizeof(sec));
            if (sec.va.end > sec.va.start)
                total += sec.va.end - sec.va.start;
        }
        off += esize;
    }
    return total;
}
constexpr uint64_t kMaxSectionBytes = 16ull << 20;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char*** argv) {
    upanthor_fuzz::fuzz_init_env(argv && *argv ? (*argv)[0] : nullptr);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (section_bytes(data, size) > kMaxSectionBytes)
        return 0;
    static auto* world = new upanthor_fuzz::PanthorWorld(upanthor_fuzz::PanthorWorld::Kind::Platform);
    const std::string problems = upanthor_fuzz::run_fw_image(*world, data, size);
    if (!problems.empty())
        upanthor_fuzz::fuzz_fail(problems);
    return 0;
}
