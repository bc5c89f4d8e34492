// Mirrors drivers/gpu/drm/panthor/panthor_drv.c: the DRM driver (ioctls, open/postclose, mmap),
// the user <-> kernel object copy helpers, the submit context, and probe/remove.
//
// DOC: user <-> kernel object copies. Arguments that grow over time are exchanged with a size:
// DEV_QUERY copies min(user size, kernel size) out and zero-fills the rest of the user's object
// (panthor_uobj_set), and object arrays (drm_panthor_obj_array) are copied in element by element
// when the user's stride differs from the kernel's struct: a shorter element is zero-extended, a
// longer one must have a zero tail (copy_struct_from_user). Each object has a minimum size (the
// struct as first released): below it -EINVAL.
//
// DOC: submit context. VM_BIND (async) and GROUP_SUBMIT turn an array of operations
// into drm_sched jobs with wait/signal sync operations. The context first collects every signal
// target (syncobj, point) of the batch, so that a job waiting on a point signalled by an earlier
// job of the same batch waits on that job's fence; then locks the reservation objects, adds the
// dependencies and arms each job in order (updating the signal targets with its finished fence),
// and finally pushes the jobs and publishes the fences in the syncobjs. Everything that can fail
// or allocate happens before the push: timeline points get their dma_fence_chain up front.
#include "panthor/panthor_drv.h"

#include <boost/intrusive/list.hpp>

#include <atomic>
#include <cstddef>
#include <cstring>

#include "drm/drm_auth.h"
#include "drm/drm_exec.h"
#include "drm/drm_fdinfo.h"
#include "drm/drm_ioctl.h"
#include "drm/drm_syncobj.h"
#include "drm/drm_vma_manager.h"
#include "drm/uaccess.h"
#include "hw/csf/regs/csf_regs.h"
#include "kernel_shim/arch_timer.h"
#include "kernel_shim/cred.h"
#include "kernel_shim/devres.h"
#include "kernel_shim/dma-buf/dma-fence-chain.h"
#include "kernel_shim/err.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/report.h"
#include "kernel_shim/sched.h"
#include "kernel_shim/slab.h"
#include "kernel_shim/workqueue.h"
#include "panthor/panthor_fw.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_gpu.h"
#include "panthor/panthor_heap.h"
#include "panthor/panthor_mmu.h"
#include "panthor/panthor_sched.h"

