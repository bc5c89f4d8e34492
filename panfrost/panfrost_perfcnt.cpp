// Mirrors drivers/gpu/drm/panfrost/panfrost_perfcnt.c: one file at a time samples the GPU's
// performance counters into a BO mapped in its own VM.
//
// DOC: PERFCNT_ENABLE (enable = 1) takes a runtime-PM reference for as long as the counters are
// on, allocates the counter BO (one 256-byte block per JM, tiler, L2 slice and shader core up to
// the highest present), maps it in the file's VM, clears the counters and invalidates the caches,
// then programs the PRFCNT_*_EN registers and PERFCNT_CFG (MANUAL mode, the VM's AS, the counter
// set on Bifrost). PERFCNT_DUMP points PERFCNT_BASE at the BO, issues PERFCNT_SAMPLE and waits for
// the GPU IRQ: SAMPLE_COMPLETED issues CLEAN_CACHES, whose completion wakes the dump, which copies
// the BO to userspace. Another file's enable is -EBUSY; a dump or disable from a file that does
// not own the counters is -EINVAL. Both ioctls answer -ENOSYS unless unstable_ioctls is set.
#include "panfrost/panfrost_perfcnt.h"

#include "drm/drm_gem.h"
#include "hw/jm/regs/gpu_regs.h"
#include "kernel_shim/completion.h"
#include "kernel_shim/err.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/uaccess.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_mmu.h"
#include "uapi/drm/panfrost_drm.h"

