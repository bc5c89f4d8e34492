// Tests of fuzz_ioctl's device history (fuzz/world_history.h, docs/fuzzing.md "Findings that
// need earlier inputs"): the file holds every input before it runs and survives a process that
// dies; a history replays on a fresh device with the same calls and the same results; anything
// that is not a whole history is an ordinary input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/ioctl_program.h"
#include "fuzz/panthor_world.h"
#include "fuzz/world_history.h"

namespace {

namespace fs = std::filesystem;
using upanthor_fuzz::PanthorWorld;
using upanthor_fuzz::WorldHistoryRecorder;
using upanthor_fuzz::WorldInputs;

std::vector<uint8_t> read_file(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

fs::path temp_path(const std::string& name) {
    return fs::path(::testing::TempDir()) / (name + "-" + std::to_string(::getpid()));
}

TEST(WorldHistory, TheFileHoldsEveryInputOnceItIsRecorded) {
    const fs::path path = temp_path("history");
    const WorldInputs inputs = {{1, 2, 3}, {}, std::vector<uint8_t>(300, 0xab)};
    {
        WorldHistoryRecorder rec(path.string(), 4096, 16);
        for (const auto& in : inputs) {
            ASSERT_TRUE(rec.fits(in.size()));
            rec.record(in.data(), in.size());
            // What a process that dies now leaves behind: read by another file handle.
            const std::vector<uint8_t> bytes = read_file(path);
            const auto parsed = upanthor_fuzz::parse_world_history(bytes.data(), bytes.size());
            ASSERT_TRUE(parsed.has_value());
            EXPECT_EQ(parsed->size(), rec.count());
            EXPECT_EQ(parsed->back(), in);
        }
        const std::vector<uint8_t> bytes = read_file(path);
        EXPECT_EQ(upanthor_fuzz::parse_world_history(bytes.data(), bytes.size()), inputs);
        // The file is the serialized history (whose header gives its length), then zeros.
        const std::vector<uint8_t> whole = upanthor_fuzz::serialize_world_history(inputs);
        ASSERT_EQ(bytes.size(), 4096u);
        EXPECT_TRUE(std::equal(whole.begin(), whole.end(), bytes.begin()));
        EXPECT_TRUE(std::all_of(bytes.begin() + whole.size(), bytes.end(), [](uint8_t b) { return b == 0; }));
    }
    // A clean exit removes it.
    EXPECT_FALSE(fs::exists(path));
}

TEST(WorldHistory, AFullHistoryAsksForANewWorldAndStartsAgain) {
    WorldHistoryRecorder by_count("", 4096, 2);
    const uint8_t b[8] = {};
    by_count.record(b, 8);
    by_count.record(b, 8);
    EXPECT_FALSE(by_count.fits(0));
    by_count.begin_world();
    EXPECT_EQ(by_count.count(), 0u);
    EXPECT_TRUE(by_count.fits(8));

    // 16 bytes of header, then 4 + 40 per input: two fit in 108 bytes, a third does not, an
    // empty one still does.
    WorldHistoryRecorder by_size("", 108, 64);
    const std::vector<uint8_t> big(40, 7);
    by_size.record(big.data(), big.size());
    by_size.record(big.data(), big.size());
    EXPECT_FALSE(by_size.fits(big.size()));
    EXPECT_TRUE(by_size.fits(0));
}

TEST(WorldHistory, AnInputLargerThanTheFileLeavesTheHistoryEmpty) {
    WorldHistoryRecorder rec("", 64, 8);
    const uint8_t b[4] = {1, 2, 3, 4};
    rec.record(b, 4);
    const std::vector<uint8_t> huge(1000, 1);
    rec.record(huge.data(), huge.size());
    // A history without the input that ran would claim a past it does not hold.
    EXPECT_EQ(rec.count(), 0u);
}

TEST(WorldHistory, OnlyAWholeHistoryParses) {
    const WorldInputs inputs = {{9, 9}, {1}};
    const std::vector<uint8_t> bytes = upanthor_fuzz::serialize_world_history(inputs);
    EXPECT_EQ(upanthor_fuzz::parse_world_history(bytes.data(), bytes.size()), inputs);
    // Cut anywhere: an ordinary input, not a shorter history.
    for (size_t n = 0; n < bytes.size(); ++n)
        EXPECT_FALSE(upanthor_fuzz::parse_world_history(bytes.data(), n).has_value()) << n;
    // Without the magic.
    std::vector<uint8_t> other = bytes;
    other[0] ^= 1;
    EXPECT_FALSE(upanthor_fuzz::parse_world_history(other.data(), other.size()).has_value());
    // A count larger than what follows.
    std::vector<uint8_t> lying = bytes;
    lying[8] = 3;  // the count
    EXPECT_FALSE(upanthor_fuzz::parse_world_history(lying.data(), lying.size()).has_value());
    // The empty history is one.
    const std::vector<uint8_t> none = upanthor_fuzz::serialize_world_history({});
    EXPECT_EQ(upanthor_fuzz::parse_world_history(none.data(), none.size()), WorldInputs{});
}

// The trace without the "history input N of M:" lines the history replay adds.
std::string calls_only(const std::string& trace) {
    std::istringstream in(trace);
    std::string out;
    for (std::string line; std::getline(in, line);)
        if (line.rfind("history input ", 0) != 0)
            out += line + "\n";
    return out;
}

// The seeds, in order: programs that create, bind, submit, fault and reset.
WorldInputs seeds() {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(fs::path(UPANTHOR_SOURCE_DIR) / "fuzz/corpus/fuzz_ioctl"))
        files.push_back(e.path());
    std::sort(files.begin(), files.end());
    WorldInputs out;
    for (const auto& f : files)
        out.push_back(read_file(f));
    return out;
}

// A fuzzer's device has run other inputs and been rebooted before the ones its history holds;
// the replay runs them on a device booted once. Both must see the same calls and results.
TEST(WorldHistory, AHistoryReplaysWithTheSameCallsAndResultsOnAFreshDevice) {
    const WorldInputs all = seeds();
    ASSERT_GT(all.size(), 10u);
    const WorldInputs before(all.begin(), all.begin() + 5);
    const WorldInputs history(all.begin() + 5, all.end());

    std::string recorded;
    {
        PanthorWorld world(PanthorWorld::Kind::Driver);
        ASSERT_EQ(world.probe_result(), 0);
        for (const auto& in : before)
            ASSERT_EQ(upanthor_fuzz::run_ioctl_program(world, in.data(), in.size()), "");
        ASSERT_EQ(world.reboot(), "");
        upanthor_fuzz::IoctlProgramOptions opts;
        opts.trace = &recorded;
        for (const auto& in : history)
            ASSERT_EQ(upanthor_fuzz::run_ioctl_program(world, in.data(), in.size(), opts), "");
        EXPECT_EQ(world.finish(), "");
    }
    const std::vector<uint8_t> file = upanthor_fuzz::serialize_world_history(history);
    const auto parsed = upanthor_fuzz::parse_world_history(file.data(), file.size());
    ASSERT_TRUE(parsed.has_value());
    std::string replayed;
    {
        PanthorWorld world(PanthorWorld::Kind::Driver);
        ASSERT_EQ(world.probe_result(), 0);
        upanthor_fuzz::IoctlProgramOptions opts;
        opts.trace = &replayed;
        EXPECT_EQ(upanthor_fuzz::run_ioctl_history(world, *parsed, opts), "");
        EXPECT_EQ(world.finish(), "");
    }
    EXPECT_NE(recorded, "");
    EXPECT_EQ(calls_only(replayed), recorded);
}

}  // namespace
