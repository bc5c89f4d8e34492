// Regression test of fuzz_panfrost_ioctl (docs/fuzzing.md): every input under
// fuzz/crashes/fuzz_panfrost_ioctl/ and fuzz/corpus/fuzz_panfrost_ioctl/ is replayed through the
// target's own decoder and executor (fuzz/panfrost_ops.h) on one panfrost device, as the fuzzer
// runs them, and must come out clean: every out fence signalled, no leak, no kshim report,
// nothing blocked, no sanitizer error. UPANTHOR_FUZZ_TRACE=1 prints each program's calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "fuzz/panfrost_ops.h"
#include "fuzz/panfrost_world.h"

namespace {

namespace fs = std::filesystem;
using upanthor_fuzz::PanfrostWorld;

std::vector<uint8_t> read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::vector<fs::path> inputs_of(const char* kind) {
    std::vector<fs::path> files;
    const fs::path dir = fs::path(UPANTHOR_SOURCE_DIR) / "fuzz" / kind / "fuzz_panfrost_ioctl";
    if (fs::is_directory(dir))
        for (const auto& e : fs::directory_iterator(dir))
            if (e.is_regular_file())
                files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
}

void replay_all(const std::vector<fs::path>& inputs) {
    PanfrostWorld world;
    ASSERT_EQ(world.probe_result(), 0);
    for (const fs::path& p : inputs) {
        const std::vector<uint8_t> data = read_file(p);
        std::string trace;
        upanthor_fuzz::PanfrostProgramOptions opts;
        opts.trace = &trace;
        EXPECT_EQ(upanthor_fuzz::run_panfrost_program(world, data.data(), data.size(), opts), "") << p << "\nprogram:\n"
                                                                                                  << trace;
        if (std::getenv("UPANTHOR_FUZZ_TRACE"))
            std::fprintf(stderr, "%s:\n%s", p.filename().c_str(), trace.c_str());
    }
    EXPECT_EQ(world.finish(), "");
}

TEST(FuzzPanfrostRegression, CorpusReplaysClean) {
    const std::vector<fs::path> seeds = inputs_of("corpus");
    ASSERT_GE(seeds.size(), 10u) << "the seeds of fuzz/corpus/fuzz_panfrost_ioctl (upanthor_fuzz_seeds)";
    replay_all(seeds);
}

TEST(FuzzPanfrostRegression, CrashesReplayClean) {
    replay_all(inputs_of("crashes"));
}

// The decoder reads every byte string: empty, all zeros, all ones, every op byte alone.
TEST(FuzzPanfrostRegression, AnyBytesAreAProgram) {
    PanfrostWorld world;
    ASSERT_EQ(world.probe_result(), 0);
    std::vector<std::vector<uint8_t>> inputs = {{}, std::vector<uint8_t>(64, 0), std::vector<uint8_t>(64, 0xff)};
    for (uint8_t op = 0; op < upanthor_fuzz::kPanfrostOpCount; op++)
        inputs.push_back({1, 47, op, 0, op, 1, op, 0});
    for (const auto& in : inputs) {
        std::string trace;
        upanthor_fuzz::PanfrostProgramOptions opts;
        opts.trace = &trace;
        EXPECT_EQ(upanthor_fuzz::run_panfrost_program(world, in.data(), in.size(), opts), "") << trace;
    }
    EXPECT_EQ(world.finish(), "");
}

// A few hundred seeded random programs (UPANTHOR_PANFROST_FUZZ_RUNS sets how many): a smoke run
// of the decoder over inputs no seed covers, with the same checks as the fuzzer's.
TEST(FuzzPanfrostRegression, SeededRandomProgramsRunClean) {
    const char* env = std::getenv("UPANTHOR_PANFROST_FUZZ_RUNS");
    const unsigned runs = env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : 200;
    PanfrostWorld world;
    ASSERT_EQ(world.probe_result(), 0);
    std::mt19937_64 rng(0x9a4f);
    for (unsigned i = 0; i < runs; i++) {
        std::vector<uint8_t> in(16 + rng() % 240);
        for (uint8_t& b : in)
            b = static_cast<uint8_t>(rng());
        std::string trace;
        upanthor_fuzz::PanfrostProgramOptions opts;
        opts.trace = &trace;
        const std::string problems = upanthor_fuzz::run_panfrost_program(world, in.data(), in.size(), opts);
        ASSERT_EQ(problems, "") << "random program " << i << "\n" << trace;
    }
    EXPECT_EQ(world.finish(), "");
}

}  // namespace
