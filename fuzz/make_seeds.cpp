// (no upstream counterpart) Writes the hand-made seeds of fuzz/corpus/: the mock firmware image
// and variants for fuzz_fw_image, command streams for fuzz_cs. The fuzz_ioctl and fuzz_gpuvm
// seeds are generated instead (a short fuzzing run merged with -merge=1; docs/fuzzing.md).
//   upanthor_fuzz_seeds <fuzz/corpus>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "fuzz/cs_program.h"
#include "fuzz/fw_image_program.h"
#include "hw/csf/cs_isa.h"

namespace cs = panthor::cs;

static void put(const std::string& dir, const std::string& name, const std::vector<uint8_t>& bytes) {
    std::filesystem::create_directories(dir);
    FILE* f = std::fopen((dir + "/" + name).c_str(), "wb");
    if (!f) {
        std::perror(name.c_str());
        return;
    }
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
}

static std::vector<uint8_t> stream(uint8_t head, const std::vector<uint64_t>& words) {
    std::vector<uint8_t> b(1 + 8 * words.size());
    b[0] = head;
    std::memcpy(b.data() + 1, words.data(), 8 * words.size());
    return b;
}

int main(int argc, char** argv) {
    const std::string root = argc > 1 ? argv[1] : "fuzz/corpus";
    // fuzz_fw_image
    const std::string fw = root + "/fuzz_fw_image";
    const std::vector<uint8_t> img = upanthor_fuzz::default_fw_image_bytes();
    put(fw, "default", img);
    put(fw, "header_only", std::vector<uint8_t>(img.begin(), img.begin() + std::min<size_t>(32, img.size())));
    std::vector<uint8_t> bad = img;
    bad[0] ^= 0xff;
    put(fw, "bad_magic", bad);
    put(fw, "truncated_half", std::vector<uint8_t>(img.begin(), img.begin() + img.size() / 2));
    // fuzz_cs (registers from the prologue: d0 scratch, d2 sync word, r4 = 1, d16.. shaders)
    const std::string c = root + "/fuzz_cs";
    put(c, "nop", stream(0, {cs::nop()}));
    put(c, "store", stream(0, {cs::store_multiple(4, 0, 0x1)}));
    put(c, "store_unmapped", stream(0, {cs::store_multiple(0, 4, 0x1)}));
    put(c, "sync_add_wait", stream(0, {cs::sync_add64(2, 4), cs::sync_wait64(2, 4, cs::GEQUAL)}));
    put(c, "run_compute", stream(0, {cs::run_compute(1), cs::wait(1)}));
    put(c, "run_write_shader", stream(0, {cs::run_compute(1, cs::AXIS_X, false, 0, 1), cs::wait(1)}));
    put(c, "run_hang_shader", stream(0, {cs::run_compute(1, cs::AXIS_X, false, 0, 2), cs::wait(1)}));
    put(c, "run_fault_shader", stream(0, {cs::run_compute(1, cs::AXIS_X, false, 0, 3), cs::wait(1)}));
    put(c, "run_fragment", stream(0, {cs::run_fragment(), cs::wait(1)}));
    put(c, "branch_loop", stream(0, {cs::move32(6, 1), cs::branch(cs::ALWAYS, 6, -1)}));
    put(c, "branch_loop_no_budget", stream(4, {cs::move32(6, 1), cs::branch(cs::ALWAYS, 6, -1)}));
    put(c, "jump_to_start", stream(0, {cs::move48(8, upanthor_fuzz::kCsVa), cs::move32(10, 8), cs::jump(8, 10)}));
    put(c, "invalid_opcode", stream(0, {0xff00000000000000ull}));
    put(c, "sync_wait_forever", stream(0, {cs::sync_wait64(2, 4, cs::GREATER)}));
    put(c, "sync_wait_timeout", stream(1, {cs::sync_wait64(2, 4, cs::GREATER)}));
    put(c, "error_barrier",
        stream(0, {cs::run_compute(1, cs::AXIS_X, false, 0, 3), cs::wait(1), cs::error_barrier(),
                   cs::store_multiple(4, 0, 0x1)}));
    std::printf("seeds written under %s\n", root.c_str());
    return 0;
}
