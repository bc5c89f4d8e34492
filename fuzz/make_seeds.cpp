// (no upstream counterpart) Writes the hand-made seeds of fuzz/corpus/: the mock firmware image
// and variants for fuzz_fw_image, command streams for fuzz_cs, ioctl programs for
// fuzz_panfrost_ioctl (byte by byte as fuzz/panfrost_ops.h decodes them). The fuzz_ioctl and fuzz_gpuvm
// seeds are generated instead (a short fuzzing run merged with -merge=1; docs/fuzzing.md).
//   upanthor_fuzz_seeds <fuzz/corpus>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <initializer_list>
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
    // fuzz_panfrost_ioctl: [files-1][calls-1] then per call [op][file][arguments...].
    const std::string pf = root + "/fuzz_panfrost_ioctl";
    using B = std::vector<uint8_t>;
    auto cat = [](std::initializer_list<B> parts) {
        B out;
        for (const B& p : parts)
            out.insert(out.end(), p.begin(), p.end());
        return out;
    };
    const B value(8, 0x11);
    const B job_bo = {1, 0, 4};  // CREATE_BO+MMAP, 64 KiB
    // SUBMIT of `kind` after its chain bytes: the chain's BO listed, no more BOs, no in_sync, an
    // out_sync, `req` (pick index), context 0, pad 0, a registered BO list.
    auto submit_tail = [](uint8_t req = 0, uint8_t in_sync = 0) {
        B t = {0, 0};
        if (in_sync)
            t.insert(t.end(), {192, 0, 0});  // one in_sync: the file's first syncobj
        else
            t.push_back(0);
        t.insert(t.end(), {0, req, 0, 0, 0});
        return t;
    };
    const B valid2 = cat({{6, 0, 0, 1, 0}, value, {1}, value});  // 2 WRITE_VALUEs, a NULL between
    const B advance_60ms = {15, 0, 3}, advance_600ms = {15, 0, 4};
    put(pf, "write_value", cat({{0, 9}, job_bo, valid2, submit_tail(), advance_60ms, {5, 0, 0, 0, 3}}));
    put(pf, "endless_timeout", cat({{0, 9}, job_bo, {6, 0, 2}, submit_tail(), advance_600ms, advance_600ms}));
    put(pf, "job_faults",
        cat({{0, 12},
             job_bo,
             {6, 0, 4},
             submit_tail(),
             {6, 0, 5, 7},
             submit_tail(),
             {6, 0, 3, 1},
             submit_tail(),
             advance_60ms}));
    put(pf, "two_files_ctx",
        cat({{1, 12},
             {8, 0, 1},
             job_bo,
             {6, 0, 0, 0, 0},
             value,
             {0, 0, 0, 0, 0, 1, 0, 0},
             {1, 1, 4},
             {6, 1, 1, 3},
             submit_tail(2),
             {14, 0},
             advance_60ms}));
    put(pf, "fault_hang", cat({{0, 9}, {16, 0, 0, 0, 2}, job_bo, valid2, submit_tail(), advance_600ms, advance_600ms}));
    put(pf, "fault_alloc",
        cat({{0, 9}, {16, 0, 8, 5}, job_bo, valid2, submit_tail(), job_bo, valid2, submit_tail(), advance_60ms}));
    put(pf, "fault_irq_lost_next",
        cat({{0, 9}, {16, 0, 3, 0, 2}, job_bo, {6, 0, 1, 7}, submit_tail(), valid2, submit_tail(), advance_600ms}));
    put(pf, "fault_soft_stop_reset",
        cat({{0, 9}, {16, 0, 4, 0, 0}, job_bo, {6, 0, 1, 7}, submit_tail(), {15, 0, 1}, {16, 0, 9}, advance_60ms}));
    put(pf, "syncobj_wait",
        cat({{0, 9}, {10, 0, 200, 0, 0}, job_bo, valid2, submit_tail(0, 1), {12, 0, 0, 0, 0, 0, 1}, advance_60ms}));
    put(pf, "bo_ioctls",
        cat({{0, 47},
             {0, 0, 4, 0, 0, 0},
             {0, 0, 60, 2, 0, 0},
             {2, 0, 0, 0, 1, 0, 0},
             {2, 0, 1, 0},
             {4, 0, 0, 0},
             {5, 0, 0, 0, 0},
             {13, 0, 0, 0},
             {4, 0, 0, 0},
             {3, 0, 5, 0},
             {3, 0, 0, 250, 1},
             {11, 0, 240, 0},
             {17, 0, 0, 2, 0, 2}}));
    std::printf("seeds written under %s\n", root.c_str());
    return 0;
}
