// (no upstream counterpart) The table of GPU models (gpu_models.h).
#include "host/gpu_models.h"

#include "mock_hw/platform.h"
#include "mock_jm/jm_platform.h"
#include "panfrost/panfrost_drv.h"
#include "panthor/panthor_drv.h"

namespace upanthor::host {
namespace {

class CsfMockDevice : public MockDevice {
public:
    explicit CsfMockDevice(const mock_hw::GpuConfig& cfg) : plat_(cfg) {}
    kshim::PlatformDevice* pdev() override { return plat_.pdev(); }
    mock_hw::MockPlatform* csf() override { return &plat_; }

private:
    mock_hw::MockPlatform plat_;
};

class JmMockDevice : public MockDevice {
public:
    explicit JmMockDevice(const mock_jm::JmConfig& cfg) : plat_(cfg) {}
    kshim::PlatformDevice* pdev() override { return plat_.pdev(); }
    mock_jm::JmPlatform* jm() override { return &plat_; }

private:
    mock_jm::JmPlatform plat_;
};

const GpuModel kModels[] = {
    {
        .name = "g610",
        .family = "csf",
        .summary = "Mali-G610 MC4 (CSF, arch 10.8) on an RK3588 platform device; driver panthor",
        .driver = &panthor::panthor_module,
        .create = [](const ModelConfig& cfg) -> std::unique_ptr<MockDevice> {
            return std::make_unique<CsfMockDevice>(cfg.csf);
        },
        .of_device = "fb000000.gpu",
        .of_fullname = "/gpu@fb000000",
        .of_compatible = {"rockchip,rk3588-mali", "arm,mali-valhall-csf"},
    },
    {
        .name = "g52",
        .family = "jm",
        .summary = "Mali-G52 r1 (Job Manager, Bifrost) on an RK3568 platform device; driver panfrost",
        .driver = &panfrost::panfrost_module,
        .create = [](const ModelConfig& cfg) -> std::unique_ptr<MockDevice> {
            return std::make_unique<JmMockDevice>(cfg.jm);
        },
        // rk356x.dtsi's gpu@fde60000.
        .of_device = "fde60000.gpu",
        .of_fullname = "/gpu@fde60000",
        .of_compatible = {"rockchip,rk3568-mali", "arm,mali-bifrost"},
    },
};

}  // namespace

std::span<const GpuModel> gpu_models() {
    return kModels;
}

const GpuModel* find_gpu_model(std::string_view name) {
    if (name == "default")
        return &kModels[0];
    for (const GpuModel& m : kModels)
        if (m.name == name)
            return &m;
    return nullptr;
}

std::string gpu_model_names() {
    std::string out;
    for (const GpuModel& m : kModels)
        out += (out.empty() ? "" : ", ") + std::string(m.name);
    return out;
}

}  // namespace upanthor::host
