// Mirrors drivers/gpu/drm/panthor/panthor_device.c: device bring-up in order, unplug, the reset
// work, runtime suspend/resume, exception names.
//
// DOC: panthor_device_init brings the blocks up in upstream's order (clocks, devfreq, MMIO,
// runtime PM, GPU, coherency, MMU, FW, scheduler) and unwinds in reverse when a step fails.
// What upstream ties to the DRM device's lifetime (drmm_*) is registered here as devres actions of
// the platform device, so the probe's failure path and remove release it in reverse order.
#include "panthor/panthor_device.h"

#include "hw/csf/regs/exceptions.h"
#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "panthor/panthor_coredump.h"
#include "panthor/panthor_devfreq.h"
#include "panthor/panthor_fw.h"
#include "panthor/panthor_gpu.h"
#include "panthor/panthor_mmu.h"
#include "panthor/panthor_sched.h"

namespace panthor {

panthor_device::panthor_device(const drm::DriverDesc& driver) : base(driver, this) {}

namespace {

int panthor_gpu_coherency_init(panthor_device* ptdev) {
    // Userspace reads the choice in gpu_info (1.7); ACE is never selected.
    ptdev->gpu_info.selected_coherency = GPU_COHERENCY_NONE;
    ptdev->coherent = kshim::device_get_dma_attr_coherent(ptdev->dev);
    if (!ptdev->coherent)
        return 0;
    // ACE-Lite is the only protocol a CSF GPU supports for IO coherency.
    if (gpu_read(ptdev, GPU_COHERENCY_FEATURES) & GPU_COHERENCY_PROT_BIT(GPU_COHERENCY_ACE_LITE)) {
        ptdev->gpu_info.selected_coherency = GPU_COHERENCY_ACE_LITE;
        return 0;
    }
    dev_err(ptdev->dev, "Coherency not supported by the device");
    return -ENOTSUPP;
}

int panthor_clk_init(panthor_device* ptdev) {
    ptdev->clks.core = kshim::devm_clk_get(ptdev->dev, nullptr);
    if (kshim::IS_ERR(ptdev->clks.core)) {
        dev_err(ptdev->dev, "get 'core' clock failed");
        return static_cast<int>(kshim::PTR_ERR(ptdev->clks.core));
    }
    ptdev->clks.stacks = kshim::devm_clk_get_optional(ptdev->dev, "stacks");
    if (kshim::IS_ERR(ptdev->clks.stacks)) {
        dev_err(ptdev->dev, "get 'stacks' clock failed");
        return static_cast<int>(kshim::PTR_ERR(ptdev->clks.stacks));
    }
    ptdev->clks.coregroup = kshim::devm_clk_get_optional(ptdev->dev, "coregroup");
    if (kshim::IS_ERR(ptdev->clks.coregroup)) {
        dev_err(ptdev->dev, "get 'coregroup' clock failed");
        return static_cast<int>(kshim::PTR_ERR(ptdev->clks.coregroup));
    }
    dev_info(ptdev->dev, "clock rate = %lu", kshim::clk_get_rate(ptdev->clks.core));
    return 0;
}

// The scheduler comes last in init: its presence means every block is up.
bool panthor_device_is_initialized(panthor_device* ptdev) {
    return ptdev->scheduler != nullptr;
}

void panthor_device_reset_work(kshim::work_struct* work) {
    panthor_device* ptdev = container_of(work, panthor_device, reset.work);

    // A device entering suspend is not reset now: resume forces a slow reset instead.
    if (ptdev->pm.state.load() != PANTHOR_DEVICE_PM_STATE_ACTIVE)
        return;
    // Asked for while probe is still bringing the blocks up (a stuck AS, a lost flush): the
    // failing step returns the error to probe, whose unwinding frees what a reset would use.
    // The request stays pending, so a probe that got past it is reset slowly at its next resume.
    if (!panthor_device_is_initialized(ptdev))
        return;
    if (!drm::drm_dev_enter(&ptdev->base))
        return;
    // Deviation from upstream: the reset holds an active runtime-PM reference, so no runtime
    // suspend can begin while it runs. Upstream's suspend cancels the reset work synchronously,
    // and the reset stops the drm_scheds, waiting for a run_job that may itself be waiting in
    // pm_runtime_resume_and_get() for that suspend to finish: a three-way deadlock the fault
    // campaign found (csg_ack_timeout / as_stuck x during_reset). A device already suspending
    // is reset by its resume instead (the request stays pending), as above.
    if (kshim::pm_runtime_get_if_active(ptdev->dev) <= 0)
        return;

    panthor_coredump_capture_reset(ptdev);
    panthor_sched_pre_reset(ptdev);
    panthor_fw_pre_reset(ptdev, true);
    panthor_mmu_pre_reset(ptdev);
    panthor_gpu_soft_reset(ptdev);
    panthor_gpu_l2_power_on(ptdev);
    panthor_mmu_post_reset(ptdev);
    const int ret = panthor_fw_post_reset(ptdev);
    ptdev->reset.pending.store(0);
    panthor_sched_post_reset(ptdev, ret != 0);
    kshim::pm_runtime_mark_last_busy(ptdev->dev);
    kshim::pm_runtime_put_autosuspend(ptdev->dev);

    // An unplug already under way (remove) waits for this work (see panthor_device_unplug) and
    // finishes the job: joining it from here would wait for that unplug, which waits for us.
    if (ret && !ptdev->base.is_unplugged()) {
        panthor_device_unplug(ptdev);
        dev_err(ptdev->dev, "Failed to boot MCU after reset, making device unusable.");
    }
}

int panthor_device_resume_hw_components(panthor_device* ptdev) {
    panthor_gpu_resume(ptdev);
    panthor_mmu_resume(ptdev);
    const int ret = panthor_fw_resume(ptdev);
    if (!ret)
        return 0;
    panthor_mmu_suspend(ptdev);
    panthor_gpu_suspend(ptdev);
    return ret;
}

}  // namespace

const char* panthor_reset_reason_name(panthor_reset_reason reason) {
    switch (reason) {
    case PANTHOR_RESET_REQUESTED: return "REQUESTED";
    case PANTHOR_RESET_FW_PING_TIMEOUT: return "FW_PING_TIMEOUT";
    case PANTHOR_RESET_MCU_FATAL: return "MCU_FATAL";
    case PANTHOR_RESET_CSG_ACK_TIMEOUT: return "CSG_ACK_TIMEOUT";
    case PANTHOR_RESET_CSG_INVALID_STATE: return "CSG_INVALID_STATE";
    case PANTHOR_RESET_CS_UNRECOVERABLE: return "CS_UNRECOVERABLE";
    case PANTHOR_RESET_AS_TIMEOUT: return "AS_TIMEOUT";
    case PANTHOR_RESET_LOCKED_REGION: return "LOCKED_REGION";
    case PANTHOR_RESET_GROUP_BIND: return "GROUP_BIND";
    }
    return "?";
}

void panthor_device_schedule_reset(panthor_device* ptdev, panthor_reset_reason reason) {
    int expected = 0;
    if (!ptdev->reset.pending.compare_exchange_strong(expected, 1))
        return;
    const bool active = ptdev->pm.state.load() == PANTHOR_DEVICE_PM_STATE_ACTIVE;
    // Firmware that stops answering because the MCU halted on a fatal error shows up as a missed
    // ping or CSG ack: name the cause (MCU_STATUS is readable while the device is powered).
    if ((reason == PANTHOR_RESET_FW_PING_TIMEOUT || reason == PANTHOR_RESET_CSG_ACK_TIMEOUT) && active &&
        ptdev->iomem && gpu_read(ptdev, MCU_STATUS) == MCU_STATUS_FATAL)
        reason = PANTHOR_RESET_MCU_FATAL;
    // Stored before the work is queued, which orders it before the reset work's read.
    ptdev->reset.reason.store(reason);
    if (active)
        kshim::queue_work(ptdev->reset.wq, &ptdev->reset.work);
}

void panthor_device_unplug(panthor_device* ptdev) {
    // Both the reset work and remove may get here; the second caller waits for the first.
    kshim::mutex_lock(&ptdev->unplug.lock);
    if (ptdev->base.is_unplugged()) {
        kshim::mutex_unlock(&ptdev->unplug.lock);
        wait_for_completion(&ptdev->unplug.done);
        return;
    }

    WARN_ON(kshim::pm_runtime_get_sync(ptdev->dev) < 0);

    // From here on, ioctls and other hardware accesses are refused.
    ptdev->base.unplug();
    kshim::mutex_unlock(&ptdev->unplug.lock);

    // drm_dev_unplug() waits for the drm_dev_enter() sections in progress (SRCU); our DRM core
    // has no SRCU, so a reset work inside its section is waited for here instead, or it would
    // use the FW/MMU state the unplug below frees. Not from the reset work itself: it unplugs
    // after its section when the reset failed.
    if (kshim::current_work() != &ptdev->reset.work)
        kshim::cancel_work_sync(&ptdev->reset.work);

    panthor_sched_unplug(ptdev);
    panthor_fw_unplug(ptdev);
    panthor_mmu_unplug(ptdev);
    panthor_gpu_unplug(ptdev);

    kshim::pm_runtime_dont_use_autosuspend(ptdev->dev);
    kshim::pm_runtime_put_sync_suspend(ptdev->dev);

    kshim::complete_all(&ptdev->unplug.done);
}

int panthor_device_init(panthor_device* ptdev) {
    kshim::Device* dev = ptdev->dev;
    int ret;

    kshim::init_completion(&ptdev->unplug.done);
    ptdev->pm.state.store(PANTHOR_DEVICE_PM_STATE_SUSPENDED);

    kshim::Page* p = kshim::alloc_page(kshim::GFP_KERNEL | kshim::__GFP_ZERO);
    if (!p)
        return -ENOMEM;
    ptdev->pm.dummy_latest_flush = p;
    ret = kshim::devm_add_action_or_reset(dev, [ptdev, p] {
        kshim::__free_page(p);
        ptdev->pm.dummy_latest_flush = nullptr;
    });
    if (ret)
        return ret;
    // A suspended device reads LATEST_FLUSH_ID as 1: "no flush needed", as nothing ran meanwhile.
    // 0 would mean "always flush".
    *static_cast<u32*>(kshim::page_address(p)) = 1;

    // Released last (devres runs in reverse): a dump still pending when the device goes is freed.
    ret = panthor_coredump_init(ptdev);
    if (ret)
        return ret;

    INIT_WORK(&ptdev->reset.work, panthor_device_reset_work);
    ptdev->reset.wq = kshim::alloc_ordered_workqueue("panthor-reset-wq", 0);
    if (!ptdev->reset.wq)
        return -ENOMEM;
    ret = kshim::devm_add_action_or_reset(dev, [ptdev] {
        kshim::cancel_work_sync(&ptdev->reset.work);
        kshim::destroy_workqueue(ptdev->reset.wq);
        ptdev->reset.wq = nullptr;
    });
    if (ret)
        return ret;

    ret = panthor_clk_init(ptdev);
    if (ret)
        return ret;

    ret = panthor_devfreq_init(ptdev);
    if (ret)
        return ret;

    kshim::Resource* res = nullptr;
    ptdev->iomem = kshim::devm_platform_get_and_ioremap_resource(ptdev->pdev, 0, &res);
    if (kshim::IS_ERR(ptdev->iomem)) {
        ret = static_cast<int>(kshim::PTR_ERR(ptdev->iomem));
        ptdev->iomem = nullptr;
        return ret;
    }
    ptdev->phys_addr = res->start;

    ret = kshim::devm_pm_runtime_enable(dev);
    if (ret)
        return ret;

    ret = kshim::pm_runtime_resume_and_get(dev);
    if (ret)
        return ret;

    ret = panthor_gpu_init(ptdev);
    if (ret)
        goto err_rpm_put;

    ret = panthor_gpu_coherency_init(ptdev);
    if (ret)
        goto err_unplug_gpu;

    ret = panthor_mmu_init(ptdev);
    if (ret)
        goto err_unplug_gpu;

    ret = panthor_fw_init(ptdev);
    if (ret)
        goto err_unplug_mmu;

    ret = panthor_sched_init(ptdev);
    if (ret)
        goto err_unplug_fw;

    // About three frames.
    kshim::pm_runtime_set_autosuspend_delay(dev, 50);
    kshim::pm_runtime_use_autosuspend(dev);

    // drm_dev_register cannot fail here: there is no minor to allocate.
    kshim::pm_runtime_put_autosuspend(dev);
    return 0;

err_unplug_fw:
    panthor_fw_unplug(ptdev);
err_unplug_mmu:
    panthor_mmu_unplug(ptdev);
err_unplug_gpu:
    panthor_gpu_unplug(ptdev);
err_rpm_put:
    kshim::pm_runtime_put_sync_suspend(dev);
    return ret;
}

int panthor_device_resume(kshim::Device* dev) {
    auto* ptdev = static_cast<panthor_device*>(kshim::dev_get_drvdata(dev));
    int ret;

    if (ptdev->pm.state.load() != PANTHOR_DEVICE_PM_STATE_SUSPENDED)
        return -EINVAL;
    ptdev->pm.state.store(PANTHOR_DEVICE_PM_STATE_RESUMING);

    ret = kshim::clk_prepare_enable(ptdev->clks.core);
    if (ret)
        goto err_set_suspended;
    ret = kshim::clk_prepare_enable(ptdev->clks.stacks);
    if (ret)
        goto err_disable_core_clk;
    ret = kshim::clk_prepare_enable(ptdev->clks.coregroup);
    if (ret)
        goto err_disable_stacks_clk;

    panthor_devfreq_resume(ptdev);

    if (panthor_device_is_initialized(ptdev) && drm::drm_dev_enter(&ptdev->base)) {
        // A reset still pending when we suspended is turned into a slow restart.
        if (ptdev->reset.pending.load()) {
            ptdev->reset.fast = false;
            ptdev->reset.pending.store(0);
        }
        ret = panthor_device_resume_hw_components(ptdev);
        if (ret && ptdev->reset.fast) {
            dev_err(ptdev->dev, "Fast reset failed, trying a slow reset");
            ptdev->reset.fast = false;
            ret = panthor_device_resume_hw_components(ptdev);
        }
        if (!ret)
            panthor_sched_resume(ptdev);
        if (ret)
            goto err_suspend_devfreq;
    }

    // USER_FLUSH_ID mappings read the real register again from here on.
    kshim::mutex_lock(&ptdev->pm.mmio_lock);
    ptdev->pm.state.store(PANTHOR_DEVICE_PM_STATE_ACTIVE);
    kshim::mutex_unlock(&ptdev->pm.mmio_lock);
    return 0;

err_suspend_devfreq:
    panthor_devfreq_suspend(ptdev);
    kshim::clk_disable_unprepare(ptdev->clks.coregroup);
err_disable_stacks_clk:
    kshim::clk_disable_unprepare(ptdev->clks.stacks);
err_disable_core_clk:
    kshim::clk_disable_unprepare(ptdev->clks.core);
err_set_suspended:
    ptdev->pm.state.store(PANTHOR_DEVICE_PM_STATE_SUSPENDED);
    ptdev->pm.recovery_needed = true;
    return ret;
}

int panthor_device_suspend(kshim::Device* dev) {
    auto* ptdev = static_cast<panthor_device*>(kshim::dev_get_drvdata(dev));

    if (ptdev->pm.state.load() != PANTHOR_DEVICE_PM_STATE_ACTIVE)
        return -EINVAL;

    // USER_FLUSH_ID mappings switch to the dummy page before the clocks stop.
    kshim::mutex_lock(&ptdev->pm.mmio_lock);
    ptdev->pm.state.store(PANTHOR_DEVICE_PM_STATE_SUSPENDING);
    kshim::mutex_unlock(&ptdev->pm.mmio_lock);

    if (panthor_device_is_initialized(ptdev) && drm::drm_dev_enter(&ptdev->base)) {
        kshim::cancel_work_sync(&ptdev->reset.work);
        // Everything is prepared as for a reset; the resume path finishes it.
        panthor_sched_suspend(ptdev);
        panthor_fw_suspend(ptdev);
        panthor_mmu_suspend(ptdev);
        panthor_gpu_suspend(ptdev);
    }

    panthor_devfreq_suspend(ptdev);
    kshim::clk_disable_unprepare(ptdev->clks.coregroup);
    kshim::clk_disable_unprepare(ptdev->clks.stacks);
    kshim::clk_disable_unprepare(ptdev->clks.core);
    ptdev->pm.state.store(PANTHOR_DEVICE_PM_STATE_SUSPENDED);
    return 0;
}

// DEFINE_RUNTIME_DEV_PM_OPS: system sleep goes through the runtime callbacks.
const kshim::DevPmOps panthor_pm_ops = {
    .runtime_suspend = panthor_device_suspend,
    .runtime_resume = panthor_device_resume,
    .runtime_idle = nullptr,
    .suspend = kshim::pm_runtime_force_suspend,
    .resume = kshim::pm_runtime_force_resume,
};

int panthor_device_resume_and_get(panthor_device* ptdev) {
    return kshim::pm_runtime_resume_and_get(ptdev->dev);
}

const char* panthor_exception_name(panthor_device*, u32 exception_code) {
    switch (exception_code) {
#define PANTHOR_EXCEPTION(id) \
    case DRM_PANTHOR_EXCEPTION_##id: return #id;
        PANTHOR_EXCEPTION(OK)
        PANTHOR_EXCEPTION(TERMINATED)
        PANTHOR_EXCEPTION(KABOOM)
        PANTHOR_EXCEPTION(EUREKA)
        PANTHOR_EXCEPTION(ACTIVE)
        PANTHOR_EXCEPTION(CS_RES_TERM)
        PANTHOR_EXCEPTION(CS_CONFIG_FAULT)
        PANTHOR_EXCEPTION(CS_UNRECOVERABLE)
        PANTHOR_EXCEPTION(CS_ENDPOINT_FAULT)
        PANTHOR_EXCEPTION(CS_BUS_FAULT)
        PANTHOR_EXCEPTION(CS_INSTR_INVALID)
        PANTHOR_EXCEPTION(CS_CALL_STACK_OVERFLOW)
        PANTHOR_EXCEPTION(CS_INHERIT_FAULT)
        PANTHOR_EXCEPTION(INSTR_INVALID_PC)
        PANTHOR_EXCEPTION(INSTR_INVALID_ENC)
        PANTHOR_EXCEPTION(INSTR_BARRIER_FAULT)
        PANTHOR_EXCEPTION(DATA_INVALID_FAULT)
        PANTHOR_EXCEPTION(TILE_RANGE_FAULT)
        PANTHOR_EXCEPTION(ADDR_RANGE_FAULT)
        PANTHOR_EXCEPTION(IMPRECISE_FAULT)
        PANTHOR_EXCEPTION(OOM)
        PANTHOR_EXCEPTION(CSF_FW_INTERNAL_ERROR)
        PANTHOR_EXCEPTION(CSF_RES_EVICTION_TIMEOUT)
        PANTHOR_EXCEPTION(GPU_BUS_FAULT)
        PANTHOR_EXCEPTION(GPU_SHAREABILITY_FAULT)
        PANTHOR_EXCEPTION(SYS_SHAREABILITY_FAULT)
        PANTHOR_EXCEPTION(GPU_CACHEABILITY_FAULT)
        PANTHOR_EXCEPTION(TRANSLATION_FAULT_0)
        PANTHOR_EXCEPTION(TRANSLATION_FAULT_1)
        PANTHOR_EXCEPTION(TRANSLATION_FAULT_2)
        PANTHOR_EXCEPTION(TRANSLATION_FAULT_3)
        PANTHOR_EXCEPTION(TRANSLATION_FAULT_4)
        PANTHOR_EXCEPTION(PERM_FAULT_0)
        PANTHOR_EXCEPTION(PERM_FAULT_1)
        PANTHOR_EXCEPTION(PERM_FAULT_2)
        PANTHOR_EXCEPTION(PERM_FAULT_3)
        PANTHOR_EXCEPTION(ACCESS_FLAG_1)
        PANTHOR_EXCEPTION(ACCESS_FLAG_2)
        PANTHOR_EXCEPTION(ACCESS_FLAG_3)
        PANTHOR_EXCEPTION(ADDR_SIZE_FAULT_IN)
        PANTHOR_EXCEPTION(ADDR_SIZE_FAULT_OUT0)
        PANTHOR_EXCEPTION(ADDR_SIZE_FAULT_OUT1)
        PANTHOR_EXCEPTION(ADDR_SIZE_FAULT_OUT2)
        PANTHOR_EXCEPTION(ADDR_SIZE_FAULT_OUT3)
        PANTHOR_EXCEPTION(MEM_ATTR_FAULT_0)
        PANTHOR_EXCEPTION(MEM_ATTR_FAULT_1)
        PANTHOR_EXCEPTION(MEM_ATTR_FAULT_2)
        PANTHOR_EXCEPTION(MEM_ATTR_FAULT_3)
#undef PANTHOR_EXCEPTION
    default: return "Unknown exception type";
    }
}

}  // namespace panthor
