// Mirrors drivers/gpu/drm/panfrost/panfrost_drv.c: the DRM driver, open/postclose, GET_PARAM,
// the OF match table and probe/remove.
//
// DOC: This slice serves GET_PARAM alone. The ioctl table keeps upstream's numbering (entry i is
// nr DRM_COMMAND_BASE + i) with holes where SUBMIT, WAIT_BO, CREATE_BO and MMAP_BO go; the DRM
// core answers a hole and every nr past the table with -EINVAL, as it does for an unknown ioctl.
#include "panfrost/panfrost_drv.h"

#include "drm/drm_auth.h"
#include "drm/drm_ioctl.h"
#include "kernel_shim/arch_timer.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "panfrost/panfrost_gpu.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost {

using drm::drm_file;

namespace {

int panfrost_ioctl_query_timestamp(panfrost_device* pfdev, u64* arg) {
    const int ret = kshim::pm_runtime_resume_and_get(pfdev->dev);
    if (ret)
        return ret;
    // The timestamp only advances while the cycle counter runs.
    panfrost_cycle_counter_get(pfdev);
    *arg = panfrost_timestamp_read(pfdev);
    panfrost_cycle_counter_put(pfdev);
    kshim::pm_runtime_put(pfdev->dev);
    return 0;
}

// HIGH needs CAP_SYS_NICE or the DRM master; LOW and MEDIUM are open to all.
int panfrost_jm_ctx_priority_permit(drm_file* file, u32 prio) {
    if (prio > PANFROST_JM_CTX_PRIORITY_HIGH)
        return -EINVAL;
    if (prio == PANFROST_JM_CTX_PRIORITY_HIGH && !kshim::capable(kshim::CAP_SYS_NICE) &&
        !drm::drm_is_current_master(file))
        return -EACCES;
    return 0;
}

int panfrost_ioctl_get_param(drm::drm_device* ddev, void* data, drm_file* file) {
    auto* param = static_cast<drm_panfrost_get_param*>(data);
    panfrost_device* pfdev = to_panfrost_device(ddev);
    const panfrost_features& f = pfdev->features;

    if (param->pad != 0)
        return -EINVAL;

    switch (param->param) {
    case DRM_PANFROST_PARAM_GPU_PROD_ID: param->value = f.id; break;
    case DRM_PANFROST_PARAM_GPU_REVISION: param->value = f.revision; break;
    case DRM_PANFROST_PARAM_SHADER_PRESENT: param->value = f.shader_present; break;
    case DRM_PANFROST_PARAM_TILER_PRESENT: param->value = f.tiler_present; break;
    case DRM_PANFROST_PARAM_L2_PRESENT: param->value = f.l2_present; break;
    case DRM_PANFROST_PARAM_STACK_PRESENT: param->value = f.stack_present; break;
    case DRM_PANFROST_PARAM_AS_PRESENT: param->value = f.as_present; break;
    case DRM_PANFROST_PARAM_JS_PRESENT: param->value = f.js_present; break;
    case DRM_PANFROST_PARAM_L2_FEATURES: param->value = f.l2_features; break;
    case DRM_PANFROST_PARAM_CORE_FEATURES: param->value = f.core_features; break;
    case DRM_PANFROST_PARAM_TILER_FEATURES: param->value = f.tiler_features; break;
    case DRM_PANFROST_PARAM_MEM_FEATURES: param->value = f.mem_features; break;
    case DRM_PANFROST_PARAM_MMU_FEATURES: param->value = f.mmu_features; break;
    case DRM_PANFROST_PARAM_THREAD_FEATURES: param->value = f.thread_features; break;
    case DRM_PANFROST_PARAM_MAX_THREADS: param->value = f.max_threads; break;
    case DRM_PANFROST_PARAM_THREAD_MAX_WORKGROUP_SZ: param->value = f.thread_max_workgroup_sz; break;
    case DRM_PANFROST_PARAM_THREAD_MAX_BARRIER_SZ: param->value = f.thread_max_barrier_sz; break;
    case DRM_PANFROST_PARAM_COHERENCY_FEATURES: param->value = f.coherency_features; break;
    case DRM_PANFROST_PARAM_AFBC_FEATURES: param->value = f.afbc_features; break;
    case DRM_PANFROST_PARAM_NR_CORE_GROUPS: param->value = f.nr_core_groups; break;
    case DRM_PANFROST_PARAM_THREAD_TLS_ALLOC: param->value = f.thread_tls_alloc; break;
    case DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP: {
        u64 timestamp = 0;
        const int ret = panfrost_ioctl_query_timestamp(pfdev, &timestamp);
        if (ret)
            return ret;
        param->value = timestamp;
        break;
    }
    case DRM_PANFROST_PARAM_SYSTEM_TIMESTAMP_FREQUENCY: param->value = kshim::arch_timer_get_cntfrq(); break;
    case DRM_PANFROST_PARAM_ALLOWED_JM_CTX_PRIORITIES:
        param->value = (1u << PANFROST_JM_CTX_PRIORITY_LOW) | (1u << PANFROST_JM_CTX_PRIORITY_MEDIUM);
        if (!panfrost_jm_ctx_priority_permit(file, PANFROST_JM_CTX_PRIORITY_HIGH))
            param->value |= 1u << PANFROST_JM_CTX_PRIORITY_HIGH;
        break;
    case DRM_PANFROST_PARAM_SELECTED_COHERENCY: param->value = f.selected_coherency; break;
    default:
        if (param->param >= DRM_PANFROST_PARAM_TEXTURE_FEATURES0 &&
            param->param <= DRM_PANFROST_PARAM_TEXTURE_FEATURES3) {
            param->value = f.texture_features[param->param - DRM_PANFROST_PARAM_TEXTURE_FEATURES0];
            break;
        }
        if (param->param >= DRM_PANFROST_PARAM_JS_FEATURES0 && param->param <= DRM_PANFROST_PARAM_JS_FEATURES15) {
            param->value = f.js_features[param->param - DRM_PANFROST_PARAM_JS_FEATURES0];
            break;
        }
        return -EINVAL;
    }
    return 0;
}

int panfrost_open(drm::drm_device* ddev, drm_file* file) {
    auto* panfrost_priv = kshim::knew<panfrost_file_priv>(kshim::GFP_KERNEL);
    if (!panfrost_priv)
        return -ENOMEM;
    panfrost_priv->pfdev = to_panfrost_device(ddev);
    file->driver_priv = panfrost_priv;
    return 0;
}

void panfrost_postclose(drm::drm_device*, drm_file* file) {
    kshim::kdelete(static_cast<panfrost_file_priv*>(file->driver_priv));
    file->driver_priv = nullptr;
}

using drm::DRM_RENDER_ALLOW;
using namespace drm::uapi;

const drm::IoctlDesc panfrost_drm_driver_ioctls[] = {
    {},  // SUBMIT
    {},  // WAIT_BO
    {},  // CREATE_BO
    {},  // MMAP_BO
    DRM_IOCTL_DEF_DRV(PANFROST_GET_PARAM, panfrost_ioctl_get_param, DRM_RENDER_ALLOW),
};

// The per-compatible data (default_data and friends): one "mali" supply, no PM features.
const char* const default_supplies[] = {"mali", nullptr};
const panfrost_compatible default_data = {
    .supply_names = default_supplies,
    .num_supplies = 1,
    .pm_features = 0,
    .vendor_quirk = nullptr,
};
const panfrost_compatible amlogic_data = {
    .supply_names = default_supplies,
    .num_supplies = 1,
    .pm_features = 0,
    .vendor_quirk = panfrost_gpu_amlogic_quirk,
};

struct panfrost_of_match {
    std::string_view compatible;
    const panfrost_compatible* data;
};

// dt_match of upstream for the compatibles whose data this slice models. The shim's platform
// device carries one compatible: the mock G52's "rockchip,rk3568-mali" stands for its DT node's
// "rockchip,rk3568-mali", "arm,mali-bifrost" pair, which upstream matches by the second.
const panfrost_of_match panfrost_dt_match[] = {
    {"arm,mali-t860", &default_data},        {"arm,mali-t880", &default_data},
    {"arm,mali-bifrost", &default_data},     {"arm,mali-valhall-jm", &default_data},
    {"rockchip,rk3568-mali", &default_data}, {"amlogic,meson-g12a-mali", &amlogic_data},
};

const panfrost_compatible* of_device_get_match_data(kshim::PlatformDevice* pdev) {
    for (const panfrost_of_match& m : panfrost_dt_match)
        if (m.compatible == pdev->desc.compatible)
            return m.data;
    return nullptr;
}

void panfrost_free(panfrost_device* pfdev) {
    // devm_* of the device (clocks, supplies, mapping, IRQ), newest first.
    kshim::devres_release_all(pfdev->dev);
    kshim::platform_set_drvdata(pfdev->pdev, nullptr);
    pfdev->pdev->dev.pm = nullptr;
    kshim::kdelete(pfdev);
}

}  // namespace

