// upanthor_mkfw: writes the mock GPU's default firmware image (mali_csffw.bin format, see
// mock_hw/fw_image.h), so the driver loads firmware from a file as it would on real hardware.
//   upanthor_mkfw [-o PATH] [--groups N] [--streams N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mock_hw/fw_image.h"

int main(int argc, char** argv) {
    std::string out = "mali_csffw.bin";
    mock_hw::McuConfig mcu;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if ((a == "-o" || a == "--output") && i + 1 < argc) {
            out = argv[++i];
        } else if (a == "--groups" && i + 1 < argc) {
            mcu.group_num = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 0));
        } else if (a == "--streams" && i + 1 < argc) {
            mcu.stream_num = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 0));
        } else {
            std::fprintf(stderr, "usage: %s [-o PATH] [--groups N] [--streams N]\n", argv[0]);
            return 2;
        }
    }
    std::vector<kshim::u8> bytes = mock_hw::write_fw_image(mock_hw::default_fw_image(mcu));
    FILE* f = std::fopen(out.c_str(), "wb");
    if (!f || std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size() || std::fclose(f) != 0) {
        std::fprintf(stderr, "upanthor_mkfw: cannot write %s: %s\n", out.c_str(), std::strerror(errno));
        return 1;
    }
    return 0;
}
