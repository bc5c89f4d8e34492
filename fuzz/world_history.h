// (no upstream counterpart) The inputs a fuzz_ioctl world has run since it booted, kept so that
// a finding that depends on state left by earlier inputs still replays from files alone.
//
// A fuzzer keeps one world per process (booting costs milliseconds), so the state an input
// meets is the sum of every input before it; libFuzzer saves only the last one. The recorder
// appends every input to a file mapped into memory before it runs: when the process dies (a
// finding, a timeout, a sanitizer report, a segfault) the file already holds the world's whole
// past, with no work on the crash path. The world is rebooted when the file is full, which
// bounds both the file and the replay. On a clean exit the file is removed.
//
// File layout (little-endian): the 8-byte magic "UPHHIST1", a u32 count, a u32 of the bytes in
// use (this header included; the rest of the file is zeros), then `count` entries of a u32
// length and that many input bytes, oldest first; the last entry is the input that was running
// when the process stopped. scripts/fuzz-history.sh trims a file to its bytes in use.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace upanthor_fuzz {

using WorldInputs = std::vector<std::vector<uint8_t>>;

// The inputs of a history file's bytes, or nullopt when `data` is not one (no magic, or
// truncated: then it is an ordinary input).
std::optional<WorldInputs> parse_world_history(const uint8_t* data, size_t size);

// The bytes of a history file holding `inputs` (tests, and tools that build one by hand).
std::vector<uint8_t> serialize_world_history(const WorldInputs& inputs);

class WorldHistoryRecorder {
public:
    // Creates (truncating) `path`, `capacity` bytes long, for at most `max_inputs` inputs per
    // world. An empty path records in memory only. Throws std::runtime_error when the file
    // cannot be made.
    WorldHistoryRecorder(std::string path, size_t capacity, size_t max_inputs);
    // Removes the file: a process that gets here exited cleanly.
    ~WorldHistoryRecorder();
    WorldHistoryRecorder(const WorldHistoryRecorder&) = delete;
    WorldHistoryRecorder& operator=(const WorldHistoryRecorder&) = delete;

    // A fresh world: forgets the inputs so far.
    void begin_world();
    // Whether an input of `size` bytes still fits; when not, the caller reboots the world and
    // calls begin_world() first.
    bool fits(size_t size) const;
    // Appends an input. One that does not fit even a fresh world (larger than the file) leaves
    // the history empty, so that no file claims a past it does not hold.
    void record(const uint8_t* data, size_t size);
    size_t count() const;
    const std::string& path() const { return path_; }

private:
    std::string path_;
    uint8_t* map_ = nullptr;
    size_t capacity_ = 0;
    size_t max_inputs_ = 0;
    size_t used_ = 0;
    std::vector<uint8_t> mem_;  // the backing when there is no file
};

}  // namespace upanthor_fuzz
