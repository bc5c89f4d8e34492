// Mirrors drivers/gpu/drm/panfrost/panfrost_drv.c: the DRM driver, open/postclose, GET_PARAM,
// the OF match table and probe/remove.
//
// DOC: This slice serves SUBMIT, WAIT_BO, CREATE_BO, MMAP_BO, GET_PARAM, GET_BO_OFFSET,
// MADVISE, SET_LABEL_BO, PERFCNT_ENABLE/DUMP (unstable: -ENOSYS unless pfdev->unstable_ioctls),
// JM_CTX_CREATE, JM_CTX_DESTROY, SYNC_BO and QUERY_BO_INFO, and shows fdinfo (engine time and
// cycles when profiling, frequencies, memory): every ioctl of driver 1.6. The ioctl table keeps
// upstream's numbering (entry i is nr DRM_COMMAND_BASE + i); the DRM core answers every nr past
// the table with -EINVAL, as it does for an unknown ioctl. Each open file
// gets its own VM (panfrost_mmu_ctx_create), in which every BO it holds a handle to is mapped
// (panfrost_gem_open), and its default JM context (handle 0).
#include "panfrost/panfrost_drv.h"

#include "drm/drm_auth.h"
#include "drm/drm_fdinfo.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_syncobj.h"
#include "drm/drm_syncobj_sched.h"
#include "kernel_shim/arch_timer.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/err.h"
#include "kernel_shim/report.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/uaccess.h"
#include "panfrost/panfrost_gem.h"
#include "panfrost/panfrost_gpu.h"
#include "panfrost/panfrost_job.h"
#include "panfrost/panfrost_mmu.h"
#include "panfrost/panfrost_perfcnt.h"
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

// Flags CREATE_BO knows in driver 1.6.
constexpr u32 PANFROST_BO_FLAGS = PANFROST_BO_NOEXEC | PANFROST_BO_HEAP | PANFROST_BO_WB_MMAP;

int panfrost_ioctl_create_bo(drm::drm_device* dev, void* data, drm_file* file) {
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    auto* args = static_cast<drm_panfrost_create_bo*>(data);

    // A heap grows on faults: it must not be executable.
    if (!args->size || args->pad || (args->flags & ~PANFROST_BO_FLAGS) ||
        ((args->flags & PANFROST_BO_HEAP) && !(args->flags & PANFROST_BO_NOEXEC)))
        return -EINVAL;

    panfrost_gem_object* bo = panfrost_gem_create(dev, args->size, args->flags);
    if (kshim::IS_ERR(bo))
        return static_cast<int>(kshim::PTR_ERR(bo));

    // The handle's creation maps the BO in this file's VM (panfrost_gem_open).
    int ret = file->gem.handle_create(&bo->base.base, &args->handle);
    if (!ret) {
        panfrost_gem_mapping* mapping = panfrost_gem_mapping_get(bo, priv);
        if (mapping) {
            args->offset = mapping->mmnode.start << kshim::PAGE_SHIFT;
            panfrost_gem_mapping_put(mapping);
        } else {
            // Only when userspace guessed the handle and closed it in between.
            ret = -EINVAL;
        }
    }
    drm::drm_gem_object_put(&bo->base.base);
    return ret;
}

int panfrost_ioctl_wait_bo(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panfrost_wait_bo*>(data);
    // An absolute deadline: one already past (or 0) makes this a poll.
    const long timeout = drm::drm_timeout_abs_to_jiffies(args->timeout_ns);

    if (args->pad)
        return -EINVAL;
    drm::drm_gem_object* gem_obj = file->gem.lookup(args->handle);
    if (!gem_obj)
        return -ENOENT;

    long ret = kshim::dma_resv_wait_timeout(gem_obj->resv, kshim::DMA_RESV_USAGE_READ, true,
                                            static_cast<unsigned long>(timeout));
    if (!ret)
        ret = timeout ? -ETIMEDOUT : -EBUSY;
    drm::drm_gem_object_put(gem_obj);
    // Positive (the jiffies left) on success, as upstream.
    return static_cast<int>(std::min<long>(ret, INT32_MAX));
}