// Driver versions: 1.0 initial; 1.1 HEAP/NOEXEC BOs; 1.2 AFBC_FEATURES; 1.3 SYSTEM_TIMESTAMP and
// JD_REQ_CYCLE_COUNT; 1.4 SET_LABEL_BO; 1.5 JM contexts; 1.6 SYNC_BO, QUERY_BO_INFO, WB mmap.
const drm::DriverDesc panfrost_drm_driver = {
    .name = "panfrost",
    .desc = "panfrost DRM",
    .major = PANFROST_DRIVER_MAJOR,
    .minor = PANFROST_DRIVER_MINOR,
    .patchlevel = 0,
    .driver_features = drm::DRIVER_RENDER | drm::DRIVER_GEM | drm::DRIVER_SYNCOBJ,
    .ioctls = panfrost_drm_driver_ioctls,
    .open = panfrost_open,
    .postclose = panfrost_postclose,
};

int panfrost_probe(kshim::PlatformDevice* pdev) {
    // devm_drm_dev_alloc: the device lives until remove (or a failed probe) frees it.
    auto* pfdev = kshim::knew<panfrost_device>(kshim::GFP_KERNEL, panfrost_drm_driver);
    if (!pfdev)
        return -ENOMEM;
    pfdev->pdev = pdev;
    pfdev->dev = &pdev->dev;
    kshim::platform_set_drvdata(pdev, pfdev);

    pfdev->comp = of_device_get_match_data(pdev);
    if (!pfdev->comp) {
        panfrost_free(pfdev);
        return -ENODEV;
    }
    pfdev->coherent = kshim::device_get_dma_attr_coherent(pfdev->dev);
    pdev->dev.pm = &panfrost_pm_ops;

    const int err = panfrost_device_init(pfdev);
    if (err) {
        if (err != -EPROBE_DEFER)
            dev_err(pfdev->dev, "Fatal error during GPU init");
        panfrost_free(pfdev);
        return err;
    }

    // The driver core holds a usage count around probe (__device_attach): without it, setting the
    // autosuspend delay before using autosuspend would suspend the device at once.
    kshim::pm_runtime_get_noresume(pfdev->dev);

    // The GPU is powered: runtime PM starts active and may suspend after the autosuspend delay.
    kshim::pm_runtime_set_active(pfdev->dev);
    kshim::pm_runtime_mark_last_busy(pfdev->dev);
    kshim::pm_runtime_enable(pfdev->dev);
    kshim::pm_runtime_set_autosuspend_delay(pfdev->dev, 50);  // ~3 frames
    kshim::pm_runtime_use_autosuspend(pfdev->dev);

    // drm_dev_register cannot fail here (there is no minor to allocate). Then the driver core
    // drops its reference: the autosuspend timer starts.
    kshim::pm_runtime_put_autosuspend(pfdev->dev);
    return 0;
}

