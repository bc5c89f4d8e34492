// Mirrors drivers/gpu/drm/panthor/panthor_gpu.c: GPU_CONTROL: identity, L2 power, soft reset,
// cache flushes and GPU fault reporting.
#include "panthor/panthor_gpu.h"

#include <atomic>
#include <bit>

#include "hw/csf/regs/gpu_regs.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/err.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/wait.h"
#include "panthor/panthor_coredump.h"
#include "panthor/panthor_irq.h"

namespace panthor {

struct panthor_gpu {
    panthor_irq irq;
    // Serialises updates of pending_reqs (issue, IRQ completion, timeout) so a command is issued once.
    kshim::SpinLock reqs_lock{"panthor_gpu.reqs_lock"};
    // GPU_IRQ_* bits of commands issued and not completed yet. Changed under reqs_lock; atomic
    // because waiters test it without the lock (the kernel's plain read in wait_event).
    std::atomic<u32> pending_reqs{0};
    kshim::wait_queue_head reqs_acked;
    // Serialises cache flushes (upstream e322a4844811): callers flush concurrently (a VM's unmap,
    // a reset, the FW's suspend), and without it the second one found the first one's request
    // pending, WARNed and was dropped (found by fuzz_ioctl's campaign).
    kshim::Mutex cache_flush_lock{"panthor_gpu.cache_flush_lock"};
};

namespace {

struct panthor_model {
    const char* name;
    u8 arch_major;
    u8 product_major;
};

constexpr panthor_model gpu_models[] = {
    {"g610", 10, 7},
};

constexpr u32 GPU_INTERRUPTS_MASK =
    GPU_IRQ_FAULT | GPU_IRQ_PROTM_FAULT | GPU_IRQ_RESET_COMPLETED | GPU_IRQ_CLEAN_CACHES_COMPLETED;

void panthor_gpu_coherency_set(panthor_device* ptdev) {
    // The register takes the protocol number (ACE_LITE is 0), the value userspace sees too.
    gpu_write(ptdev, GPU_COHERENCY_PROTOCOL, ptdev->gpu_info.selected_coherency);
}

void panthor_gpu_init_info(panthor_device* ptdev) {
    drm_panthor_gpu_info& info = ptdev->gpu_info;
    info.gpu_id = gpu_read(ptdev, GPU_ID);
    info.csf_id = gpu_read(ptdev, GPU_CSF_ID);
    info.gpu_rev = gpu_read(ptdev, GPU_REVID);
    info.core_features = gpu_read(ptdev, GPU_CORE_FEATURES);
    info.l2_features = gpu_read(ptdev, GPU_L2_FEATURES);
    info.tiler_features = gpu_read(ptdev, GPU_TILER_FEATURES);
    info.mem_features = gpu_read(ptdev, GPU_MEM_FEATURES);
    info.mmu_features = gpu_read(ptdev, GPU_MMU_FEATURES);
    info.thread_features = gpu_read(ptdev, GPU_THREAD_FEATURES);
    info.max_threads = gpu_read(ptdev, GPU_THREAD_MAX_THREADS);
    info.thread_max_workgroup_size = gpu_read(ptdev, GPU_THREAD_MAX_WORKGROUP_SIZE);
    info.thread_max_barrier_size = gpu_read(ptdev, GPU_THREAD_MAX_BARRIER_SIZE);
    info.coherency_features = gpu_read(ptdev, GPU_COHERENCY_FEATURES);
    for (u32 i = 0; i < 4; i++)
        info.texture_features[i] = gpu_read(ptdev, GPU_TEXTURE_FEATURES(i));
    info.as_present = gpu_read(ptdev, GPU_AS_PRESENT);
    info.shader_present = gpu_read64(ptdev, GPU_SHADER_PRESENT);
    info.tiler_present = gpu_read64(ptdev, GPU_TILER_PRESENT);
    info.l2_present = gpu_read64(ptdev, GPU_L2_PRESENT);
    // Arch 10 has no GPU_FEATURES; the register reads as 0 there, as upstream reports it.
    info.gpu_features = gpu_read64(ptdev, GPU_FEATURES);

    const u32 arch_major = GPU_ARCH_MAJOR(info.gpu_id);
    const u32 product_major = GPU_PROD_MAJOR(info.gpu_id);
    const char* model_name = "unknown";
    for (const panthor_model& m : gpu_models) {
        if (m.arch_major == arch_major && m.product_major == product_major)
            model_name = m.name;
    }

    dev_info(ptdev->dev, "mali-%s id 0x%x major 0x%x minor 0x%x status 0x%x", model_name, info.gpu_id >> 16,
             GPU_VER_MAJOR(info.gpu_id), GPU_VER_MINOR(info.gpu_id), GPU_VER_STATUS(info.gpu_id));
    dev_info(ptdev->dev, "Features: L2:%#x Tiler:%#x Mem:%#x MMU:%#x AS:%#x", info.l2_features, info.tiler_features,
             info.mem_features, info.mmu_features, info.as_present);
    dev_info(ptdev->dev, "shader_present=0x%0llx l2_present=0x%0llx tiler_present=0x%0llx",
             static_cast<unsigned long long>(info.shader_present), static_cast<unsigned long long>(info.l2_present),
             static_cast<unsigned long long>(info.tiler_present));
}

void panthor_gpu_irq_handler(panthor_device* ptdev, u32 status) {
    gpu_write(ptdev, GPU_INT_CLEAR, status);

    if (status & GPU_IRQ_FAULT) {
        const u32 fault_status = gpu_read(ptdev, GPU_FAULT_STATUS);
        const u64 address = gpu_read64(ptdev, GPU_FAULT_ADDR);
        dev_warn(ptdev->dev, "GPU Fault 0x%08x (%s) at 0x%016llx", fault_status,
                 panthor_exception_name(ptdev, fault_status & 0xFF), static_cast<unsigned long long>(address));
        panthor_coredump_capture(ptdev, PANTHOR_COREDUMP_GPU_FAULT, -1);
    }
    if (status & GPU_IRQ_PROTM_FAULT)
        dev_warn(ptdev->dev, "GPU Fault in protected mode");

    kshim::SpinGuard g(ptdev->gpu->reqs_lock);
    if (status & ptdev->gpu->pending_reqs) {
        ptdev->gpu->pending_reqs &= ~status;
        kshim::wake_up_all(&ptdev->gpu->reqs_acked);
    }
}
PANTHOR_IRQ_HANDLER(gpu, GPU, panthor_gpu_irq_handler)

// Issues GPU_CMD `cmd` whose completion raises `irq_bit`, and waits 100 ms for it. The RAWSTAT
// re-check after a timeout covers a completion whose interrupt was lost.
int panthor_gpu_issue_cmd_and_wait(panthor_device* ptdev, u32 irq_bit, u32 cmd, bool clear_first, const char* what) {
    panthor_gpu* gpu = ptdev->gpu;
    {
        kshim::SpinGuard g(gpu->reqs_lock);
        if (gpu->pending_reqs & irq_bit) {
            WARN_ON(true);
        } else {
            gpu->pending_reqs |= irq_bit;
            if (clear_first)
                gpu_write(ptdev, GPU_INT_CLEAR, irq_bit);
            gpu_write(ptdev, GPU_CMD, cmd);
        }
    }

    bool timedout = false;
    if (!wait_event_timeout(gpu->reqs_acked, !(gpu->pending_reqs & irq_bit), kshim::msecs_to_jiffies(100))) {
        kshim::SpinGuard g(gpu->reqs_lock);
        if ((gpu->pending_reqs & irq_bit) && !(gpu_read(ptdev, GPU_INT_RAWSTAT) & irq_bit))
            timedout = true;
        // A command that timed out is given up on: left pending, it would make every later
        // command of its kind WARN and time out without being issued, the reset's own flushes
        // and soft resets included, so a single lost completion would take the device down.
        gpu->pending_reqs &= ~irq_bit;
    }
    if (timedout) {
        dev_err(ptdev->dev, "%s timeout", what);
        return -ETIMEDOUT;
    }
    return 0;
}

}  // namespace

void panthor_gpu_unplug(panthor_device* ptdev) {
    if (!ptdev->gpu)
        return;
    // The handler must not run after this point.
    if (kshim::pm_runtime_active(ptdev->dev))
        panthor_gpu_irq_suspend(&ptdev->gpu->irq);

    kshim::SpinGuard g(ptdev->gpu->reqs_lock);
    ptdev->gpu->pending_reqs = 0;
    kshim::wake_up_all(&ptdev->gpu->reqs_acked);
}

int panthor_gpu_init(panthor_device* ptdev) {
    auto* gpu = kshim::knew<panthor_gpu>(kshim::GFP_KERNEL);
    if (!gpu)
        return -ENOMEM;
    // drmm_kzalloc: freed with the device.
    int ret = kshim::devm_add_action_or_reset(ptdev->dev, [ptdev, gpu] {
        kshim::kdelete(gpu);
        ptdev->gpu = nullptr;
    });
    if (ret)
        return ret;
    ptdev->gpu = gpu;
    panthor_gpu_init_info(ptdev);

    kshim::IrqLine* irq = kshim::platform_get_irq_byname(ptdev->pdev, "gpu");
    if (kshim::IS_ERR(irq))
        return static_cast<int>(kshim::PTR_ERR(irq));
    return panthor_request_gpu_irq(ptdev, &gpu->irq, irq, GPU_INTERRUPTS_MASK);
}

int panthor_gpu_block_power_off(panthor_device* ptdev, const char* blk_name, u32 pwroff_reg, u32 pwrtrans_reg, u64 mask,
                                u32 timeout_us) {
    u64 val;
    int ret = gpu_read64_poll_timeout(ptdev, pwrtrans_reg, val, !(mask & val), 100, timeout_us);
    if (ret) {
        dev_err(ptdev->dev, "timeout waiting on %s:%llx power transition", blk_name,
                static_cast<unsigned long long>(mask));
        return ret;
    }
    gpu_write64(ptdev, pwroff_reg, mask);
    ret = gpu_read64_poll_timeout(ptdev, pwrtrans_reg, val, !(mask & val), 100, timeout_us);
    if (ret) {
        dev_err(ptdev->dev, "timeout waiting on %s:%llx power transition", blk_name,
                static_cast<unsigned long long>(mask));
        return ret;
    }
    return 0;
}

int panthor_gpu_block_power_on(panthor_device* ptdev, const char* blk_name, u32 pwron_reg, u32 pwrtrans_reg,
                               u32 rdy_reg, u64 mask, u32 timeout_us) {
    u64 val;
    int ret = gpu_read64_poll_timeout(ptdev, pwrtrans_reg, val, !(mask & val), 100, timeout_us);
    if (ret) {
        dev_err(ptdev->dev, "timeout waiting on %s:%llx power transition", blk_name,
                static_cast<unsigned long long>(mask));
        return ret;
    }
    gpu_write64(ptdev, pwron_reg, mask);
    ret = gpu_read64_poll_timeout(ptdev, rdy_reg, val, (mask & val) == mask, 100, timeout_us);
    if (ret) {
        dev_err(ptdev->dev, "timeout waiting on %s:%llx readiness", blk_name, static_cast<unsigned long long>(mask));
        return ret;
    }
    return 0;
}

int panthor_gpu_l2_power_on(panthor_device* ptdev) {
    if (ptdev->gpu_info.l2_present != 1) {
        // One core group only: the cores behind the first L2.
        const u64 core_mask = ~(ptdev->gpu_info.l2_present - 1) & (ptdev->gpu_info.l2_present - 2);
        dev_info(ptdev->dev, "using only 1st core group (%d cores from %d)", std::popcount(core_mask),
                 std::popcount(ptdev->gpu_info.shader_present));
    }
    // The coherency mode must be set before L2 comes up.
    panthor_gpu_coherency_set(ptdev);
    return panthor_gpu_power_on(ptdev, L2, 1, 20000);
}

int panthor_gpu_flush_caches(panthor_device* ptdev, u32 l2, u32 lsc, u32 other) {
    kshim::MutexGuard serialise(ptdev->gpu->cache_flush_lock);
    return panthor_gpu_issue_cmd_and_wait(ptdev, GPU_IRQ_CLEAN_CACHES_COMPLETED, GPU_FLUSH_CACHES(l2, lsc, other),
                                          false, "Flush caches");
}

int panthor_gpu_soft_reset(panthor_device* ptdev) {
    return panthor_gpu_issue_cmd_and_wait(ptdev, GPU_IRQ_RESET_COMPLETED, GPU_SOFT_RESET, true, "Soft reset");
}

void panthor_gpu_suspend(panthor_device* ptdev) {
    // A fast reset keeps the GPU state: powering L2 down is enough.
    if (!ptdev->reset.fast)
        panthor_gpu_soft_reset(ptdev);
    else
        panthor_gpu_power_off(ptdev, L2, 1, 20000);
    panthor_gpu_irq_suspend(&ptdev->gpu->irq);
}

void panthor_gpu_resume(panthor_device* ptdev) {
    panthor_gpu_irq_resume(&ptdev->gpu->irq, GPU_INTERRUPTS_MASK);
    panthor_gpu_l2_power_on(ptdev);
}

u64 panthor_gpu_read_timestamp(panthor_device* ptdev) {
    return gpu_read64_counter(ptdev, GPU_TIMESTAMP);
}

u64 panthor_gpu_read_timestamp_offset(panthor_device* ptdev) {
    return gpu_read64(ptdev, GPU_TIMESTAMP_OFFSET);
}

u64 panthor_gpu_read_cycle_count(panthor_device* ptdev) {
    return gpu_read64_counter(ptdev, GPU_CYCLE_COUNT);
}

}  // namespace panthor
