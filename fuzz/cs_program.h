// (no upstream counterpart) fuzz_cs's executor: the input's 64-bit words become a command
// stream that a group of the probed driver runs on a CSG slot of the mock GPU, so the mock's
// command-stream engine interprets arbitrary instructions and the driver handles whatever
// follows (faults, fatal errors, timeouts) and recovers the group.
//
// Layout. One BO mapped at kCsVa in a VM of the fuzzer's file (made once per world): the stream
// at its start, data from kCsDataOffset holding one mock shader descriptor per kind and zeroed
// sync words. A fixed prologue loads useful addresses into registers (d0/d2: data and a sync
// word, d16 the Run shader, d40 the fragment descriptor, ...) so short inputs reach deep paths.
//
// Bounds. An instruction budget (a CS_FATAL injected at the kCsBudget-th instruction through the
// mock's fault plan) ends streams that loop in MOVE/BRANCH/JUMP; a stream that blocks is given
// kCsWait of virtual time before the group is destroyed (or, when the input's first byte asks
// for it, the driver's job timeout runs its course). Inputs may turn the budget off: then the
// mock's progress timer (which also fires for streams spinning without a core) must end a loop,
// at the cost of millions of interpreted instructions (see docs/fuzzing.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz/panthor_world.h"

namespace upanthor_fuzz {

inline constexpr uint64_t kCsVa = 0x1000000;
inline constexpr uint64_t kCsBoSize = 1ull << 20;
inline constexpr uint64_t kCsDataOffset = 512 * 1024;
inline constexpr uint64_t kCsMaxWords = 4096;
inline constexpr uint64_t kCsBudget = 20000;

struct CsRunResult {
    bool completed = false;  // the job's fence signalled without error
    int fence_status = 0;    // 1 ok, -errno failed, 0 still pending when the group was destroyed
    uint32_t group_state = 0;
};

// The client side made once per world: a file, a VM, the BO mapped on the GPU and the CPU.
class CsRunner {
public:
    explicit CsRunner(PanthorWorld& world);  // `world` must be a Kind::Driver world
    ~CsRunner();                             // releases the file (before the world goes)
    CsRunner(const CsRunner&) = delete;
    CsRunner& operator=(const CsRunner&) = delete;

    // The first input byte: bit 0 = let the driver's job timeout run its course instead of
    // destroying a blocked group after kCsWait; bit 1 = the group's priority (LOW or MEDIUM);
    // bit 2 = no instruction budget (the mock's progress timer must end a spinning stream). Then
    // the words.
    // Returns "" or what the world's checks (or the run) found.
    std::string run(const uint8_t* data, size_t size, CsRunResult* result = nullptr);

private:
    PanthorWorld& world_;
    struct State;
    State* s_;
};

}  // namespace upanthor_fuzz
