// (no upstream counterpart) The world a fuzz input runs in: the host library's World (a simulated
// kshim runtime owned by the calling thread, the G610 model's device and, optionally, the panthor
// driver probed on it) plus the per-input mark and checks. Booting costs milliseconds, so a fuzzer keeps one world per process and checks each
// input against a mark taken before it: after the input released what it made, the runtime is
// drained and anything allocated since the mark and not freed, any kshim report (lockdep,
// might_sleep, fence signalling, WARN, deadlock) and any task left blocked is a finding.
#pragma once
#include <memory>
#include <string>

#include "host/world.h"
#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/platform.h"
#include "panthor/panthor_device.h"

namespace upanthor_fuzz {

class PanthorWorld {
public:
    // What a world holds beyond the runtime.
    enum class Kind {
        Runtime,   // just the runtime (library-level targets: fuzz_gpuvm)
        Platform,  // the mock platform device, driver not probed (fuzz_fw_image probes itself)
        Driver,    // the driver probed on it (check probe_result())
    };
    // Only one world (one runtime) may exist at a time in a process.
    explicit PanthorWorld(Kind kind = Kind::Driver, kshim::u64 seed = 1);
    // Removes the driver and tears everything down; problems found then go to stderr.
    ~PanthorWorld();
    PanthorWorld(const PanthorWorld&) = delete;
    PanthorWorld& operator=(const PanthorWorld&) = delete;

    kshim::Runtime& rt() { return world_->rt(); }
    upanthor::host::Machine& machine() { return *world_->machine(); }
    mock_hw::MockPlatform& plat() { return *machine().csf(); }
    // Replaces the platform device by a fresh one (no driver bound; Kind::Platform only).
    void new_platform();
    mock_hw::Gpu& gpu() { return plat().gpu(); }
    panthor::panthor_device* ptdev() { return ptdev_; }
    int probe_result() const { return world_->status(); }

    // Remembers the memory counters (call when the world is quiet, before an input).
    void mark();
    // Lets the device settle (autosuspend), drains the runtime and returns what went wrong since
    // mark(): leaks, reports, blocked tasks, a runtime that does not go idle. "" when clean.
    // Growth of the drm_gpuva_index cache is not counted here: the index of a VM that outlives
    // the input (the MCU's) keeps emptied nodes in a reserve, up to a cap, for the
    // allocation-free insert path; finish() counts everything.
    // `expected` (optional) accepts reports the input explains (a WARN that upstream also gives
    // when an injected allocation failure hits it); every other report is a finding.
    using ReportFilter = bool (*)(const kshim::Report&);
    std::string check(ReportFilter expected = nullptr);
    // Removes the driver and drains, then compares with the memory before the world existed
    // (strict, every cache) and checks reports as check() does. The world is unusable after.
    std::string finish();
    // Whether the driver unplugged the device (a failed reset): every ioctl is -ENODEV now.
    bool device_lost() const;
    // finish(), then a fresh world of the same kind and seed in its place (probed again).
    // Returns what finish() found.
    std::string reboot();
    // How many times this world booted (1 after construction; reboot() adds one).
    unsigned boots() const { return boots_; }

private:
    void boot();

    Kind kind_;
    kshim::u64 seed_;
    std::unique_ptr<upanthor::host::World> world_;
    panthor::panthor_device* ptdev_ = nullptr;
    upanthor::host::RunChecks input_;  // the mark taken before an input
    unsigned boots_ = 0;
};

// LLVMFuzzerInitialize of every target: silences the kernel log on stderr (KSHIM_LOG=none; the
// lines are still captured) and, when the target runs from a folder holding firmware/ (an
// OSS-Fuzz $OUT), points request_firmware there unless UPANTHOR_FIRMWARE_PATH is set.
void fuzz_init_env(const char* argv0);

// Reports a finding of a fuzz target: prints it and aborts (libFuzzer saves the input).
[[noreturn]] void fuzz_fail(const std::string& what);

}  // namespace upanthor_fuzz