int panfrost_ioctl_mmap_bo(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panfrost_mmap_bo*>(data);
    if (args->flags != 0) {
        kshim::log_message(kshim::LogLevel::Info, nullptr, "unknown mmap_bo flags: %d", args->flags);
        return -EINVAL;
    }
    drm::drm_gem_object* gem_obj = file->gem.lookup(args->handle);
    if (!gem_obj)
        return -ENOENT;

    int ret;
    // A heap's pages are not pinned: no CPU mapping.
    if (to_panfrost_bo(gem_obj)->is_heap) {
        ret = -EINVAL;
    } else {
        ret = drm::drm_gem_create_mmap_offset(gem_obj);
        if (!ret)
            args->offset = drm::drm_vma_node_offset_addr(&gem_obj->vma_node);
    }
    drm::drm_gem_object_put(gem_obj);
    return ret;
}

int panfrost_ioctl_get_bo_offset(drm::drm_device*, void* data, drm_file* file) {
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    auto* args = static_cast<drm_panfrost_get_bo_offset*>(data);

    drm::drm_gem_object* gem_obj = file->gem.lookup(args->handle);
    if (!gem_obj)
        return -ENOENT;
    panfrost_gem_mapping* mapping = panfrost_gem_mapping_get(to_panfrost_bo(gem_obj), priv);
    drm::drm_gem_object_put(gem_obj);
    if (!mapping)
        return -EINVAL;
    args->offset = mapping->mmnode.start << kshim::PAGE_SHIFT;
    panfrost_gem_mapping_put(mapping);
    return 0;
}

int panfrost_ioctl_madvise(drm::drm_device* dev, void* data, drm_file* file) {
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    auto* args = static_cast<drm_panfrost_madvise*>(data);
    panfrost_device* pfdev = to_panfrost_device(dev);

    drm::drm_gem_object* gem_obj = file->gem.lookup(args->handle);
    if (!gem_obj)
        return -ENOENT;
    panfrost_gem_object* bo = to_panfrost_bo(gem_obj);

    int ret = kshim::dma_resv_lock_interruptible(gem_obj->resv, nullptr);
    if (ret) {
        drm::drm_gem_object_put(gem_obj);
        return ret;
    }
    {
        kshim::MutexGuard sg(pfdev->shrinker_lock);
        kshim::MutexGuard mg(bo->mappings.lock);
        // Only the caller's file may hold a purgeable BO: a BO shared with other files (or
        // mapped nowhere) cannot be DONTNEED, as upstream.
        if (args->madv == PANFROST_MADV_DONTNEED &&
            (!list_is_singular(&bo->mappings.list) ||
             WARN_ON_ONCE(container_of(bo->mappings.list.next, panfrost_gem_mapping, node)->mmu != priv->mmu))) {
            ret = -EINVAL;
        } else {
            // madv is not range-checked: stored as given while the pages exist.
            args->retained = drm::drm_gem_shmem_madvise_locked(&bo->base, static_cast<int>(args->madv));
            if (args->retained) {
                if (args->madv == PANFROST_MADV_DONTNEED)
                    list_move_tail(&bo->madv_list, &pfdev->shrinker_list);
                else if (args->madv == PANFROST_MADV_WILLNEED)
                    list_del_init(&bo->madv_list);
            }
        }
    }
    kshim::dma_resv_unlock(gem_obj->resv);
    drm::drm_gem_object_put(gem_obj);
    return ret;
}

int panfrost_ioctl_set_label_bo(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panfrost_set_label_bo*>(data);
    const char* label = nullptr;
    int ret = 0;

    if (args->pad)
        return -EINVAL;
    drm::drm_gem_object* obj = file->gem.lookup(args->handle);
    if (!obj)
        return -ENOENT;
    if (args->label) {
        char* str = kshim::strndup_user(args->label, PANFROST_BO_LABEL_MAXLEN);
        if (kshim::IS_ERR(str)) {
            ret = static_cast<int>(kshim::PTR_ERR(str));
            // Too long reads as "too big", not as an invalid argument.
            if (ret == -EINVAL)
                ret = -E2BIG;
            drm::drm_gem_object_put(obj);
            return ret;
        }
        label = str;
    }
    // A NULL label clears it; an empty string is a label of its own.
    panfrost_gem_set_label(obj, label);
    drm::drm_gem_object_put(obj);
    return ret;
}

