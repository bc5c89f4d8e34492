// (no upstream counterpart) A machine: one GPU model's mock device behind a platform device, the
// driver module the model names, and the DRM files its clients open. What the kernel does at boot
// and at modprobe/rmmod, done the same way for every host (the test fixtures, the fuzz world,
// `upanthor run` and `info`, the preload library, the benchmarks):
//
//   Machine::create(model)   module_init of the model's driver, then the platform device
//   probe()                  the bus matches the device's compatible against the driver's table
//   open_file()/open_client()a client opens the DRM node (and drives it with the umd client)
//   remove()                 clients' files closed, the driver unbound
//   ~Machine                 the device destroyed, then module_exit
//
// A Machine runs kernel code, so it is created, used and destroyed on a task of a live runtime;
// it does not own the runtime (a test's world or a host's World does).
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "host/drm_file_backend.h"
#include "host/gpu_models.h"
#include "kernel_shim/time.h"

namespace drm {
class drm_device;
struct drm_file;
}  // namespace drm

namespace upanthor::host {

// A client of the machine: an open DRM file and the in-process umd backend over it. Closing it
// (or the machine's remove()) unmaps what the backend still maps, then releases the file.
struct Client {
    Client() = default;
    ~Client();
    Client(const Client&) = delete;
    Client& operator=(const Client&) = delete;

    drm::drm_file* file = nullptr;
    std::unique_ptr<umd::DrmFileBackend> backend;
};

class Machine {
public:
    struct Options {
        std::string_view model = "g610";
        ModelConfig config;
    };
    // Loads the model's driver module and creates its device (not probed). 0, -EINVAL for an
    // unknown model, or the module init's errno.
    static int create(const Options& opts, std::unique_ptr<Machine>* out);
    ~Machine();
    Machine(const Machine&) = delete;
    Machine& operator=(const Machine&) = delete;

    const GpuModel& model() const { return *model_; }
    const drm::PlatformDriverModule& driver() const { return *model_->driver; }

    // Binds the driver to the device: -ENODEV when its compatible is not in the driver's table,
    // else the probe's result.
    int probe();
    // A driver is bound to the device: the device says so (its drvdata), also when a test called
    // the driver's probe itself.
    bool probed();
    // Closes every client, then unbinds the driver (a no-op when not bound).
    void remove();
    // Replaces the (unbound) device by a fresh one from the same configuration.
    void new_device();

    kshim::PlatformDevice* pdev() { return device_->pdev(); }
    kshim::Device* dev() { return &pdev()->dev; }
    // The CSF mock of a CSF model; nullptr for another family.
    mock_hw::MockPlatform* csf() { return device_->csf(); }
    // The Job Manager mock of a JM model; nullptr for another family.
    mock_jm::JmPlatform* jm() { return device_->jm(); }
    // The bound driver's DRM device (nullptr when not bound).
    drm::drm_device* drm_dev();

    // drm_open on the bound device: -ENODEV when none. The caller releases the file
    // (drm::drm_release) before remove().
    int open_file(drm::drm_file** out, bool render = true);
    // A file with the umd backend over it, owned by the machine (closed by close_client() or
    // remove()); nullptr plus *err on failure.
    Client* open_client(int* err = nullptr, bool render = true);
    void close_client(Client* c);

    // Lets the device autosuspend (virtual time in simulated mode): every run starts from a quiet
    // device. False if it did not within `timeout`.
    bool settle(kshim::ktime_t timeout = 2 * kshim::NSEC_PER_SEC);
    // What udev does with a devcoredump: reads it whole, then frees it (otherwise it stays for
    // DEVCD_TIMEOUT, a timer that keeps the runtime busy). True if there was one.
    bool consume_devcoredump();
    // The driver unplugged its device (a failed reset): every ioctl is -ENODEV now.
    bool device_lost();

private:
    Machine(const GpuModel& model, const ModelConfig& cfg) : model_(&model), cfg_(cfg) {}

    const GpuModel* model_;
    ModelConfig cfg_;
    std::unique_ptr<MockDevice> device_;
    bool module_loaded_ = false;
    std::vector<std::unique_ptr<Client>> clients_;
};

}  // namespace upanthor::host