namespace panfrost {

using namespace drm::uapi;

namespace {

constexpr size_t COUNTERS_PER_BLOCK = 64;
constexpr size_t BYTES_PER_COUNTER = 4;
constexpr size_t BLOCKS_PER_COREGROUP = 8;

}  // namespace

struct panfrost_perfcnt {
    panfrost_gem_mapping* mapping = nullptr;  // the counter BO in the owner's VM; lock
    size_t bosize = 0;
    void* buf = nullptr;                 // the BO's CPU mapping; lock
    panfrost_file_priv* user = nullptr;  // the file owning the counters; lock
    kshim::Mutex lock{"panfrost_perfcnt.lock"};
    kshim::completion dump_comp;
};

void panfrost_perfcnt_clean_cache_done(panfrost_device* pfdev) {
    kshim::complete(&pfdev->perfcnt->dump_comp);
}

void panfrost_perfcnt_sample_done(panfrost_device* pfdev) {
    gpu_write(pfdev, GPU_CMD, GPU_CMD_CLEAN_CACHES);
}

int panfrost_unstable_ioctl_check(panfrost_device* pfdev) {
    if (!pfdev->unstable_ioctls.load())
        return -ENOSYS;
    return 0;
}

namespace {

int panfrost_perfcnt_dump_locked(panfrost_device* pfdev) {
    panfrost_perfcnt* perfcnt = pfdev->perfcnt;
    kshim::reinit_completion(&perfcnt->dump_comp);
    const u64 gpuva = perfcnt->mapping->mmnode.start << kshim::PAGE_SHIFT;
    gpu_write(pfdev, GPU_PERFCNT_BASE_LO, static_cast<u32>(gpuva));
    gpu_write(pfdev, GPU_PERFCNT_BASE_HI, static_cast<u32>(gpuva >> 32));
    gpu_write(pfdev, GPU_INT_CLEAR, GPU_IRQ_CLEAN_CACHES_COMPLETED | GPU_IRQ_PERFCNT_SAMPLE_COMPLETED);
    gpu_write(pfdev, GPU_CMD, GPU_CMD_PERFCNT_SAMPLE);
    long ret = wait_for_completion_interruptible_timeout(&perfcnt->dump_comp, kshim::msecs_to_jiffies(1000));
    if (!ret)
        return -ETIMEDOUT;
    return ret > 0 ? 0 : static_cast<int>(ret);
}

int panfrost_perfcnt_enable_locked(panfrost_device* pfdev, drm::drm_file* file, unsigned counterset) {
    auto* user = static_cast<panfrost_file_priv*>(file->driver_priv);
    panfrost_perfcnt* perfcnt = pfdev->perfcnt;
    drm::IosysMap map;
    panfrost_gem_object* bo;
    u32 cfg, as;
    long wret;

    if (user == perfcnt->user)
        return 0;
    if (perfcnt->user)
        return -EBUSY;

    int ret = kshim::pm_runtime_get_sync(pfdev->dev);
    if (ret < 0)
        goto err_put_pm;

    bo = panfrost_gem_create(&pfdev->base, perfcnt->bosize, 0);
    if (kshim::IS_ERR(bo)) {
        ret = static_cast<int>(kshim::PTR_ERR(bo));
        goto err_put_pm;
    }

    // The counter BO is mapped in the VM of the file that enabled the counters.
    ret = panfrost_gem_open(&bo->base.base, file);
    if (ret)
        goto err_put_bo;

    perfcnt->mapping = panfrost_gem_mapping_get(bo, user);
    if (!perfcnt->mapping) {
        ret = -EINVAL;
        goto err_close_bo;
    }

    ret = drm::drm_gem_vmap(&bo->base.base, &map);
    if (ret)
        goto err_put_mapping;
    perfcnt->buf = map.vaddr;

    // Start from cleared counters and invalidated caches.
    kshim::reinit_completion(&perfcnt->dump_comp);
    gpu_write(pfdev, GPU_INT_CLEAR, GPU_IRQ_CLEAN_CACHES_COMPLETED | GPU_IRQ_PERFCNT_SAMPLE_COMPLETED);
    gpu_write(pfdev, GPU_CMD, GPU_CMD_PERFCNT_CLEAR);
    gpu_write(pfdev, GPU_CMD, GPU_CMD_CLEAN_INV_CACHES);
    wret = wait_for_completion_timeout(&perfcnt->dump_comp, kshim::msecs_to_jiffies(1000));
    if (!wret) {
        ret = -ETIMEDOUT;
        goto err_vunmap;
    }

    perfcnt->user = user;

    as = panfrost_mmu_as_get(pfdev, perfcnt->mapping->mmu);
    cfg = GPU_PERFCNT_CFG_AS(as) | GPU_PERFCNT_CFG_MODE(GPU_PERFCNT_CFG_MODE_MANUAL);
    // Bifrost has two counter sets.
    if (panfrost_model_is_bifrost(pfdev))
        cfg |= GPU_PERFCNT_CFG_SETSEL(counterset);

    gpu_write(pfdev, GPU_PRFCNT_JM_EN, 0xffffffff);
    gpu_write(pfdev, GPU_PRFCNT_SHADER_EN, 0xffffffff);
    gpu_write(pfdev, GPU_PRFCNT_MMU_L2_EN, 0xffffffff);
    // PRLAM-8186: the tiler counters go on only after PERFCNT_CFG.
    if (panfrost_has_hw_issue(pfdev, HW_ISSUE_8186))
        gpu_write(pfdev, GPU_PRFCNT_TILER_EN, 0);
    else
        gpu_write(pfdev, GPU_PRFCNT_TILER_EN, 0xffffffff);
    gpu_write(pfdev, GPU_PERFCNT_CFG, cfg);
    if (panfrost_has_hw_issue(pfdev, HW_ISSUE_8186))
        gpu_write(pfdev, GPU_PRFCNT_TILER_EN, 0xffffffff);

    // The mapping holds the BO.
    drm::drm_gem_object_put(&bo->base.base);
    return 0;

err_vunmap:
    drm::drm_gem_vunmap(&bo->base.base, &map);
    perfcnt->buf = nullptr;
err_put_mapping:
    panfrost_gem_mapping_put(perfcnt->mapping);
    perfcnt->mapping = nullptr;
err_close_bo:
    panfrost_gem_close(&bo->base.base, file);
err_put_bo:
    drm::drm_gem_object_put(&bo->base.base);
err_put_pm:
    kshim::pm_runtime_put(pfdev->dev);
    return ret;
}

int panfrost_perfcnt_disable_locked(panfrost_device* pfdev, drm::drm_file* file) {
    auto* user = static_cast<panfrost_file_priv*>(file->driver_priv);
    panfrost_perfcnt* perfcnt = pfdev->perfcnt;
    if (user != perfcnt->user)
        return -EINVAL;

    gpu_write(pfdev, GPU_PRFCNT_JM_EN, 0x0);
    gpu_write(pfdev, GPU_PRFCNT_SHADER_EN, 0x0);
    gpu_write(pfdev, GPU_PRFCNT_MMU_L2_EN, 0x0);
    gpu_write(pfdev, GPU_PRFCNT_TILER_EN, 0);
    gpu_write(pfdev, GPU_PERFCNT_CFG, GPU_PERFCNT_CFG_MODE(GPU_PERFCNT_CFG_MODE_OFF));

    perfcnt->user = nullptr;
    drm::drm_gem_object* obj = &perfcnt->mapping->obj->base.base;
    drm::IosysMap map;
    map.vaddr = perfcnt->buf;
    drm::drm_gem_vunmap(obj, &map);
    perfcnt->buf = nullptr;
    panfrost_gem_close(obj, file);
    panfrost_mmu_as_put(pfdev, perfcnt->mapping->mmu);
    panfrost_gem_mapping_put(perfcnt->mapping);
    perfcnt->mapping = nullptr;
    kshim::pm_runtime_mark_last_busy(pfdev->dev);
    kshim::pm_runtime_put_autosuspend(pfdev->dev);
    return 0;
}

}  // namespace

int panfrost_ioctl_perfcnt_enable(drm::drm_device* dev, void* data, drm::drm_file* file) {
    panfrost_device* pfdev = to_panfrost_device(dev);
    panfrost_perfcnt* perfcnt = pfdev->perfcnt;
    auto* req = static_cast<drm_panfrost_perfcnt_enable*>(data);

    int ret = panfrost_unstable_ioctl_check(pfdev);
    if (ret)
        return ret;

    // Only Bifrost has a second counter set.
    if (req->counterset > (panfrost_model_is_bifrost(pfdev) ? 1u : 0u))
        return -EINVAL;

    kshim::MutexGuard g(perfcnt->lock);
    if (req->enable)
        ret = panfrost_perfcnt_enable_locked(pfdev, file, req->counterset);
    else
        ret = panfrost_perfcnt_disable_locked(pfdev, file);
    return ret;
}

int panfrost_ioctl_perfcnt_dump(drm::drm_device* dev, void* data, drm::drm_file* file) {
    panfrost_device* pfdev = to_panfrost_device(dev);
    panfrost_perfcnt* perfcnt = pfdev->perfcnt;
    auto* req = static_cast<drm_panfrost_perfcnt_dump*>(data);

    int ret = panfrost_unstable_ioctl_check(pfdev);
    if (ret)
        return ret;

    kshim::MutexGuard g(perfcnt->lock);
    if (perfcnt->user != file->driver_priv)
        return -EINVAL;

    ret = panfrost_perfcnt_dump_locked(pfdev);
    if (ret)
        return ret;

    if (kshim::copy_to_user(req->buf_ptr, perfcnt->buf, perfcnt->bosize))
        ret = -EFAULT;
    return ret;
}

void panfrost_perfcnt_close(drm::drm_file* file) {
    auto* pfile = static_cast<panfrost_file_priv*>(file->driver_priv);
    panfrost_device* pfdev = pfile->pfdev;
    panfrost_perfcnt* perfcnt = pfdev->perfcnt;

    kshim::pm_runtime_get_sync(pfdev->dev);
    {
        kshim::MutexGuard g(perfcnt->lock);
        if (perfcnt->user == pfile)
            panfrost_perfcnt_disable_locked(pfdev, file);
    }
    kshim::pm_runtime_mark_last_busy(pfdev->dev);
    kshim::pm_runtime_put_autosuspend(pfdev->dev);
}

int panfrost_perfcnt_init(panfrost_device* pfdev) {
    size_t size;
    if (panfrost_has_hw_feature(pfdev, HW_FEATURE_V4)) {
        const unsigned ncoregroups = static_cast<unsigned>(__builtin_popcountll(pfdev->features.l2_present));
        size = ncoregroups * BLOCKS_PER_COREGROUP * COUNTERS_PER_BLOCK * BYTES_PER_COUNTER;
    } else {
        // L2 slices from MEM_FEATURES[11:8]; a sparse shader_present still dumps the holes, so the
        // highest core counts, not the number of cores. One JM and one tiler block.
        const unsigned nl2c = ((pfdev->features.mem_features >> 8) & 0xf) + 1;
        const u64 sp = pfdev->features.shader_present;
        const unsigned ncores = sp ? static_cast<unsigned>(64 - __builtin_clzll(sp)) : 0;
        size = (nl2c + ncores + 2) * COUNTERS_PER_BLOCK * BYTES_PER_COUNTER;
    }

    auto* perfcnt = kshim::knew<panfrost_perfcnt>(kshim::GFP_KERNEL);
    if (!perfcnt)
        return -ENOMEM;
    perfcnt->bosize = size;

    // Everything off to start with.
    gpu_write(pfdev, GPU_PERFCNT_CFG, GPU_PERFCNT_CFG_MODE(GPU_PERFCNT_CFG_MODE_OFF));
    gpu_write(pfdev, GPU_PRFCNT_JM_EN, 0);
    gpu_write(pfdev, GPU_PRFCNT_SHADER_EN, 0);
    gpu_write(pfdev, GPU_PRFCNT_MMU_L2_EN, 0);
    gpu_write(pfdev, GPU_PRFCNT_TILER_EN, 0);

    kshim::init_completion(&perfcnt->dump_comp);
    pfdev->perfcnt = perfcnt;
    return 0;
}

void panfrost_perfcnt_fini(panfrost_device* pfdev) {
    // Everything off before leaving.
    gpu_write(pfdev, GPU_PERFCNT_CFG, GPU_PERFCNT_CFG_MODE(GPU_PERFCNT_CFG_MODE_OFF));
    gpu_write(pfdev, GPU_PRFCNT_JM_EN, 0);
    gpu_write(pfdev, GPU_PRFCNT_SHADER_EN, 0);
    gpu_write(pfdev, GPU_PRFCNT_MMU_L2_EN, 0);
    gpu_write(pfdev, GPU_PRFCNT_TILER_EN, 0);
    kshim::kdelete(pfdev->perfcnt);
    pfdev->perfcnt = nullptr;
}

}  // namespace panfrost