int panfrost_ioctl_sync_bo(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panfrost_sync_bo*>(data);
    int ret = 0;

    if (args->pad)
        return -EINVAL;
    if (!args->op_count)
        return 0;
    // kvmalloc_array refuses more than INT_MAX bytes.
    if (args->op_count > INT32_MAX / sizeof(drm_panfrost_bo_sync_op))
        return -ENOMEM;
    auto* ops = static_cast<drm_panfrost_bo_sync_op*>(
        kshim::kcalloc(args->op_count, sizeof(drm_panfrost_bo_sync_op), kshim::GFP_KERNEL));
    if (!ops)
        return -ENOMEM;
    if (kshim::copy_from_user(ops, args->ops, args->op_count * sizeof(*ops))) {
        kshim::kfree(ops);
        return -EFAULT;
    }
    // Stops at the first failing op; the ones before it stay done.
    for (u32 i = 0; i < args->op_count; i++) {
        drm::drm_gem_object* obj = file->gem.lookup(ops[i].handle);
        if (!obj) {
            ret = -ENOENT;
            break;
        }
        ret = panfrost_gem_sync(obj, ops[i].type, ops[i].offset, ops[i].size);
        drm::drm_gem_object_put(obj);
        if (ret)
            break;
    }
    kshim::kfree(ops);
    return ret;
}

int panfrost_ioctl_query_bo_info(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panfrost_query_bo_info*>(data);

    drm::drm_gem_object* gem_obj = file->gem.lookup(args->handle);
    if (!gem_obj)
        return -ENOENT;
    panfrost_gem_object* bo = to_panfrost_bo(gem_obj);
    args->pad = 0;
    args->create_flags = 0;
    args->extra_flags = 0;
    if (drm::drm_gem_is_imported(gem_obj)) {
        args->extra_flags |= DRM_PANFROST_BO_IS_IMPORTED;
    } else {
        if (bo->noexec)
            args->create_flags |= PANFROST_BO_NOEXEC;
        if (bo->is_heap)
            args->create_flags |= PANFROST_BO_HEAP;
        // Whatever is not write-combined is write-back (also every BO of a coherent device).
        if (!bo->base.map_wc)
            args->create_flags |= PANFROST_BO_WB_MMAP;
    }
    drm::drm_gem_object_put(gem_obj);
    return 0;
}

// Each in-sync's fence (point 0) becomes a scheduler dependency of the job.
int panfrost_copy_in_sync(drm_file* file, const drm_panfrost_submit* args, panfrost_job* job) {
    const u32 in_fence_count = args->in_sync_count;
    if (!in_fence_count)
        return 0;
    auto* handles = static_cast<u32*>(kshim::kcalloc(in_fence_count, sizeof(u32), kshim::GFP_KERNEL));
    if (!handles)
        return -ENOMEM;
    int ret = 0;
    if (kshim::copy_from_user(handles, args->in_syncs, in_fence_count * sizeof(u32))) {
        ret = -EFAULT;
        goto fail;
    }
    for (u32 i = 0; i < in_fence_count; i++) {
        ret = drm::drm_sched_job_add_syncobj_dependency(&job->base, file, handles[i], 0);
        if (ret)
            goto fail;
    }
fail:
    kshim::kfree(handles);
    return ret;
}

