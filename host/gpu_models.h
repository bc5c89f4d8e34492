// (no upstream counterpart) The GPU models a host can create, and the driver each one needs. A
// model is the board a kernel boots on: the mock GPU behind a platform device, and the driver
// module that binds to its compatible string. Hosts name a model ("g610"); only this table knows
// which mock and which driver that means, so a new model (a Job Manager GPU and panfrost) is a row
// here, not a change in the hosts.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "drm/drm_module.h"
#include "kernel_shim/platform.h"
#include "mock_hw/config.h"
#include "mock_jm/config.h"

namespace mock_hw {
class MockPlatform;
class Gpu;
}  // namespace mock_hw
namespace mock_jm {
class JmPlatform;
}  // namespace mock_jm

namespace upanthor::host {

// Per-family configuration of the mock (defaults: the model's own).
struct ModelConfig {
    mock_hw::GpuConfig csf;  // CSF models (g610)
    mock_jm::JmConfig jm;    // Job Manager models (g52)
};

// The mock device of a model, behind its platform device.
class MockDevice {
public:
    virtual ~MockDevice() = default;
    virtual kshim::PlatformDevice* pdev() = 0;
    // The CSF mock (nullptr for other families).
    virtual mock_hw::MockPlatform* csf() { return nullptr; }
    // The Job Manager mock (nullptr for other families).
    virtual mock_jm::JmPlatform* jm() { return nullptr; }
};

struct GpuModel {
    std::string_view name;     // "g610"
    std::string_view family;   // "csf", "jm"
    std::string_view summary;  // one line for listings
    const drm::PlatformDriverModule* driver;
    std::unique_ptr<MockDevice> (*create)(const ModelConfig& cfg);
    // The board's device-tree node of the GPU, as sysfs shows its platform device (the preload
    // library's fake tree, docs/preload.md): the folder under /sys/devices/platform, the node's
    // full name, and its compatible strings, most specific first (the mock's platform device
    // carries the first).
    std::string_view of_device;         // "fb000000.gpu"
    std::string_view of_fullname;       // "/gpu@fb000000"
    std::string_view of_compatible[2];  // "rockchip,rk3588-mali", "arm,mali-valhall-csf"
};

std::span<const GpuModel> gpu_models();
// The model of that name ("default" is the first), or nullptr.
const GpuModel* find_gpu_model(std::string_view name);
// "g610" (the names, comma-separated), for error messages.
std::string gpu_model_names();

}  // namespace upanthor::host