void panfrost_remove(kshim::PlatformDevice* pdev) {
    panfrost_device* pfdev = panfrost_from_pdev(pdev);
    if (WARN_ON(!pfdev))
        return;
    pfdev->base.unplug();

    kshim::pm_runtime_get_sync(pfdev->dev);
    kshim::pm_runtime_disable(pfdev->dev);
    panfrost_device_fini(pfdev);
    kshim::pm_runtime_set_suspended(pfdev->dev);
    // The usage count pm_runtime_get_sync took: the device is off now, nothing to suspend.
    kshim::pm_runtime_put_noidle(pfdev->dev);
    panfrost_free(pfdev);
}

const drm::PlatformDriverModule panfrost_module = {
    .name = "panfrost",
    .of_match = {"arm,mali-t860", "arm,mali-t880", "arm,mali-bifrost", "arm,mali-valhall-jm", "rockchip,rk3568-mali",
                 "amlogic,meson-g12a-mali"},
    .init = [] { return 0; },
    .exit = [] {},
    .probe = panfrost_probe,
    .remove = panfrost_remove,
    .drm_dev_of = [](kshim::PlatformDevice* pdev) -> drm::drm_device* {
        panfrost_device* pfdev = panfrost_from_pdev(pdev);
        return pfdev ? &pfdev->base : nullptr;
    },
};

}  // namespace panfrost