// The job's BOs (drm_gem_objects_lookup) and their mappings in this file's VM, each counted as
// in use by the GPU.
int panfrost_lookup_bos(drm_file* file, const drm_panfrost_submit* args, panfrost_job* job) {
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    job->bo_count = args->bo_handle_count;
    if (!job->bo_count)
        return 0;

    auto* handles = static_cast<u32*>(kshim::kcalloc(job->bo_count, sizeof(u32), kshim::GFP_KERNEL));
    job->bos = static_cast<drm::drm_gem_object**>(
        kshim::kcalloc(job->bo_count, sizeof(drm::drm_gem_object*), kshim::GFP_KERNEL));
    job->mappings = static_cast<panfrost_gem_mapping**>(
        kshim::kcalloc(job->bo_count, sizeof(panfrost_gem_mapping*), kshim::GFP_KERNEL));
    int ret = 0;
    if (!handles || !job->bos || !job->mappings) {
        ret = -ENOMEM;
        goto out;
    }
    if (kshim::copy_from_user(handles, args->bo_handles, job->bo_count * sizeof(u32))) {
        ret = -EFAULT;
        goto out;
    }
    for (u32 i = 0; i < job->bo_count; i++) {
        job->bos[i] = file->gem.lookup(handles[i]);
        if (!job->bos[i]) {
            ret = -ENOENT;
            goto out;
        }
    }
    for (u32 i = 0; i < job->bo_count; i++) {
        panfrost_gem_object* bo = to_panfrost_bo(job->bos[i]);
        panfrost_gem_mapping* mapping = panfrost_gem_mapping_get(bo, priv);
        if (!mapping) {
            ret = -EINVAL;
            break;
        }
        bo->gpu_usecount.fetch_add(1);
        job->mappings[i] = mapping;
    }
out:
    kshim::kfree(handles);
    return ret;
}

// The requirement bits SUBMIT knows (1.3 added CYCLE_COUNT).
constexpr u32 PANFROST_JD_REQ_MASK = PANFROST_JD_REQ_FS | PANFROST_JD_REQ_CYCLE_COUNT;

int panfrost_ioctl_submit(drm::drm_device* dev, void* data, drm_file* file) {
    panfrost_device* pfdev = to_panfrost_device(dev);
    auto* priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    auto* args = static_cast<drm_panfrost_submit*>(data);
    drm::drm_syncobj* sync_out = nullptr;
    panfrost_jm_ctx* jm_ctx = nullptr;
    panfrost_job* job = nullptr;
    int ret = 0;
    int slot;

    if (args->pad)
        return -EINVAL;
    if (!args->jc)
        return -EINVAL;
    if (args->requirements & ~PANFROST_JD_REQ_MASK)
        return -EINVAL;

    if (args->out_sync > 0) {
        sync_out = drm::drm_syncobj_find(file, args->out_sync);
        if (!sync_out)
            return -ENODEV;
    }

    jm_ctx = panfrost_jm_ctx_from_handle(file, args->jm_ctx_handle);
    if (!jm_ctx) {
        ret = -EINVAL;
        goto out_put_syncout;
    }

    job = kshim::knew<panfrost_job>(kshim::GFP_KERNEL);
    if (!job) {
        ret = -ENOMEM;
        goto out_put_jm_ctx;
    }
    kshim::kref_init(&job->refcount);
    job->pfdev = pfdev;
    job->jc = args->jc;
    job->requirements = args->requirements;
    job->flush_id = panfrost_gpu_get_latest_flush_id(pfdev);
    job->mmu = panfrost_mmu_ctx_get(priv->mmu);
    job->ctx = panfrost_jm_ctx_get(jm_ctx);
    job->engine_usage = &priv->engine_usage;

    slot = panfrost_job_get_slot(job);
    ret = drm::drm_sched_job_init(&job->base, &jm_ctx->slot_entity[slot].sched_entity, 1, nullptr, file->client_id);
    if (ret)
        goto out_put_job;

    ret = panfrost_copy_in_sync(file, args, job);
    if (ret)
        goto out_cleanup_job;

    ret = panfrost_lookup_bos(file, args, job);
    if (ret)
        goto out_cleanup_job;

    ret = panfrost_job_push(job);
    if (ret)
        goto out_cleanup_job;

    // Update the return sync object for the job.
    if (sync_out)
        drm::drm_syncobj_replace_fence(sync_out, job->render_done_fence);

out_cleanup_job:
    if (ret)
        drm::drm_sched_job_cleanup(&job->base);
out_put_job:
    panfrost_job_put(job);
out_put_jm_ctx:
    panfrost_jm_ctx_put(jm_ctx);
out_put_syncout:
    if (sync_out)
        drm::drm_syncobj_put(sync_out);
    return ret;
}

