// `upanthor run --coredump DIR`: what udev does with a devcoredump uevent, for the simulator. A
// listener installed for one run reads each dump the driver takes, clears it (the write to the
// devcd `data` file that frees it, so the next fault can dump again) and writes it to
// DIR/coredump-<n>.txt, n counting from 1. (No upstream counterpart.)
#pragma once
#include <atomic>
#include <memory>
#include <string>

namespace kshim {
struct Device;
}

namespace upanthor {

class CoredumpSink {
public:
    // Creates DIR (and its parents) if missing and installs the listener; nullptr and *error when
    // DIR cannot be created.
    static std::unique_ptr<CoredumpSink> open(const std::string& dir, std::string* error);
    // Removes the listener. Call once the runtime is gone (no listener call can be running).
    ~CoredumpSink();
    CoredumpSink(const CoredumpSink&) = delete;
    CoredumpSink& operator=(const CoredumpSink&) = delete;

    const std::string& dir() const { return dir_; }
    unsigned written() const { return written_.load(); }
    // The first read or write error, empty if none.
    std::string error() const;

private:
    explicit CoredumpSink(std::string dir) : dir_(std::move(dir)) {}
    void on_dump(kshim::Device* dev);

    std::string dir_;
    std::atomic<unsigned> written_{0};
    // The first error, written by the one listener call that claims it (a kernel work item:
    // another thread with --real) and published with `error_ready_`; no lock, so nothing here
    // steps outside the kernel shim's threading.
    std::atomic<bool> error_claimed_{false};
    std::atomic<bool> error_ready_{false};
    std::string error_;
};

}  // namespace upanthor
