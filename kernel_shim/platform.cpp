// Mirrors drivers/base/platform.c (platform_get_irq_byname, devm_platform_get_and_ioremap_resource)
// and the platform_device_register/unregister pair a board file or device model would call.
#include "kernel_shim/platform.h"

#include <cstring>

#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/log.h"
#include "kernel_shim/platform_internal.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/slab.h"

namespace kshim {

PlatformDevice* platform_device_create(const PlatformDeviceDesc& desc) {
    auto* pdev = knew<PlatformDevice>(GFP_KERNEL);
    if (!pdev)
        return nullptr;
    pdev->desc = desc;
    pdev->dev.name = desc.name;
    pdev->state = knew<PlatformDeviceState>(GFP_KERNEL);
    if (!pdev->state) {
        kdelete(pdev);
        return nullptr;
    }
    PlatformDeviceState* st = pdev->state;
    // Names point into pdev->desc, which lives as long as the clocks and regulators.
    st->clks.reserve(pdev->desc.clks.size());
    for (const PlatformClk& c : pdev->desc.clks)
        st->clks.push_back(Clk{.name = c.name.c_str(), .rate = c.rate});
    st->regulators.reserve(pdev->desc.regulators.size());
    for (const PlatformRegulator& r : pdev->desc.regulators)
        st->regulators.push_back(Regulator{.name = r.name.c_str(), .microvolt = r.microvolt});
    if (pm_runtime_init(&pdev->dev)) {
        kdelete(st);
        kdelete(pdev);
        return nullptr;
    }
    return pdev;
}

void platform_device_destroy(PlatformDevice* pdev) {
    if (!pdev)
        return;
    // As the driver core's unbind: the driver's managed resources go first, then the device.
    devres_release_all(&pdev->dev);
    pm_runtime_release(&pdev->dev);
    kdelete(pdev->state);
    kdelete(pdev);
}

IrqLine* platform_get_irq_byname(PlatformDevice* pdev, const char* name) {
    for (const PlatformIrq& irq : pdev->desc.irqs)
        if (irq.line && irq.name == name)
            return irq.line;
    dev_err(&pdev->dev, "IRQ %s not found", name);
    return ERR_PTR<IrqLine>(-ENXIO);
}

Iomem* devm_platform_get_and_ioremap_resource(PlatformDevice* pdev, unsigned index, Resource** res) {
    if (index != 0 || !pdev->desc.iomem || !pdev->desc.mmio.size) {
        dev_err(&pdev->dev, "invalid resource %u", index);
        return ERR_PTR<Iomem>(-ENODEV);
    }
    if (res)
        *res = &pdev->desc.mmio;
    return pdev->desc.iomem;
}

bool device_get_dma_attr_coherent(const Device* dev) {
    return to_platform_device(const_cast<Device*>(dev))->desc.dma_coherent;
}

}  // namespace kshim
