// (no upstream counterpart) libFuzzer target: syzkaller-style programs of panthor and DRM core
// ioctls on one device (fuzz/ioctl_program.h). One device per process, booted at the first
// input; every input is checked for leaks, reports and blocked tasks once it released what it
// made. A finding aborts, so libFuzzer saves the input.
//
// While fuzzing, the inputs the device has run since it booted are kept in a history file next
// to libFuzzer's artifacts (fuzz/world_history.h), and the device is rebooted when the file is
// full: a finding that needs what earlier inputs left behind replays from that file. Given
// files instead of corpus folders (libFuzzer's replay mode), a history file is replayed on a
// freshly booted device, input by input.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "fuzz/ioctl_program.h"
#include "fuzz/panthor_world.h"
#include "fuzz/world_history.h"

namespace {

using upanthor_fuzz::PanthorWorld;
using upanthor_fuzz::WorldHistoryRecorder;

// Bounds one world's past: ~1,000 inputs replay in seconds, and a reboot (milliseconds) every
// ~1,000 inputs costs the fuzzer nothing it would notice.
constexpr size_t kHistoryBytes = 1 << 20;
constexpr size_t kHistoryInputs = 1024;

// Set by LLVMFuzzerInitialize: whether libFuzzer was given only files (it replays them instead
// of fuzzing; only then is an input read as a history), and the recorder while fuzzing.
bool g_replaying_files = false;
WorldHistoryRecorder* g_history = nullptr;

bool is_regular_file(const char* path) {
    struct stat st {};
    return ::stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool only_files_given(int argc, char** argv) {
    bool any = false;
    for (int i = 1; i < argc; ++i) {
        if (argv[i][0] == '-')
            continue;
        if (!is_regular_file(argv[i]))
            return false;
        any = true;
    }
    return any;
}

// Where the history goes: beside libFuzzer's artifacts (-artifact_prefix, or the name given by
// -exact_artifact_path), as "<prefix>history-<pid>".
std::string history_path(int argc, char** argv) {
    std::string prefix;
    for (int i = 1; i < argc; ++i) {
        if (std::strncmp(argv[i], "-artifact_prefix=", 17) == 0)
            prefix = argv[i] + 17;
        if (std::strncmp(argv[i], "-exact_artifact_path=", 21) == 0)
            prefix = std::string(argv[i] + 21) + ".";
    }
    return prefix + "history-" + std::to_string(::getpid());
}

bool history_wanted() {
    const char* e = std::getenv("UPANTHOR_FUZZ_HISTORY");
    return !(e && std::strcmp(e, "0") == 0);
}

PanthorWorld& the_world() {
    static auto* world = [] {
        auto* w = new PanthorWorld(PanthorWorld::Kind::Driver);
        if (w->probe_result())
            upanthor_fuzz::fuzz_fail("probe failed: " + std::to_string(w->probe_result()));
        return w;
    }();
    return *world;
}

void fail_if(const std::string& problems) {
    if (!problems.empty())
        upanthor_fuzz::fuzz_fail(problems);
}

// A history file given to the replay mode: the inputs on a fresh device, then its removal.
void replay_history(const upanthor_fuzz::WorldInputs& inputs, const upanthor_fuzz::IoctlProgramOptions& opts) {
    // Inputs given before this one ran on the same device: start again.
    PanthorWorld& world = the_world();
    fail_if(world.reboot());
    std::fprintf(stderr, "[fuzz] replaying a history of %zu inputs on a freshly booted device\n", inputs.size());
    std::string problems = upanthor_fuzz::run_ioctl_history(world, inputs, opts);
    if (problems.empty())
        problems = world.reboot();
    if (opts.trace && !opts.trace->empty())
        std::fprintf(stderr, "%s", opts.trace->c_str());
    fail_if(problems);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    upanthor_fuzz::fuzz_init_env(argv && *argv ? (*argv)[0] : nullptr);
    if (!argc || !argv)
        return 0;
    g_replaying_files = only_files_given(*argc, *argv);
    if (!g_replaying_files && history_wanted()) {
        g_history = new WorldHistoryRecorder(history_path(*argc, *argv), kHistoryBytes, kHistoryInputs);
        // libFuzzer exits through exit() when it is done and through _Exit() on a finding, so
        // the file outlives exactly the runs that found something.
        std::atexit([] {
            delete g_history;
            g_history = nullptr;
        });
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string trace;
    upanthor_fuzz::IoctlProgramOptions opts;
    if (std::getenv("UPANTHOR_FUZZ_TRACE"))
        opts.trace = &trace;

    if (g_replaying_files) {
        if (auto inputs = upanthor_fuzz::parse_world_history(data, size)) {
            replay_history(*inputs, opts);
            return 0;
        }
    }
    PanthorWorld& world = the_world();
    if (g_history && !g_history->fits(size)) {
        // A full history is checked like the end of a world, while the file still holds it.
        fail_if(world.reboot());
        g_history->begin_world();
    }
    if (g_history)
        g_history->record(data, size);
    const unsigned boots = world.boots();
    const std::string problems = upanthor_fuzz::run_ioctl_program(world, data, size, opts);
    if (!trace.empty())
        std::fprintf(stderr, "%s", trace.c_str());
    fail_if(problems);
    // A device lost to an injected fault was rebooted by the program; an input too large for
    // the file was not recorded. Either way the next input starts a new past.
    if (g_history && (world.boots() != boots || g_history->count() == 0)) {
        if (world.boots() == boots)
            fail_if(world.reboot());
        g_history->begin_world();
    }
    return 0;
}
