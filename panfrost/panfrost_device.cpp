// Mirrors drivers/gpu/drm/panfrost/panfrost_device.c: bring-up of clocks, supplies and MMIO in
// upstream's order, the GPU block, runtime suspend/resume and the exception names.
//
// DOC: panfrost_device_init: clocks ("gpu", the first, required; "bus" optional), devfreq,
// supplies, MMIO, the GPU (soft reset, features, IRQ, power-on), then the MMU's IRQ (its
// interrupts stay masked until the first reset, as upstream); each failure unwinds the
// steps before it. What upstream acquires with devm_* (clocks, supplies, the mapping, the IRQ) is
// released by the platform device's devres, so init's error path and fini only disable.
//
// With an OPP table the OPP core owns the supplies (devfreq sets their voltage and enables them);
// without one the driver takes them itself.
#include "panfrost/panfrost_device.h"

#include "hw/jm/regs/exceptions.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "panfrost/panfrost_devfreq.h"
#include "panfrost/panfrost_dump.h"
#include "panfrost/panfrost_gpu.h"
#include "panfrost/panfrost_job.h"
#include "panfrost/panfrost_mmu.h"
#include "panfrost/panfrost_perfcnt.h"

namespace panfrost {

panfrost_device::panfrost_device(const drm::DriverDesc& driver) : base(driver, this) {}

namespace {

int panfrost_clk_init(panfrost_device* pfdev) {
    pfdev->clock = kshim::devm_clk_get(pfdev->dev, nullptr);
    if (kshim::IS_ERR(pfdev->clock)) {
        dev_err(pfdev->dev, "get clock failed %ld", kshim::PTR_ERR(pfdev->clock));
        const int err = static_cast<int>(kshim::PTR_ERR(pfdev->clock));
        pfdev->clock = nullptr;
        return err;
    }
    dev_info(pfdev->dev, "clock rate = %lu", kshim::clk_get_rate(pfdev->clock));

    int err = kshim::clk_prepare_enable(pfdev->clock);
    if (err)
        return err;

    pfdev->bus_clock = kshim::devm_clk_get_optional(pfdev->dev, "bus");
    if (kshim::IS_ERR(pfdev->bus_clock)) {
        dev_err(pfdev->dev, "get bus_clock failed %ld", kshim::PTR_ERR(pfdev->bus_clock));
        err = static_cast<int>(kshim::PTR_ERR(pfdev->bus_clock));
        pfdev->bus_clock = nullptr;
        goto disable_clock;
    }
    if (pfdev->bus_clock) {
        dev_info(pfdev->dev, "bus_clock rate = %lu", kshim::clk_get_rate(pfdev->bus_clock));
        err = kshim::clk_prepare_enable(pfdev->bus_clock);
        if (err)
            goto disable_clock;
    }
    return 0;

disable_clock:
    kshim::clk_disable_unprepare(pfdev->clock);
    return err;
}

void panfrost_clk_fini(panfrost_device* pfdev) {
    kshim::clk_disable_unprepare(pfdev->bus_clock);
    kshim::clk_disable_unprepare(pfdev->clock);
}

int panfrost_regulator_init(panfrost_device* pfdev) {
    const int n = pfdev->comp->num_supplies;
    if (WARN_ON(n > static_cast<int>(std::size(pfdev->regulators))))
        return -EINVAL;
    for (int i = 0; i < n; i++) {
        kshim::Regulator* r = kshim::devm_regulator_get(pfdev->dev, pfdev->comp->supply_names[i]);
        if (kshim::IS_ERR(r)) {
            dev_err(pfdev->dev, "failed to get regulators: %ld", kshim::PTR_ERR(r));
            return static_cast<int>(kshim::PTR_ERR(r));
        }
        pfdev->regulators[i] = r;
    }
    for (int i = 0; i < n; i++) {
        const int ret = kshim::regulator_enable(pfdev->regulators[i]);
        if (ret) {
            dev_err(pfdev->dev, "failed to enable regulators: %d", ret);
            while (--i >= 0)
                kshim::regulator_disable(pfdev->regulators[i]);
            return ret;
        }
    }
    pfdev->num_regulators = n;
    return 0;
}

void panfrost_regulator_fini(panfrost_device* pfdev) {
    for (int i = pfdev->num_regulators - 1; i >= 0; i--)
        kshim::regulator_disable(pfdev->regulators[i]);
    pfdev->num_regulators = 0;
}

}  // namespace

int panfrost_device_init(panfrost_device* pfdev) {
    int err = panfrost_clk_init(pfdev);
    if (err) {
        dev_err(pfdev->dev, "clk init failed %d", err);
        return err;
    }

    err = panfrost_devfreq_init(pfdev);
    if (err) {
        if (err != -EPROBE_DEFER)
            dev_err(pfdev->dev, "devfreq init failed %d", err);
        goto out_clk;
    }

    // The OPP core handles the supplies.
    if (!pfdev->pfdevfreq.opp_of_table_added) {
        err = panfrost_regulator_init(pfdev);
        if (err)
            goto out_devfreq;
    }

    pfdev->iomem = kshim::devm_platform_get_and_ioremap_resource(pfdev->pdev, 0, nullptr);
    if (kshim::IS_ERR(pfdev->iomem)) {
        err = static_cast<int>(kshim::PTR_ERR(pfdev->iomem));
        pfdev->iomem = nullptr;
        goto out_regulator;
    }

    err = panfrost_core_dump_init(pfdev);
    if (err)
        goto out_regulator;

    err = panfrost_gpu_init(pfdev);
    if (err)
        goto out_regulator;

    err = panfrost_mmu_init(pfdev);
    if (err)
        goto out_gpu;

    err = panfrost_jm_init(pfdev);
    if (err)
        goto out_mmu;

    err = panfrost_perfcnt_init(pfdev);
    if (err)
        goto out_job;
    return 0;

out_job:
    panfrost_jm_fini(pfdev);
out_mmu:
    panfrost_mmu_fini(pfdev);
out_gpu:
    panfrost_gpu_fini(pfdev);
out_regulator:
    panfrost_regulator_fini(pfdev);
out_devfreq:
    panfrost_devfreq_fini(pfdev);
out_clk:
    panfrost_clk_fini(pfdev);
    return err;
}

void panfrost_device_fini(panfrost_device* pfdev) {
    panfrost_perfcnt_fini(pfdev);
    panfrost_jm_fini(pfdev);
    panfrost_mmu_fini(pfdev);
    panfrost_gpu_fini(pfdev);
    panfrost_regulator_fini(pfdev);
    panfrost_devfreq_fini(pfdev);
    panfrost_clk_fini(pfdev);
}

void panfrost_device_reset(panfrost_device* pfdev, bool enable_job_int) {
    // Upstream carries on after a failed reset too: the power-on polls log what is wrong.
    panfrost_gpu_soft_reset(pfdev);
    panfrost_gpu_power_on(pfdev);
    // Every VM lost its AS with the reset; MMU interrupts unmasked.
    panfrost_mmu_reset(pfdev);
    panfrost_jm_reset_interrupts(pfdev);
    if (enable_job_int)
        panfrost_jm_enable_interrupts(pfdev);
}

int panfrost_device_runtime_resume(kshim::Device* dev) {
    auto* pfdev = static_cast<panfrost_device*>(kshim::dev_get_drvdata(dev));
    int ret;

    if (pfdev->comp->pm_features & (1u << GPU_PM_RT)) {
        ret = kshim::clk_enable(pfdev->clock);
        if (ret)
            return ret;
        ret = kshim::clk_enable(pfdev->bus_clock);
        if (ret) {
            kshim::clk_disable(pfdev->clock);
            return ret;
        }
    }
    // The GPU lost its state while off: every resume is a full reset.
    panfrost_device_reset(pfdev, true);
    panfrost_devfreq_resume(pfdev);
    return 0;
}

int panfrost_device_runtime_suspend(kshim::Device* dev) {
    auto* pfdev = static_cast<panfrost_device*>(kshim::dev_get_drvdata(dev));

    // A job still on the hardware keeps the GPU up.
    if (!panfrost_jm_is_idle(pfdev))
        return -EBUSY;

    panfrost_devfreq_suspend(pfdev);
    panfrost_jm_suspend_irq(pfdev);
    panfrost_mmu_suspend_irq(pfdev);
    panfrost_gpu_suspend_irq(pfdev);
    panfrost_gpu_power_off(pfdev);

    if (pfdev->comp->pm_features & (1u << GPU_PM_RT)) {
        kshim::clk_disable(pfdev->bus_clock);
        kshim::clk_disable(pfdev->clock);
    }
    return 0;
}

// System sleep goes through the runtime callbacks (pm_runtime_force_suspend/resume).
const kshim::DevPmOps panfrost_pm_ops = {
    .runtime_suspend = panfrost_device_runtime_suspend,
    .runtime_resume = panfrost_device_runtime_resume,
    .runtime_idle = nullptr,
    .suspend = kshim::pm_runtime_force_suspend,
    .resume = kshim::pm_runtime_force_resume,
};

const char* panfrost_exception_name(u32 exception_code) {
    const std::string_view name = exception_name(exception_code);
    if (WARN_ON(name.empty()))
        return "Unknown exception type";
    // The table's names are string literals: NUL-terminated.
    return name.data();
}

}  // namespace panfrost
