// (no upstream counterpart) fuzz_ioctl's decoder and executor, syzkaller-style: an input is a
// program of 1-64 calls on one panthor device through one to three open files. Every panthor
// and DRM core ioctl is generated with structure-aware arguments (handles and ids drawn from
// what earlier calls created, in any file; sizes and flags biased to edges; obj_arrays with odd
// strides and counts; user pointers valid, short or unmapped in the uaccess registry), plus
// mmap/munmap, CPU writes through a mapping, close/reopen of a file and virtual time passing.
// After the program everything is released and the world's checks run.
//
// Kept apart from the libFuzzer entry point so that the regression tests replay a saved input
// through exactly this code (tests/fuzz/).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/panthor_world.h"

namespace upanthor_fuzz {

struct IoctlProgramOptions {
    // When set, one line per call ("  3 f1 VM_BIND(vm=1 ops=2) = 0") is appended (triage).
    std::string* trace = nullptr;
    // When set, the op value each call decodes to is appended, also for a call that finds no
    // open file: tests/fuzz/ioctl_ops_test.cpp pins what the saved inputs decode to.
    std::vector<uint8_t>* ops = nullptr;
};

// Runs the program `data` decodes to on `world` (which must have a probed device), releases
// everything it made, then runs world.check(). Returns "" or what went wrong.
std::string run_ioctl_program(PanthorWorld& world, const uint8_t* data, size_t size,
                              const IoctlProgramOptions& opts = {});

// Runs a world's history (fuzz/world_history.h) on `world`, which must be freshly booted: each
// input as run_ioctl_program does, stopping at the first that goes wrong. Returns "" or what
// went wrong, naming the input ("history input 7 of 12: ...").
std::string run_ioctl_history(PanthorWorld& world, const std::vector<std::vector<uint8_t>>& inputs,
                              const IoctlProgramOptions& opts = {});

// Rewrites command-stream words so that a stream cannot loop or branch away on its own:
// BRANCH offsets become forward, JUMP and CALL become NOP. Shared with fuzz_cs's loop-free mode.
uint64_t cs_sanitize_word(uint64_t word);

}  // namespace upanthor_fuzz