int panfrost_ioctl_jm_ctx_create(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panfrost_jm_ctx_create*>(data);
    const int ret = panfrost_jm_ctx_priority_permit(file, args->priority);
    if (ret)
        return ret;
    return panfrost_jm_ctx_create(file, args);
}

int panfrost_ioctl_jm_ctx_destroy(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panfrost_jm_ctx_destroy*>(data);
    if (args->pad)
        return -EINVAL;
    // The default context lives as long as the file.
    if (!args->handle)
        return -EINVAL;
    return panfrost_jm_ctx_destroy(file, args->handle);
}

int panfrost_open(drm::drm_device* ddev, drm_file* file) {
    panfrost_device* pfdev = to_panfrost_device(ddev);
    auto* panfrost_priv = kshim::knew<panfrost_file_priv>(kshim::GFP_KERNEL);
    if (!panfrost_priv)
        return -ENOMEM;
    panfrost_priv->pfdev = pfdev;
    file->driver_priv = panfrost_priv;

    panfrost_priv->mmu = panfrost_mmu_ctx_create(pfdev);
    if (kshim::IS_ERR(panfrost_priv->mmu)) {
        const int ret = static_cast<int>(kshim::PTR_ERR(panfrost_priv->mmu));
        kshim::kdelete(panfrost_priv);
        file->driver_priv = nullptr;
        return ret;
    }

    const int ret = panfrost_jm_open(file);
    if (ret) {
        panfrost_mmu_ctx_put(panfrost_priv->mmu);
        kshim::kdelete(panfrost_priv);
        file->driver_priv = nullptr;
        return ret;
    }
    return 0;
}

void panfrost_postclose(drm::drm_device*, drm_file* file) {
    auto* panfrost_priv = static_cast<panfrost_file_priv*>(file->driver_priv);
    // Upstream's DRM core has dropped the file's GEM handles (and with them its BO mappings)
    // before postclose; the shim's core drops them after it, so do it here while the VM the
    // close hook looks for is still the file's.
    // The counter BO is mapped in this file's VM.
    panfrost_perfcnt_close(file);
    file->gem.release();
    // Hard-stops the file's jobs on the hardware; the jobs hold what they still use.
    panfrost_jm_close(file);
    panfrost_mmu_ctx_put(panfrost_priv->mmu);
    kshim::kdelete(panfrost_priv);
    file->driver_priv = nullptr;
}

// The slots' engine names, as the kernel prints them; the compute-only slot is not shown.
void panfrost_gpu_show_fdinfo(panfrost_device* pfdev, panfrost_file_priv* panfrost_priv, drm::drm_printer* p) {
    static const char* const engine_names[] = {"fragment", "vertex-tiler", "compute-only"};
    static_assert(std::size(engine_names) == NUM_JOB_SLOTS);

    panfrost_engine_usage usage;
    {
        kshim::SpinGuard g(panfrost_jm_job_lock(pfdev));
        usage = panfrost_priv->engine_usage;
    }
    const bool profiling = pfdev->profile_mode.load();
    for (u32 i = 0; i < NUM_JOB_SLOTS - 1; i++) {
        if (profiling) {
            p->printf("drm-engine-%s:\t%llu ns\n", engine_names[i],
                      static_cast<unsigned long long>(usage.elapsed_ns[i]));
            p->printf("drm-cycles-%s:\t%llu\n", engine_names[i], static_cast<unsigned long long>(usage.cycles[i]));
        }
        p->printf("drm-maxfreq-%s:\t%lu Hz\n", engine_names[i], pfdev->pfdevfreq.fast_rate);
        p->printf("drm-curfreq-%s:\t%lu Hz\n", engine_names[i], pfdev->pfdevfreq.current_frequency);
    }
}