namespace panthor {

using namespace kshim;
using drm::drm_file;
using drm::VmArea;

workqueue_struct* panthor_cleanup_wq = nullptr;

namespace {

panthor_file* to_pfile(drm_file* file) {
    return static_cast<panthor_file*>(file->driver_priv);
}

// ---------------------------------------------------------------------------------------------
// User <-> kernel object copies.

// PANTHOR_UOBJ_MIN_SIZE: the size of a uAPI object up to its last mandatory field.
template <class T>
struct panthor_uobj_min_size;
#define PANTHOR_UOBJ_DECL(_type, _last_mandatory_field)                                                             \
    template <>                                                                                                     \
    struct panthor_uobj_min_size<_type> {                                                                           \
        static constexpr u32 value = offsetof(_type, _last_mandatory_field) + sizeof(_type::_last_mandatory_field); \
    }
PANTHOR_UOBJ_DECL(drm_panthor_gpu_info, tiler_present);
PANTHOR_UOBJ_DECL(drm_panthor_csif_info, pad);
PANTHOR_UOBJ_DECL(drm_panthor_timestamp_info, current_timestamp);
PANTHOR_UOBJ_DECL(drm_panthor_group_priorities_info, pad);
PANTHOR_UOBJ_DECL(drm_panthor_mmu_info, page_size_bitmap);
PANTHOR_UOBJ_DECL(drm_panthor_sync_op, timeline_value);
PANTHOR_UOBJ_DECL(drm_panthor_queue_submit, syncs);
PANTHOR_UOBJ_DECL(drm_panthor_queue_create, ringbuf_size);
PANTHOR_UOBJ_DECL(drm_panthor_vm_bind_op, syncs);
PANTHOR_UOBJ_DECL(drm_panthor_bo_sync_op, size);
#undef PANTHOR_UOBJ_DECL
// Minimum sizes: docs/hw/csf/uapi.md.
static_assert(panthor_uobj_min_size<drm_panthor_gpu_info>::value == 96);
static_assert(panthor_uobj_min_size<drm_panthor_csif_info>::value == 24);
static_assert(panthor_uobj_min_size<drm_panthor_timestamp_info>::value == 16);
static_assert(panthor_uobj_min_size<drm_panthor_group_priorities_info>::value == 4);
static_assert(panthor_uobj_min_size<drm_panthor_sync_op>::value == 16);
static_assert(panthor_uobj_min_size<drm_panthor_queue_submit>::value == 40);
static_assert(panthor_uobj_min_size<drm_panthor_queue_create>::value == 8);
static_assert(panthor_uobj_min_size<drm_panthor_vm_bind_op>::value == 48);
static_assert(panthor_uobj_min_size<drm_panthor_bo_sync_op>::value == 24);

// panthor_set_uobj: a kernel object out to a user object of `usr_size` bytes.
int panthor_set_uobj(u64 usr_ptr, u32 usr_size, u32 min_size, u32 kern_size, const void* in) {
    if (usr_size < min_size)
        return -EINVAL;
    if (drm::copy_to_user(usr_ptr, in, std::min(usr_size, kern_size)))
        return -EFAULT;
    // A newer userspace knows fields this kernel does not fill: they read as zero.
    if (usr_size > kern_size && clear_user(usr_ptr + kern_size, usr_size - kern_size))
        return -EFAULT;
    return 0;
}

// PANTHOR_UOBJ_SET.
template <class T>
int panthor_uobj_set(u64 usr_ptr, u32 usr_size, const T& src) {
    return panthor_set_uobj(usr_ptr, usr_size, panthor_uobj_min_size<T>::value, sizeof(T), &src);
}

// panthor_get_uobj_array: a kmalloc'ed kernel copy of a user object array, nullptr when the
// array is empty, or ERR_PTR.
void* panthor_get_uobj_array(const drm_panthor_obj_array* in, u32 min_stride, u32 obj_size) {
    if (!in->count)
        return nullptr;
    // A stride below the first version of the object lacks mandatory fields.
    if (in->stride < min_stride)
        return ERR_PTR(-EINVAL);

    // kvmalloc refuses sizes above INT_MAX outright (upstream also WARNs; a test must not).
    const u64 bytes = u64{in->count} * obj_size;
    if (bytes > INT32_MAX)
        return ERR_PTR(-ENOMEM);
    auto* out_alloc = static_cast<u8*>(kmalloc(bytes, GFP_KERNEL));
    if (!out_alloc)
        return ERR_PTR(-ENOMEM);

    int ret = 0;
    if (obj_size == in->stride) {
        // Same uAPI version on both sides: one copy.
        if (drm::copy_from_user(out_alloc, in->array, bytes))
            ret = -EFAULT;
    } else {
        u64 in_ptr = in->array;
        u8* out_ptr = out_alloc;
        for (u32 i = 0; i < in->count; i++) {
            ret = copy_struct_from_user(out_ptr, obj_size, in_ptr, in->stride);
            if (ret)
                break;
            out_ptr += obj_size;
            in_ptr += in->stride;
        }
    }
    if (ret) {
        kfree(out_alloc);
        return ERR_PTR(ret);
    }
    return out_alloc;
}

// PANTHOR_UOBJ_GET_ARRAY: *dest gets the kernel copy (kfree it; nullptr for an empty array).
template <class T>
int panthor_uobj_get_array(T** dest, const drm_panthor_obj_array* uobj_array) {
    void* tmp = panthor_get_uobj_array(uobj_array, panthor_uobj_min_size<T>::value, sizeof(T));
    if (IS_ERR(tmp))
        return static_cast<int>(PTR_ERR(tmp));
    *dest = static_cast<T*>(tmp);
    return 0;
}

// ---------------------------------------------------------------------------------------------
// Submit context (shared by VM_BIND async and GROUP_SUBMIT).

// A syncobj point the batch signals: starts as the fence the point has now (or none) and ends as
// the finished fence of the batch's last job signalling it.
struct panthor_sync_signal {
    boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::safe_link>> node;
    u32 handle = 0;
    u64 point = 0;  // 0 for binary syncobjs
    drm::drm_syncobj* syncobj = nullptr;
    dma_fence_chain* chain = nullptr;  // timeline points: pre-allocated link
    dma_fence* fence = nullptr;
};
using panthor_sync_signal_list = boost::intrusive::list<
    panthor_sync_signal,
    boost::intrusive::member_hook<panthor_sync_signal, decltype(panthor_sync_signal::node), &panthor_sync_signal::node>,
    boost::intrusive::constant_time_size<false>>;

struct panthor_job_ctx {
    drm::drm_sched_job* job = nullptr;  // null once pushed (the scheduler owns it)
    drm_panthor_sync_op* syncops = nullptr;
    u32 syncop_count = 0;
};

struct panthor_submit_ctx {
    drm_file* file = nullptr;
    // The signal targets of the batch; waits look here before asking the syncobj.
    panthor_sync_signal_list signals;
    panthor_job_ctx* jobs = nullptr;
    u32 job_count = 0;
    drm::drm_exec exec;
};

constexpr u32 PANTHOR_SYNC_OP_FLAGS_MASK = DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_MASK | DRM_PANTHOR_SYNC_OP_SIGNAL;

bool sync_op_is_signal(const drm_panthor_sync_op* op) {
    return op->flags & DRM_PANTHOR_SYNC_OP_SIGNAL;
}
bool sync_op_is_wait(const drm_panthor_sync_op* op) {
    return !(op->flags & DRM_PANTHOR_SYNC_OP_SIGNAL);
}

int panthor_check_sync_op(const drm_panthor_sync_op* op) {
    if (op->flags & ~PANTHOR_SYNC_OP_FLAGS_MASK)
        return -EINVAL;
    const u32 handle_type = op->flags & DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_MASK;
    if (handle_type != DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ &&
        handle_type != DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_TIMELINE_SYNCOBJ)
        return -EINVAL;
    if (handle_type == DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ && op->timeline_value != 0)
        return -EINVAL;
    return 0;
}

void panthor_sync_signal_free(panthor_sync_signal* sig_sync) {
    if (!sig_sync)
        return;
    if (sig_sync->syncobj)
        drm::drm_syncobj_put(sig_sync->syncobj);
    dma_fence_chain_free(sig_sync->chain);
    dma_fence_put(sig_sync->fence);
    kdelete(sig_sync);
}

int panthor_submit_ctx_add_sync_signal(panthor_submit_ctx* ctx, u32 handle, u64 point) {
    auto* sig_sync = knew<panthor_sync_signal>(GFP_KERNEL);
    if (!sig_sync)
        return -ENOMEM;
    sig_sync->handle = handle;
    sig_sync->point = point;

    int ret;
    if (point > 0) {
        sig_sync->chain = dma_fence_chain_alloc();
        if (!sig_sync->chain) {
            ret = -ENOMEM;
            goto err_free_sig_sync;
        }
    }

    sig_sync->syncobj = drm::drm_syncobj_find(ctx->file, handle);
    if (!sig_sync->syncobj) {
        ret = -EINVAL;
        goto err_free_sig_sync;
    }

    // The point's current fence, if any: a wait on this point by an earlier job of the batch
    // than its first signaller still means this fence. No fence yet is fine.
    {
        dma_fence* cur_fence = nullptr;
        if (!drm::drm_syncobj_find_fence(ctx->file, handle, point, 0, &cur_fence))
            sig_sync->fence = cur_fence;
    }

    ctx->signals.push_back(*sig_sync);
    return 0;

err_free_sig_sync:
    panthor_sync_signal_free(sig_sync);
    return ret;
}

panthor_sync_signal* panthor_submit_ctx_search_sync_signal(panthor_submit_ctx* ctx, u32 handle, u64 point) {
    for (panthor_sync_signal& sig_sync : ctx->signals)
        if (sig_sync.handle == handle && sig_sync.point == point)
            return &sig_sync;
    return nullptr;
}

int panthor_submit_ctx_add_job(panthor_submit_ctx* ctx, u32 idx, drm::drm_sched_job* job,
                               const drm_panthor_obj_array* syncs) {
    ctx->jobs[idx].job = job;
    const int ret = panthor_uobj_get_array(&ctx->jobs[idx].syncops, syncs);
    if (ret)
        return ret;
    ctx->jobs[idx].syncop_count = syncs->count;
    return 0;
}

int panthor_submit_ctx_get_sync_signal(panthor_submit_ctx* ctx, u32 handle, u64 point) {
    if (panthor_submit_ctx_search_sync_signal(ctx, handle, point))
        return 0;
    return panthor_submit_ctx_add_sync_signal(ctx, handle, point);
}

int panthor_submit_ctx_update_job_sync_signal_fences(panthor_submit_ctx* ctx, u32 job_idx) {
    dma_fence* done_fence = &ctx->jobs[job_idx].job->s_fence->finished;
    const drm_panthor_sync_op* sync_ops = ctx->jobs[job_idx].syncops;
    const u32 sync_op_count = ctx->jobs[job_idx].syncop_count;

    for (u32 i = 0; i < sync_op_count; i++) {
        if (!sync_op_is_signal(&sync_ops[i]))
            continue;
        panthor_sync_signal* sig_sync =
            panthor_submit_ctx_search_sync_signal(ctx, sync_ops[i].handle, sync_ops[i].timeline_value);
        if (WARN_ON(!sig_sync))
            return -EINVAL;
        dma_fence* old_fence = sig_sync->fence;
        sig_sync->fence = dma_fence_get(done_fence);
        dma_fence_put(old_fence);
        if (WARN_ON(!sig_sync->fence))
            return -EINVAL;
    }
    return 0;
}

int panthor_submit_ctx_collect_job_signal_ops(panthor_submit_ctx* ctx, u32 job_idx) {
    const drm_panthor_sync_op* sync_ops = ctx->jobs[job_idx].syncops;
    const u32 sync_op_count = ctx->jobs[job_idx].syncop_count;

    for (u32 i = 0; i < sync_op_count; i++) {
        if (!sync_op_is_signal(&sync_ops[i]))
            continue;
        int ret = panthor_check_sync_op(&sync_ops[i]);
        if (ret)
            return ret;
        ret = panthor_submit_ctx_get_sync_signal(ctx, sync_ops[i].handle, sync_ops[i].timeline_value);
        if (ret)
            return ret;
    }
    return 0;
}

// The last step: the jobs are pushed, so their fences will signal; make them visible.
void panthor_submit_ctx_push_fences(panthor_submit_ctx* ctx) {
    for (panthor_sync_signal& sig_sync : ctx->signals) {
        if (sig_sync.chain) {
            drm::drm_syncobj_add_point(sig_sync.syncobj, sig_sync.chain, sig_sync.fence, sig_sync.point);
            sig_sync.chain = nullptr;  // owned by the syncobj now
        } else {
            drm::drm_syncobj_replace_fence(sig_sync.syncobj, sig_sync.fence);
        }
    }
}

int panthor_submit_ctx_add_sync_deps_to_job(panthor_submit_ctx* ctx, u32 job_idx) {
    const drm_panthor_sync_op* sync_ops = ctx->jobs[job_idx].syncops;
    drm::drm_sched_job* job = ctx->jobs[job_idx].job;
    const u32 sync_op_count = ctx->jobs[job_idx].syncop_count;

    for (u32 i = 0; i < sync_op_count; i++) {
        if (!sync_op_is_wait(&sync_ops[i]))
            continue;
        int ret = panthor_check_sync_op(&sync_ops[i]);
        if (ret)
            return ret;

        dma_fence* fence = nullptr;
        panthor_sync_signal* sig_sync =
            panthor_submit_ctx_search_sync_signal(ctx, sync_ops[i].handle, sync_ops[i].timeline_value);
        if (sig_sync) {
            if (WARN_ON(!sig_sync->fence))
                return -EINVAL;
            fence = dma_fence_get(sig_sync->fence);
        } else {
            ret = drm::drm_syncobj_find_fence(ctx->file, sync_ops[i].handle, sync_ops[i].timeline_value, 0, &fence);
            if (ret)
                return ret;
        }

        // Consumes the reference, also on failure.
        ret = drm::drm_sched_job_add_dependency(job, fence);
        if (ret)
            return ret;
    }
    return 0;
}

int panthor_submit_ctx_collect_jobs_signal_ops(panthor_submit_ctx* ctx) {
    for (u32 i = 0; i < ctx->job_count; i++) {
        const int ret = panthor_submit_ctx_collect_job_signal_ops(ctx, i);
        if (ret)
            return ret;
    }
    return 0;
}

// Must run with the resvs prepared: one of them (the VM's) serialises arm and push on the
// entities of the VM, which keeps the fence seqnos in order.
int panthor_submit_ctx_add_deps_and_arm_jobs(panthor_submit_ctx* ctx) {
    for (u32 i = 0; i < ctx->job_count; i++) {
        int ret = panthor_submit_ctx_add_sync_deps_to_job(ctx, i);
        if (ret)
            return ret;
        drm::drm_sched_job_arm(ctx->jobs[i].job);
        ret = panthor_submit_ctx_update_job_sync_signal_fences(ctx, i);
        if (ret)
            return ret;
    }
    return 0;
}

void panthor_submit_ctx_push_jobs(panthor_submit_ctx* ctx, void (*upd_resvs)(drm::drm_exec*, drm::drm_sched_job*)) {
    for (u32 i = 0; i < ctx->job_count; i++) {
        upd_resvs(&ctx->exec, ctx->jobs[i].job);
        drm::drm_sched_entity_push_job(ctx->jobs[i].job);
        ctx->jobs[i].job = nullptr;
    }
    panthor_submit_ctx_push_fences(ctx);
}

int panthor_submit_ctx_init(panthor_submit_ctx* ctx, drm_file* file, u32 job_count) {
    ctx->jobs = static_cast<panthor_job_ctx*>(kcalloc(job_count, sizeof(*ctx->jobs), GFP_KERNEL));
    if (!ctx->jobs)
        return -ENOMEM;
    ctx->file = file;
    ctx->job_count = job_count;
    drm::drm_exec_init(&ctx->exec, drm::DRM_EXEC_INTERRUPTIBLE_WAIT | drm::DRM_EXEC_IGNORE_DUPLICATES, 0);
    return 0;
}

void panthor_submit_ctx_cleanup(panthor_submit_ctx* ctx, void (*job_put)(drm::drm_sched_job*)) {
    drm::drm_exec_fini(&ctx->exec);
    ctx->signals.clear_and_dispose(panthor_sync_signal_free);
    for (u32 i = 0; i < ctx->job_count; i++) {
        if (ctx->jobs[i].job)
            job_put(ctx->jobs[i].job);
        kfree(ctx->jobs[i].syncops);
    }
    kfree(ctx->jobs);
    ctx->jobs = nullptr;
}

// ---------------------------------------------------------------------------------------------
// Ioctls.

constexpr u32 PANTHOR_TIMESTAMP_FLAGS = 0xff;
constexpr u32 PANTHOR_TIMESTAMP_DEFAULT_FLAGS =
    DRM_PANTHOR_TIMESTAMP_GPU | DRM_PANTHOR_TIMESTAMP_GPU_OFFSET | DRM_PANTHOR_TIMESTAMP_FREQ;

// `arg` holds the caller's input (flags); every output field is rewritten, 0 unless requested.
int panthor_query_timestamp_info(panthor_device* ptdev, drm_panthor_timestamp_info* arg) {
    // A pre-1.8 caller (or one asking for nothing) gets the pre-1.8 answer.
    const u32 flags = arg->flags ? arg->flags : PANTHOR_TIMESTAMP_DEFAULT_FLAGS;
    const u32 cpu_type = flags & DRM_PANTHOR_TIMESTAMP_CPU_TYPE_MASK;

    if (flags & ~PANTHOR_TIMESTAMP_FLAGS)
        return -EINVAL;
    if (cpu_type != DRM_PANTHOR_TIMESTAMP_CPU_NONE && cpu_type != DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC &&
        cpu_type != DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC_RAW)
        return -EINVAL;

    const int ret = panthor_device_resume_and_get(ptdev);
    if (ret)
        return ret;

    // The flags are the caller's input and go back as given.
    const u32 user_flags = arg->flags;
    std::memset(arg, 0, sizeof(*arg));
    arg->flags = user_flags;

    // Samples of several sources are only comparable when nothing runs between them, and a
    // duration means nothing if it includes a preemption.
    const int sources = !!(flags & DRM_PANTHOR_TIMESTAMP_GPU) + (cpu_type != DRM_PANTHOR_TIMESTAMP_CPU_NONE) +
                        !!(flags & DRM_PANTHOR_TIMESTAMP_GPU_CYCLE_COUNT);
    const bool atomic = (flags & DRM_PANTHOR_TIMESTAMP_DURATION) || sources >= 2;
    if (atomic)
        kshim::preempt_disable();
    const ktime_t start = kshim::ktime_get_raw();
    if (flags & DRM_PANTHOR_TIMESTAMP_GPU)
        arg->current_timestamp = panthor_gpu_read_timestamp(ptdev);
    if (flags & DRM_PANTHOR_TIMESTAMP_GPU_CYCLE_COUNT)
        arg->cycle_count = panthor_gpu_read_cycle_count(ptdev);
    if (cpu_type != DRM_PANTHOR_TIMESTAMP_CPU_NONE) {
        // The shim has one clock: no NTP slewing, so MONOTONIC_RAW reads as MONOTONIC.
        const ktime_t cpu_ns =
            cpu_type == DRM_PANTHOR_TIMESTAMP_CPU_MONOTONIC_RAW ? kshim::ktime_get_raw() : kshim::ktime_get();
        arg->cpu_timestamp_sec = static_cast<u64>(cpu_ns / NSEC_PER_SEC);
        arg->cpu_timestamp_nsec = static_cast<u64>(cpu_ns % NSEC_PER_SEC);
    }
    if (flags & DRM_PANTHOR_TIMESTAMP_DURATION)
        arg->duration_nsec = static_cast<u32>(kshim::ktime_get_raw() - start);
    if (atomic)
        kshim::preempt_enable();

    if (flags & DRM_PANTHOR_TIMESTAMP_GPU_OFFSET)
        arg->timestamp_offset = panthor_gpu_read_timestamp_offset(ptdev);
    if (flags & DRM_PANTHOR_TIMESTAMP_FREQ)
        arg->timestamp_frequency = kshim::arch_timer_get_cntfrq();
    pm_runtime_put_autosuspend(ptdev->dev);
    return 0;
}

// Also the check of GROUP_CREATE's priority.
int group_priority_permit(drm_file* file, u8 priority) {
    if (priority > PANTHOR_GROUP_PRIORITY_REALTIME)
        return -EINVAL;
    if (priority <= PANTHOR_GROUP_PRIORITY_MEDIUM)
        return 0;
    // The caller's capability at the time of the call, or the file being the DRM master.
    if (capable(CAP_SYS_NICE) || drm::drm_is_current_master(file))
        return 0;
    return -EACCES;
}

void panthor_query_group_priorities_info(drm_file* file, drm_panthor_group_priorities_info* arg) {
    std::memset(arg, 0, sizeof(*arg));
    for (int prio = PANTHOR_GROUP_PRIORITY_REALTIME; prio >= 0; prio--)
        if (!group_priority_permit(file, static_cast<u8>(prio)))
            arg->allowed_mask |= static_cast<u8>(1u << prio);
}

int panthor_ioctl_dev_query(drm::drm_device* ddev, void* data, drm_file* file) {
    panthor_device* ptdev = to_panthor_device(ddev);
    auto* args = static_cast<drm_panthor_dev_query*>(data);
    drm_panthor_timestamp_info timestamp_info{};
    drm_panthor_group_priorities_info priorities_info{};

    if (!args->pointer) {
        switch (args->type) {
        case DRM_PANTHOR_DEV_QUERY_GPU_INFO: args->size = sizeof(ptdev->gpu_info); return 0;
        case DRM_PANTHOR_DEV_QUERY_CSIF_INFO: args->size = sizeof(ptdev->csif_info); return 0;
        case DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO: args->size = sizeof(timestamp_info); return 0;
        case DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO: args->size = sizeof(priorities_info); return 0;
        case DRM_PANTHOR_DEV_QUERY_MMU_INFO: args->size = sizeof(ptdev->mmu_info); return 0;
        default: return -EINVAL;
        }
    }

    switch (args->type) {
    case DRM_PANTHOR_DEV_QUERY_GPU_INFO: return panthor_uobj_set(args->pointer, args->size, ptdev->gpu_info);
    case DRM_PANTHOR_DEV_QUERY_CSIF_INFO: return panthor_uobj_set(args->pointer, args->size, ptdev->csif_info);
    case DRM_PANTHOR_DEV_QUERY_TIMESTAMP_INFO: {
        // 1.8 reads the input flags: an older, shorter struct is zero-extended (flags 0); a
        // longer one must have a zero tail.
        int ret = copy_struct_from_user(&timestamp_info, sizeof(timestamp_info), args->pointer, args->size);
        if (ret)
            return ret;
        ret = panthor_query_timestamp_info(ptdev, &timestamp_info);
        if (ret)
            return ret;
        return panthor_uobj_set(args->pointer, args->size, timestamp_info);
    }
    case DRM_PANTHOR_DEV_QUERY_GROUP_PRIORITIES_INFO:
        panthor_query_group_priorities_info(file, &priorities_info);
        return panthor_uobj_set(args->pointer, args->size, priorities_info);
    case DRM_PANTHOR_DEV_QUERY_MMU_INFO: return panthor_uobj_set(args->pointer, args->size, ptdev->mmu_info);
    default: return -EINVAL;
    }
}

constexpr u32 PANTHOR_VM_CREATE_FLAGS = 0;

int panthor_ioctl_vm_create(drm::drm_device* ddev, void* data, drm_file* file) {
    panthor_device* ptdev = to_panthor_device(ddev);
    auto* args = static_cast<drm_panthor_vm_create*>(data);

    if (!drm::drm_dev_enter(ddev))
        return -ENODEV;
    // panthor_vm_pool_create_vm checks this too (upstream's panthor_vm_create_check_args).
    if (args->flags & ~PANTHOR_VM_CREATE_FLAGS)
        return -EINVAL;

    const int ret = panthor_vm_pool_create_vm(ptdev, to_pfile(file)->vms, args);
    if (ret < 0)
        return ret;
    args->id = static_cast<u32>(ret);
    return 0;
}

int panthor_ioctl_vm_destroy(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_vm_destroy*>(data);
    if (args->pad)
        return -EINVAL;
    return panthor_vm_pool_destroy_vm(to_pfile(file)->vms, args->id);
}

constexpr u32 PANTHOR_BO_FLAGS = DRM_PANTHOR_BO_NO_MMAP | DRM_PANTHOR_BO_WB_MMAP;

int panthor_ioctl_bo_create(drm::drm_device* ddev, void* data, drm_file* file) {
    panthor_device* ptdev = to_panthor_device(ddev);
    auto* args = static_cast<drm_panthor_bo_create*>(data);
    panthor_vm* vm = nullptr;

    if (!drm::drm_dev_enter(ddev))
        return -ENODEV;
    if (!args->size || args->pad || (args->flags & ~PANTHOR_BO_FLAGS))
        return -EINVAL;
    // A BO without CPU mappings has no caching to choose.
    if ((args->flags & DRM_PANTHOR_BO_NO_MMAP) && (args->flags & DRM_PANTHOR_BO_WB_MMAP))
        return -EINVAL;

    if (args->exclusive_vm_id) {
        vm = panthor_vm_pool_get_vm(to_pfile(file)->vms, args->exclusive_vm_id);
        if (!vm)
            return -EINVAL;
    }

    // Through a local: the uapi's __u64 need not be the kernel's u64 type.
    u64 size = args->size;
    const int ret = panthor_gem_create_with_handle(file, ptdev, vm, &size, args->flags, &args->handle);
    if (!ret)
        args->size = size;
    if (vm)
        panthor_vm_put(vm);
    return ret;
}

int panthor_ioctl_bo_mmap_offset(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_bo_mmap_offset*>(data);
    if (args->pad)
        return -EINVAL;

    drm::drm_gem_object* obj = file->gem.lookup(args->handle);
    if (!obj)
        return -ENOENT;

    int ret;
    if (to_panthor_bo(obj)->flags & DRM_PANTHOR_BO_NO_MMAP) {
        ret = -EPERM;
    } else {
        ret = drm::drm_gem_create_mmap_offset(obj);
        if (!ret)
            args->offset = drm::drm_vma_node_offset_addr(&obj->vma_node);
    }
    drm::drm_gem_object_put(obj);
    return ret;
}

int panthor_ioctl_vm_bind_async(drm::drm_device*, drm_panthor_vm_bind* args, drm_file* file) {
    drm_panthor_vm_bind_op* jobs_args = nullptr;
    panthor_submit_ctx ctx;
    int ret;

    panthor_vm* vm = panthor_vm_pool_get_vm(to_pfile(file)->vms, args->vm_id);
    if (!vm)
        return -EINVAL;

    ret = panthor_uobj_get_array(&jobs_args, &args->ops);
    if (ret)
        goto out_put_vm;

    ret = panthor_submit_ctx_init(&ctx, file, args->ops.count);
    if (ret)
        goto out_free_jobs_args;

    for (u32 i = 0; i < args->ops.count; i++) {
        drm_panthor_vm_bind_op* op = &jobs_args[i];
        drm::drm_sched_job* job = panthor_vm_bind_job_create(file, vm, op);
        if (IS_ERR(job)) {
            ret = static_cast<int>(PTR_ERR(job));
            goto out_cleanup_submit_ctx;
        }
        ret = panthor_submit_ctx_add_job(&ctx, i, job, &op->syncs);
        if (ret)
            goto out_cleanup_submit_ctx;
    }

    ret = panthor_submit_ctx_collect_jobs_signal_ops(&ctx);
    if (ret)
        goto out_cleanup_submit_ctx;

    drm_exec_until_all_locked(&ctx.exec) {
        for (u32 i = 0; i < ctx.job_count; i++) {
            ret = panthor_vm_bind_job_prepare_resvs(&ctx.exec, ctx.jobs[i].job);
            drm_exec_retry_on_contention(&ctx.exec);
            if (ret)
                goto out_cleanup_submit_ctx;
        }
    }

    ret = panthor_submit_ctx_add_deps_and_arm_jobs(&ctx);
    if (ret)
        goto out_cleanup_submit_ctx;

    // Nothing can fail from here on.
    panthor_submit_ctx_push_jobs(&ctx, panthor_vm_bind_job_update_resvs);

out_cleanup_submit_ctx:
    panthor_submit_ctx_cleanup(&ctx, panthor_vm_bind_job_put);
out_free_jobs_args:
    kfree(jobs_args);
out_put_vm:
    panthor_vm_put(vm);
    return ret;
}

int panthor_ioctl_vm_bind_sync(drm::drm_device*, drm_panthor_vm_bind* args, drm_file* file) {
    drm_panthor_vm_bind_op* jobs_args = nullptr;

    panthor_vm* vm = panthor_vm_pool_get_vm(to_pfile(file)->vms, args->vm_id);
    if (!vm)
        return -EINVAL;

    int ret = panthor_uobj_get_array(&jobs_args, &args->ops);
    if (!ret) {
        for (u32 i = 0; i < args->ops.count; i++) {
            // A synchronous op has nothing to wait for or signal (panthor_vm_bind_exec_sync_op
            // refuses it too).
            ret = jobs_args[i].syncs.count ? -EINVAL : panthor_vm_bind_exec_sync_op(file, vm, &jobs_args[i]);
            if (ret) {
                // Tells userspace which op failed: the ones before it took effect.
                args->ops.count = i;
                break;
            }
        }
        kfree(jobs_args);
    }

    panthor_vm_put(vm);
    return ret;
}

int panthor_ioctl_vm_bind(drm::drm_device* ddev, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_vm_bind*>(data);
    if (!drm::drm_dev_enter(ddev))
        return -ENODEV;
    // Unknown flag bits are ignored, as upstream (PANTHOR_VM_BIND_FLAGS is never checked).
    if (args->flags & DRM_PANTHOR_VM_BIND_ASYNC)
        return panthor_ioctl_vm_bind_async(ddev, args, file);
    return panthor_ioctl_vm_bind_sync(ddev, args, file);
}

int panthor_ioctl_vm_get_state(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_vm_get_state*>(data);
    panthor_vm* vm = panthor_vm_pool_get_vm(to_pfile(file)->vms, args->vm_id);
    if (!vm)
        return -EINVAL;
    args->state = panthor_vm_is_unusable(vm) ? DRM_PANTHOR_VM_STATE_UNUSABLE : DRM_PANTHOR_VM_STATE_USABLE;
    panthor_vm_put(vm);
    return 0;
}

int panthor_ioctl_bo_set_label(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_bo_set_label*>(data);
    const char* label = nullptr;
    int ret = 0;

    if (args->pad)
        return -EINVAL;

    drm::drm_gem_object* obj = file->gem.lookup(args->handle);
    if (!obj)
        return -ENOENT;

    if (args->label) {
        char* s = strndup_user(args->label, PANTHOR_BO_LABEL_MAXLEN);
        if (IS_ERR(s)) {
            ret = static_cast<int>(PTR_ERR(s));
            if (ret == -EINVAL)
                ret = -E2BIG;
            goto err_put_obj;
        }
        label = s;
    }

    // A null label clears it; an empty string is a label (future uses may tell them apart).
    panthor_gem_bo_set_label(obj, label);

err_put_obj:
    drm::drm_gem_object_put(obj);
    return ret;
}

int panthor_ioctl_bo_sync(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_bo_sync*>(data);
    drm_panthor_bo_sync_op* ops = nullptr;

    int ret = panthor_uobj_get_array(&ops, &args->ops);
    if (ret)
        return ret;

    // In order; an op that fails stops the batch, the ones before it stay done.
    for (u32 i = 0; i < args->ops.count; i++) {
        drm::drm_gem_object* obj = file->gem.lookup(ops[i].handle);
        if (!obj) {
            ret = -ENOENT;
            break;
        }
        ret = panthor_gem_sync(obj, ops[i].type, ops[i].offset, ops[i].size);
        drm::drm_gem_object_put(obj);
        if (ret)
            break;
    }
    kfree(ops);
    return ret;
}

int panthor_ioctl_bo_query_info(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_bo_query_info*>(data);

    drm::drm_gem_object* obj = file->gem.lookup(args->handle);
    if (!obj)
        return -ENOENT;
    panthor_gem_object* bo = to_panthor_bo(obj);
    args->pad = 0;
    args->create_flags = bo->flags;
    // Our own export imported back is the same BO (panthor_gem_prime_import): not flagged.
    args->extra_flags = drm::drm_gem_is_imported(obj) ? DRM_PANTHOR_BO_IS_IMPORTED : 0;
    drm::drm_gem_object_put(obj);
    return 0;
}

int panthor_ioctl_group_create(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_group_create*>(data);
    drm_panthor_queue_create* queue_args = nullptr;

    if (!args->queues.count || args->queues.count > MAX_CS_PER_CSG)
        return -EINVAL;

    int ret = panthor_uobj_get_array(&queue_args, &args->queues);
    if (ret)
        return ret;

    ret = group_priority_permit(file, args->priority);
    if (!ret) {
        ret = panthor_group_create(to_pfile(file), args, queue_args, to_pfile(file)->client_id);
        if (ret >= 0) {
            args->group_handle = static_cast<u32>(ret);
            ret = 0;
        }
    }
    kfree(queue_args);
    return ret;
}

int panthor_ioctl_group_destroy(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_group_destroy*>(data);
    if (args->pad)
        return -EINVAL;
    return panthor_group_destroy(to_pfile(file), args->group_handle);
}

int panthor_ioctl_group_get_state(drm::drm_device*, void* data, drm_file* file) {
    return panthor_group_get_state(to_pfile(file), static_cast<drm_panthor_group_get_state*>(data));
}

int panthor_ioctl_group_submit(drm::drm_device* ddev, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_group_submit*>(data);
    panthor_file* pfile = to_pfile(file);
    drm_panthor_queue_submit* jobs_args = nullptr;
    panthor_submit_ctx ctx;
    int cookie;
    int ret;

    if (args->pad)
        return -EINVAL;
    if (!drm::drm_dev_enter(ddev, &cookie))
        return -ENODEV;

    ret = panthor_uobj_get_array(&jobs_args, &args->queue_submits);
    if (ret)
        goto out_dev_exit;

    ret = panthor_submit_ctx_init(&ctx, file, args->queue_submits.count);
    if (ret)
        goto out_free_jobs_args;

    for (u32 i = 0; i < args->queue_submits.count; i++) {
        const drm_panthor_queue_submit* qsubmit = &jobs_args[i];
        drm::drm_sched_job* job =
            panthor_job_create(pfile, static_cast<u16>(args->group_handle), qsubmit, pfile->client_id);
        if (IS_ERR(job)) {
            ret = static_cast<int>(PTR_ERR(job));
            goto out_cleanup_submit_ctx;
        }
        ret = panthor_submit_ctx_add_job(&ctx, i, job, &qsubmit->syncs);
        if (ret)
            goto out_cleanup_submit_ctx;
    }

    ret = panthor_submit_ctx_collect_jobs_signal_ops(&ctx);
    if (ret)
        goto out_cleanup_submit_ctx;

    // The VM's resv (which covers its private BOs) and the external BOs mapped in it: the
    // kernel-mode queue may touch any of them. All jobs target one group, hence one VM, and each
    // adds its fence to every resv: reserve one slot per job in one go (reserving 1 per job
    // would only guarantee a single free slot).
    if (ctx.job_count > 0) {
        panthor_vm* vm = panthor_job_vm(ctx.jobs[0].job);
        drm_exec_until_all_locked(&ctx.exec) {
            ret = panthor_vm_prepare_mapped_bos_resvs(&ctx.exec, vm, ctx.job_count);
            drm_exec_retry_on_contention(&ctx.exec);
            if (ret)
                goto out_cleanup_submit_ctx;
        }
    }

    ret = panthor_submit_ctx_add_deps_and_arm_jobs(&ctx);
    if (ret)
        goto out_cleanup_submit_ctx;

    // Nothing can fail from here on.
    panthor_submit_ctx_push_jobs(&ctx, panthor_job_update_resvs);

out_cleanup_submit_ctx:
    panthor_submit_ctx_cleanup(&ctx, panthor_job_put);
out_free_jobs_args:
    kfree(jobs_args);
out_dev_exit:
    drm::drm_dev_exit(cookie);
    return ret;
}

int panthor_ioctl_tiler_heap_create(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_tiler_heap_create*>(data);

    panthor_vm* vm = panthor_vm_pool_get_vm(to_pfile(file)->vms, args->vm_id);
    if (!vm)
        return -EINVAL;

    int ret;
    panthor_heap_pool* pool = panthor_vm_get_heap_pool(vm, true);
    if (IS_ERR(pool)) {
        ret = static_cast<int>(PTR_ERR(pool));
        goto out_put_vm;
    }

    u64 ctx_va, first_chunk_va;  // the uapi's __u64 is another type than u64 here
    ret = panthor_heap_create(pool, args->initial_chunk_count, args->chunk_size, args->max_chunks,
                              args->target_in_flight, &ctx_va, &first_chunk_va);
    if (ret >= 0) {
        args->tiler_heap_ctx_gpu_va = ctx_va;
        args->first_heap_chunk_gpu_va = first_chunk_va;
        // Heap ids are per VM (pool): the VM id makes the handle unique in the file.
        args->handle = (args->vm_id << 16) | static_cast<u32>(ret);
        ret = 0;
    }
    panthor_heap_pool_put(pool);

out_put_vm:
    panthor_vm_put(vm);
    return ret;
}

int panthor_ioctl_tiler_heap_destroy(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_tiler_heap_destroy*>(data);

    if (args->pad)
        return -EINVAL;

    panthor_vm* vm = panthor_vm_pool_get_vm(to_pfile(file)->vms, args->handle >> 16);
    if (!vm)
        return -EINVAL;

    int ret;
    panthor_heap_pool* pool = panthor_vm_get_heap_pool(vm, false);
    if (IS_ERR(pool)) {
        ret = static_cast<int>(PTR_ERR(pool));
    } else {
        ret = panthor_heap_destroy(pool, args->handle & 0xFFFF);
        panthor_heap_pool_put(pool);
    }
    panthor_vm_put(vm);
    return ret;
}

int panthor_ioctl_set_user_mmio_offset(drm::drm_device*, void* data, drm_file* file) {
    auto* args = static_cast<drm_panthor_set_user_mmio_offset*>(data);
    if (args->offset != DRM_PANTHOR_USER_MMIO_OFFSET_32BIT && args->offset != DRM_PANTHOR_USER_MMIO_OFFSET_64BIT)
        return -EINVAL;
    // Read by panthor_mmap without a lock (WRITE_ONCE/READ_ONCE upstream).
    std::atomic_ref<u64>(to_pfile(file)->user_mmio_offset).store(args->offset, std::memory_order_relaxed);
    return 0;
}

int panthor_open(drm::drm_device* ddev, drm_file* file) {
    panthor_device* ptdev = to_panthor_device(ddev);

    auto* pfile = knew<panthor_file>(GFP_KERNEL);
    if (!pfile)
        return -ENOMEM;
    pfile->ptdev = ptdev;
    // A 64-bit opener (the only kind here): the MMIO offsets sit above the 32-bit mmap2 range.
    pfile->user_mmio_offset = DRM_PANTHOR_USER_MMIO_OFFSET;

    int ret = panthor_vm_pool_create(pfile);
    if (ret) {
        kdelete(pfile);
        return ret;
    }
    ret = panthor_group_pool_create(pfile);
    if (ret) {
        panthor_vm_pool_destroy(pfile);
        kdelete(pfile);
        return ret;
    }
    pfile->client_id = file->client_id;

    file->driver_priv = pfile;
    return 0;
}

void panthor_postclose(drm::drm_device*, drm_file* file) {
    panthor_file* pfile = to_pfile(file);
    // Groups first: they hold VM references.
    panthor_group_pool_destroy(pfile);
    panthor_vm_pool_destroy(pfile);
    panthor_file_sparse_release(pfile);
    kdelete(pfile);
    file->driver_priv = nullptr;
}

// ---------------------------------------------------------------------------------------------
// mmap.

// The fault handler of the USER_FLUSH_ID page: the register while the GPU is powered, the dummy
// page (holding 1) otherwise. Upstream installs the PFN at fault time and zaps the mapping on PM
// transitions under mmio_lock; reading through this op on every access is the same thing. An
// unplugged device reads the dummy page too (upstream: SIGBUS).
u32 panthor_mmio_vm_read32(VmArea* vma, u64 offset) {
    auto* ptdev = static_cast<panthor_device*>(vma->vm_private_data);
    const u64 mmio_offset = vma->vm_pgoff << PAGE_SHIFT;

    MutexGuard g(ptdev->pm.mmio_lock);
    const bool active = drm::drm_dev_enter(&ptdev->base) && ptdev->pm.state.load() == PANTHOR_DEVICE_PM_STATE_ACTIVE;
    switch (mmio_offset) {
    case DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET:
        if (active)
            return gpu_read(ptdev, CSF_GPU_LATEST_FLUSH_ID + static_cast<u32>(offset));
        return static_cast<const u32*>(page_address(ptdev->pm.dummy_latest_flush))[offset / sizeof(u32)];
    default:
        WARN_ON(true);  // panthor_device_mmap_io let nothing else through
        return 0;
    }
}

const drm::VmOperations panthor_mmio_vm_ops = {
    .open = nullptr,
    .close = nullptr,
    .io_read32 = panthor_mmio_vm_read32,
};

// panthor_device_mmap_io: `vma->vm_pgoff` already rebased on DRM_PANTHOR_USER_MMIO_OFFSET.
int panthor_device_mmap_io(panthor_device* ptdev, VmArea* vma) {
    const u64 offset = vma->vm_pgoff << PAGE_SHIFT;

    if (!(vma->vm_flags & drm::VM_SHARED))
        return -EINVAL;

    switch (offset) {
    case DRM_PANTHOR_USER_FLUSH_ID_MMIO_OFFSET:
        if (vma->length != PAGE_SIZE || (vma->vm_flags & (drm::VM_WRITE | drm::VM_EXEC)))
            return -EINVAL;
        // Read-only for good: mprotect must not make it writable.
        vma->vm_flags &= ~drm::VM_MAYWRITE;
        break;
    default: return -EINVAL;
    }

    vma->vm_private_data = ptdev;
    vma->vm_ops = &panthor_mmio_vm_ops;
    vma->vm_flags |= drm::VM_IO | drm::VM_DONTEXPAND | drm::VM_DONTDUMP | drm::VM_PFNMAP;
    return 0;
}

// drm_gem_shmem_object_mmap behind panthor_gem_mmap's check: a NO_MMAP BO is never CPU-mapped.
int panthor_gem_mmap(panthor_device* ptdev, VmArea* vma) {
    drm::drm_gem_object* obj =
        drm::drm_gem_object_lookup_at_offset(&ptdev->vma_offset_manager, vma->vm_pgoff << PAGE_SHIFT, vma->length);
    if (obj) {
        const bool no_mmap = to_panthor_bo(obj)->flags & DRM_PANTHOR_BO_NO_MMAP;
        drm::drm_gem_object_put(obj);
        if (no_mmap)
            return -EINVAL;
    }
    return drm::drm_gem_mmap(vma);
}

int panthor_mmap(drm_file* file, VmArea* vma) {
    panthor_file* pfile = to_pfile(file);
    panthor_device* ptdev = pfile->ptdev;
    u64 offset = vma->vm_pgoff << PAGE_SHIFT;

    if (!drm::drm_dev_enter(&ptdev->base))
        return -ENODEV;

    // One read: the check and the rebasing must see the same base.
    const u64 user_mmio_offset = std::atomic_ref<u64>(pfile->user_mmio_offset).load(std::memory_order_relaxed);
    if (offset >= user_mmio_offset) {
        offset -= user_mmio_offset;
        offset += DRM_PANTHOR_USER_MMIO_OFFSET;
        vma->vm_pgoff = offset >> PAGE_SHIFT;
        return panthor_device_mmap_io(ptdev, vma);
    }
    return panthor_gem_mmap(ptdev, vma);
}

// ---------------------------------------------------------------------------------------------
// fdinfo.

void panthor_gpu_show_fdinfo(panthor_device* ptdev, panthor_file* pfile, drm::drm_printer* p) {
    if (ptdev->profile_mask & PANTHOR_DEVICE_PROFILING_ALL)
        panthor_fdinfo_gather_group_samples(pfile);

    panthor_gpu_usage stats;
    {
        kshim::SpinGuard g(pfile->stats_lock);
        stats = pfile->stats;
    }
    if (ptdev->profile_mask & PANTHOR_DEVICE_PROFILING_TIMESTAMP) {
        // Timestamp ticks to ns, rounded up, at the system counter's rate.
        const u64 freq = kshim::arch_timer_get_cntfrq();
        const u64 ns = freq ? (static_cast<unsigned __int128>(stats.time) * kshim::NSEC_PER_SEC + freq - 1) / freq : 0;
        p->printf("drm-engine-panthor:\t%llu ns\n", static_cast<unsigned long long>(ns));
    }
    if (ptdev->profile_mask & PANTHOR_DEVICE_PROFILING_CYCLES)
        p->printf("drm-cycles-panthor:\t%llu\n", static_cast<unsigned long long>(stats.cycles));
    p->printf("drm-maxfreq-panthor:\t%lu Hz\n", ptdev->fast_rate);
    p->printf("drm-curfreq-panthor:\t%lu Hz\n", ptdev->current_frequency);
}

// The kernel BOs the file's groups and heaps hold, which no GEM handle shows.
void panthor_show_internal_memory_stats(drm::drm_printer* p, drm_file* file) {
    panthor_file* pfile = to_pfile(file);
    panthor_memory_stats stats;
    panthor_fdinfo_gather_group_mem_info(pfile, &stats);
    panthor_vm_heaps_sizes(pfile, &stats);
    drm::drm_fdinfo_print_size(p, "panthor", "resident", "memory", stats.resident);
    drm::drm_fdinfo_print_size(p, "panthor", "active", "memory", stats.active);
}

void panthor_show_fdinfo(drm::drm_printer* p, drm_file* file) {
    panthor_device* ptdev = to_panthor_device(file->dev);
    panthor_gpu_show_fdinfo(ptdev, to_pfile(file), p);
    panthor_show_internal_memory_stats(p, file);
    drm::drm_show_memory_stats(p, file);
}

using drm::DRM_RENDER_ALLOW;
using namespace drm::uapi;

#define PANTHOR_IOCTL(n, func) DRM_IOCTL_DEF_DRV(PANTHOR_##n, panthor_ioctl_##func, DRM_RENDER_ALLOW)
const drm::IoctlDesc panthor_drm_driver_ioctls[] = {
    PANTHOR_IOCTL(DEV_QUERY, dev_query),
    PANTHOR_IOCTL(VM_CREATE, vm_create),
    PANTHOR_IOCTL(VM_DESTROY, vm_destroy),
    PANTHOR_IOCTL(VM_BIND, vm_bind),
    PANTHOR_IOCTL(VM_GET_STATE, vm_get_state),
    PANTHOR_IOCTL(BO_CREATE, bo_create),
    PANTHOR_IOCTL(BO_MMAP_OFFSET, bo_mmap_offset),
    PANTHOR_IOCTL(GROUP_CREATE, group_create),
    PANTHOR_IOCTL(GROUP_DESTROY, group_destroy),
    PANTHOR_IOCTL(GROUP_SUBMIT, group_submit),
    PANTHOR_IOCTL(GROUP_GET_STATE, group_get_state),
    PANTHOR_IOCTL(TILER_HEAP_CREATE, tiler_heap_create),
    PANTHOR_IOCTL(TILER_HEAP_DESTROY, tiler_heap_destroy),
    PANTHOR_IOCTL(BO_SET_LABEL, bo_set_label),
    PANTHOR_IOCTL(SET_USER_MMIO_OFFSET, set_user_mmio_offset),
    PANTHOR_IOCTL(BO_SYNC, bo_sync),
    PANTHOR_IOCTL(BO_QUERY_INFO, bo_query_info),
};
#undef PANTHOR_IOCTL

// Module init/exit is refcounted; the callers (tests, programs) serialise it as module loading
// does, so a plain counter suffices.
int panthor_module_refcount = 0;

}  // namespace

// Driver versions: 1.0 initial; 1.1 TIMESTAMP_INFO query; 1.2 GROUP_PRIORITIES_INFO query and
// the REALTIME priority; 1.3 GROUP_STATE_INNOCENT; 1.4 BO_SET_LABEL; 1.5 SET_USER_MMIO_OFFSET;
// 1.6 FW timestamp propagation (GLB COUNTER_EN); 1.7 BO WB_MMAP, BO_SYNC, BO_QUERY_INFO,
// gpu_info.selected_coherency; 1.8 TIMESTAMP_INFO flags and its cycle count, CPU time, duration.
const drm::DriverDesc panthor_drm_driver = {
    .name = "panthor",
    .desc = "Panthor DRM driver",
    .major = PANTHOR_DRIVER_MAJOR,
    .minor = PANTHOR_DRIVER_MINOR,
    .patchlevel = 0,
    .driver_features = drm::DRIVER_RENDER | drm::DRIVER_GEM | drm::DRIVER_SYNCOBJ | drm::DRIVER_SYNCOBJ_TIMELINE |
                       drm::DRIVER_GEM_GPUVA,
    .ioctls = panthor_drm_driver_ioctls,
    .open = panthor_open,
    .postclose = panthor_postclose,
    .mmap = panthor_mmap,
    .show_fdinfo = panthor_show_fdinfo,
    .gem_create_object = panthor_gem_create_object,
    .gem_prime_import_sg_table = drm::drm_gem_shmem_prime_import_sg_table,
    .gem_prime_import = panthor_gem_prime_import,
};

int panthor_init() {
    if (panthor_module_refcount++ > 0)
        return 0;

    int ret = panthor_mmu_pt_cache_init();
    if (ret)
        goto err_dec;

    panthor_cleanup_wq = alloc_workqueue("panthor-cleanup", WQ_UNBOUND, 0);
    if (!panthor_cleanup_wq) {
        pr_err("panthor: Failed to allocate the workqueues");
        ret = -ENOMEM;
        goto err_mmu_pt_cache_fini;
    }
    return 0;

err_mmu_pt_cache_fini:
    panthor_mmu_pt_cache_fini();
err_dec:
    panthor_module_refcount--;
    return ret;
}

void panthor_exit() {
    if (WARN_ON(panthor_module_refcount <= 0))
        return;
    if (--panthor_module_refcount > 0)
        return;
    destroy_workqueue(panthor_cleanup_wq);
    panthor_cleanup_wq = nullptr;
    panthor_mmu_pt_cache_fini();
}

int panthor_probe(PlatformDevice* pdev) {
    // devm_drm_dev_alloc: the device lives until remove (or a failed probe) frees it.
    auto* ptdev = knew<panthor_device>(GFP_KERNEL, panthor_drm_driver);
    if (!ptdev)
        return -ENOMEM;
    ptdev->pdev = pdev;
    ptdev->dev = &pdev->dev;
    pdev->dev.pm = &panthor_pm_ops;
    platform_set_drvdata(pdev, ptdev);
    drm::drm_vma_offset_manager_init(&ptdev->vma_offset_manager, drm::DRM_FILE_PAGE_OFFSET_START,
                                     drm::DRM_FILE_PAGE_OFFSET_SIZE);
    ptdev->base.vma_offset_manager = &ptdev->vma_offset_manager;

    const int ret = panthor_device_init(ptdev);
    if (ret) {
        // What init registered as device-managed goes now, in reverse order.
        devres_release_all(&pdev->dev);
        drm::drm_vma_offset_manager_destroy(&ptdev->vma_offset_manager);
        platform_set_drvdata(pdev, nullptr);
        pdev->dev.pm = nullptr;
        kdelete(ptdev);
        return ret;
    }
    return 0;
}

void panthor_remove(PlatformDevice* pdev) {
    panthor_device* ptdev = panthor_from_pdev(pdev);
    if (WARN_ON(!ptdev))
        return;
    panthor_device_unplug(ptdev);
    devres_release_all(&pdev->dev);
    drm::drm_vma_offset_manager_destroy(&ptdev->vma_offset_manager);
    platform_set_drvdata(pdev, nullptr);
    pdev->dev.pm = nullptr;
    kdelete(ptdev);
}

const drm::PlatformDriverModule panthor_module = {
    .name = "panthor",
    .of_match = {"rockchip,rk3588-mali", "arm,mali-valhall-csf"},
    .init = panthor_init,
    .exit = panthor_exit,
    .probe = panthor_probe,
    .remove = panthor_remove,
    .drm_dev_of = [](PlatformDevice* pdev) -> drm::drm_device* {
        panthor_device* ptdev = panthor_from_pdev(pdev);
        return ptdev ? &ptdev->base : nullptr;
    },
};

}  // namespace panthor