void panfrost_show_fdinfo(drm::drm_printer* p, drm_file* file) {
    panfrost_device* pfdev = to_panfrost_device(file->dev);
    panfrost_gpu_show_fdinfo(pfdev, static_cast<panfrost_file_priv*>(file->driver_priv), p);
    drm::drm_show_memory_stats(p, file);
}

using drm::DRM_RENDER_ALLOW;
using namespace drm::uapi;

const drm::IoctlDesc panfrost_drm_driver_ioctls[] = {
    DRM_IOCTL_DEF_DRV(PANFROST_SUBMIT, panfrost_ioctl_submit, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_WAIT_BO, panfrost_ioctl_wait_bo, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_CREATE_BO, panfrost_ioctl_create_bo, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_MMAP_BO, panfrost_ioctl_mmap_bo, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_GET_PARAM, panfrost_ioctl_get_param, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_GET_BO_OFFSET, panfrost_ioctl_get_bo_offset, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_PERFCNT_ENABLE, panfrost_ioctl_perfcnt_enable, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_PERFCNT_DUMP, panfrost_ioctl_perfcnt_dump, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_MADVISE, panfrost_ioctl_madvise, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_SET_LABEL_BO, panfrost_ioctl_set_label_bo, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_JM_CTX_CREATE, panfrost_ioctl_jm_ctx_create, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_JM_CTX_DESTROY, panfrost_ioctl_jm_ctx_destroy, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_SYNC_BO, panfrost_ioctl_sync_bo, DRM_RENDER_ALLOW),
    DRM_IOCTL_DEF_DRV(PANFROST_QUERY_BO_INFO, panfrost_ioctl_query_bo_info, DRM_RENDER_ALLOW),
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
    // devm_* of the device (clocks, supplies, mapping, IRQs), newest first.
    kshim::devres_release_all(pfdev->dev);
    drm::drm_vma_offset_manager_destroy(&pfdev->vma_offset_manager);
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
    .show_fdinfo = panfrost_show_fdinfo,
    .gem_create_object = panfrost_gem_create_object,
    .gem_prime_import_sg_table = panfrost_gem_prime_import_sg_table,
};

int panfrost_probe(kshim::PlatformDevice* pdev) {
    // devm_drm_dev_alloc: the device lives until remove (or a failed probe) frees it.
    auto* pfdev = kshim::knew<panfrost_device>(kshim::GFP_KERNEL, panfrost_drm_driver);
    if (!pfdev)
        return -ENOMEM;
    pfdev->pdev = pdev;
    pfdev->dev = &pdev->dev;
    kshim::platform_set_drvdata(pdev, pfdev);
    drm::drm_vma_offset_manager_init(&pfdev->vma_offset_manager, drm::DRM_FILE_PAGE_OFFSET_START,
                                     drm::DRM_FILE_PAGE_OFFSET_SIZE);
    pfdev->base.vma_offset_manager = &pfdev->vma_offset_manager;

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

    // drm_dev_register cannot fail here (there is no minor to allocate).
    const int ret = panfrost_gem_shrinker_init(&pfdev->base);
    if (ret) {
        kshim::pm_runtime_disable(pfdev->dev);
        panfrost_device_fini(pfdev);
        kshim::pm_runtime_set_suspended(pfdev->dev);
        kshim::pm_runtime_put_noidle(pfdev->dev);
        panfrost_free(pfdev);
        return ret;
    }

    // Then the driver core drops its reference: the autosuspend timer starts.
    kshim::pm_runtime_put_autosuspend(pfdev->dev);
    return 0;
}

void panfrost_remove(kshim::PlatformDevice* pdev) {
    panfrost_device* pfdev = panfrost_from_pdev(pdev);
    if (WARN_ON(!pfdev))
        return;
    pfdev->base.unplug();
    panfrost_gem_shrinker_cleanup(&pfdev->base);

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
