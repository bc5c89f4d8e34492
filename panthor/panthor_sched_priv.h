// The data structures of drivers/gpu/drm/panthor/panthor_sched.c, shared by the files our port
// splits it into:
//   panthor_sched.cpp            init, unplug, suspend/resume, reset, fdinfo, the reporting hooks
//   panthor_sched_group.cpp      groups: create/destroy/state, binding to slots, termination
//   panthor_sched_queue.cpp      queues and jobs: ring buffers, run_job, timeouts, completion
//   panthor_sched_tick.cpp       CSG slot programming, batched CSG requests, the tick
//   panthor_sched_fw_events.cpp  FW events (GLB/CSG/CS IRQs), sync updates, tiler OOM
//
// DOC: Scheduler. The firmware schedules at most csg_slot_count groups (each up to cs_slot_count
// queues) by itself; past that the kernel rotates groups on and off the CSG slots from a tick
// that runs every 10 ms while rotation is needed (more runnable groups than slots, or several
// groups of one priority on slots), and otherwise only when an event asks for it. Queues are
// kernel-mode: userspace hands over a command stream that the kernel CALLs from the queue's ring
// buffer between a cache flush and a SYNC_ADD64 on the queue's sync object, which the firmware
// reports with a CSG SYNC_UPDATE; job fences are signalled by comparing that seqno. Each queue
// has its own drm_gpu_scheduler (1:1 entity:scheduler) that handles dependencies.
//
// Lists are Boost.Intrusive lists with auto_unlink hooks: the kernel code list_del_init()s a
// group's run_node without knowing which list holds it, which is what auto_unlink's unlink() is.
#pragma once
#include <atomic>
#include <boost/intrusive/list.hpp>

#include "drm/sched/gpu_scheduler.h"
#include "hw/csf/fw_iface.h"
#include "hw/csf/regs/csf_regs.h"
#include "hw/csf/regs/job_regs.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/workqueue.h"
#include "kernel_shim/xarray.h"
#include "panthor/panthor_fw.h"
#include "panthor/panthor_gem.h"
#include "panthor/panthor_sched.h"

namespace panthor {

namespace bi = boost::intrusive;
using kshim::ERR_PTR;
using kshim::IS_ERR;
using kshim::IS_ERR_OR_NULL;
using kshim::PTR_ERR;
inline constexpr u64 U64_MAX = ~u64{0};
using ListHook = bi::list_member_hook<bi::link_mode<bi::auto_unlink>>;
template <class T, ListHook T::*Hook>
using NodeList = bi::list<T, bi::member_hook<T, ListHook, Hook>, bi::constant_time_size<false>>;

// list_del_init on an auto_unlink hook.
inline void list_del_init(ListHook& node) {
    if (node.is_linked())
        node.unlink();
}
template <class L, class T>
void list_move_tail(T& obj, ListHook& node, L& list) {
    list_del_init(node);
    list.push_back(obj);
}
template <class L, class T>
void list_move(T& obj, ListHook& node, L& list) {
    list_del_init(node);
    list.push_front(obj);
}

inline constexpr u32 JOB_TIMEOUT_MS = 5000;
inline constexpr u32 MAX_CSG_PRIO = 0xF;
inline constexpr u32 NUM_INSTRS_PER_CACHE_LINE = 64 / sizeof(u64);
inline constexpr u32 MAX_INSTRS_PER_JOB = 24;
inline constexpr u32 CSF_MAX_QUEUE_PRIO = 0xF;
inline constexpr u32 MAX_GROUPS_PER_POOL = 128;

struct panthor_group;
struct panthor_job;

enum panthor_csg_priority {
    PANTHOR_CSG_PRIORITY_LOW = 0,
    PANTHOR_CSG_PRIORITY_MEDIUM,
    PANTHOR_CSG_PRIORITY_HIGH,
    PANTHOR_CSG_PRIORITY_RT,
    PANTHOR_CSG_PRIORITY_COUNT,
};

struct panthor_csg_slot {
    panthor_group* group = nullptr;
    u8 priority = 0;  // CSG priority the FW acked (endpoint_req[31:28])
};

struct panthor_syncobj_32b {
    u32 seqno;
    u32 status;
};
struct panthor_syncobj_64b {
    u64 seqno;
    u32 status;  // non-zero on failure
    u32 pad;
};
static_assert(sizeof(panthor_syncobj_64b) == 16 && sizeof(panthor_syncobj_32b) == 8);

struct panthor_job_profiling_data {
    struct {
        u64 before, after;
    } cycles;
    struct {
        u64 before, after;
    } time;
};
static_assert(sizeof(panthor_job_profiling_data) == 32);

struct panthor_job {
    drm::drm_sched_job base;
    kshim::kref refcount;
    panthor_group* group = nullptr;
    u32 queue_idx = 0;
    struct {
        u64 start = 0;  // GPU VA of the user command stream
        u32 size = 0;
        u32 latest_flush = 0;
    } call_info;
    struct {
        u64 start = 0, end = 0;  // byte positions in the ring (monotonic)
    } ringbuf;
    ListHook node;  // in queue->fence_ctx.in_flight_jobs
    // Allocated at creation for a non-empty stream and initialised in queue_run_job; an empty
    // stream borrows the queue's last fence there.
    kshim::dma_fence* done_fence = nullptr;
    bool done_fence_initialized = false;
    struct {
        u32 mask = 0;
        u32 slot = 0;
    } profiling;
};
using panthor_job_list = NodeList<panthor_job, &panthor_job::node>;

struct panthor_queue {
    drm::drm_gpu_scheduler scheduler;
    drm::drm_sched_entity entity;
    // The entity's scheduler list: our drm_sched keeps the pointer (upstream copies the array).
    drm::drm_gpu_scheduler* sched_list[1] = {};
    char* name = nullptr;
    struct {
        kshim::delayed_work work;
        // Jiffies left while the timer is suspended; MAX_SCHEDULE_TIMEOUT while it runs.
        unsigned long remaining = 0;
        unsigned long expires = 0;  // when the armed timer fires (the kernel reads timer.expires)
    } timeout;
    u8 doorbell_id = 0xFF;
    u8 priority = 0;
    panthor_kernel_bo* ringbuf = nullptr;
    struct {
        panthor_kernel_bo* mem = nullptr;
        panthor_fw_ringbuf_input_iface* input = nullptr;
        const panthor_fw_ringbuf_output_iface* output = nullptr;
        u32 input_fw_va = 0, output_fw_va = 0;
    } iface;
    // The sync object a SYNC_WAIT-blocked queue waits on (from the CS status).
    struct {
        u64 gpu_va = 0;
        u64 ref = 0;
        bool gt = false;
        bool sync64 = false;
        // The BO holding it, mapped: made by sync_upd_work outside the scheduler lock (vmap
        // takes the BO's resv, which must not nest in the scheduler lock: run_job takes that lock
        // in the fence-signalling path). Kept until the queue waits elsewhere or goes.
        drm::drm_gem_object* obj = nullptr;
        u64 offset = 0;
        void* kmap = nullptr;
        u64 mapped_va = 0;  // the gpu_va the mapping was made for
        u64 failed_va = 0;  // a gpu_va with no BO behind it (not looked up again)
    } syncwait;
    struct {
        kshim::SpinLock lock{"panthor_queue.fence_ctx.lock"};  // in_flight_jobs, the done fences, timeout
        u64 id = 0;
        std::atomic<u64> seqno{0};
        kshim::dma_fence* last_fence = nullptr;  // under the scheduler lock (run_job)
        panthor_job_list in_flight_jobs;
    } fence_ctx;
    struct {
        panthor_kernel_bo* slots = nullptr;
        u32 slot_count = 0;
        u32 seqno = 0;
    } profiling;
};

enum panthor_group_state {
    PANTHOR_CS_GROUP_CREATED,
    PANTHOR_CS_GROUP_ACTIVE,
    PANTHOR_CS_GROUP_SUSPENDED,
    PANTHOR_CS_GROUP_TERMINATED,
    PANTHOR_CS_GROUP_UNKNOWN_STATE,
};

struct panthor_group {
    kshim::kref refcount;
    panthor_device* ptdev = nullptr;
    panthor_vm* vm = nullptr;
    u64 compute_core_mask = 0, fragment_core_mask = 0, tiler_core_mask = 0;
    u8 max_compute_cores = 0, max_fragment_cores = 0, max_tiler_cores = 0;
    u8 priority = 0;
    // The scheduler lock protects the masks and flags below, csg_id, state and the list hooks.
    u32 blocked_queues = 0;
    u32 idle_queues = 0;
    kshim::SpinLock fatal_lock{"panthor_group.fatal_lock"};
    u32 fatal_queues = 0;
    std::atomic<u32> tiler_oom{0};  // queues with a TILER_OOM to process
    u32 queue_count = 0;
    panthor_queue* queues[MAX_CS_PER_CSG] = {};
    int csg_id = -1;
    bool destroyed = false;
    bool timedout = false;
    bool innocent = false;
    panthor_kernel_bo* syncobjs = nullptr;
    struct {
        panthor_gpu_usage data;
        kshim::SpinLock lock{"panthor_group.fdinfo.lock"};  // protects data
        size_t kbo_sizes = 0;
    } fdinfo;
    struct {
        int pid = 0;
        char comm[16] = {};
    } task_info;
    panthor_group_state state = PANTHOR_CS_GROUP_CREATED;
    panthor_kernel_bo* suspend_buf = nullptr;
    panthor_kernel_bo* protm_suspend_buf = nullptr;
    kshim::work_struct sync_upd_work;
    kshim::work_struct tiler_oom_work;
    kshim::work_struct term_work;
    kshim::work_struct release_work;
    // GROUP_REGISTERED (upstream's xa mark): the group finished initialising; read under the
    // pool's xa_lock.
    std::atomic<bool> registered{false};
    ListHook run_node;   // sched->groups.{runnable,idle}[prio], reset.stopped_groups, tick ctx lists
    ListHook wait_node;  // sched->groups.waiting
};
using panthor_group_run_list = NodeList<panthor_group, &panthor_group::run_node>;
using panthor_group_wait_list = NodeList<panthor_group, &panthor_group::wait_node>;

struct panthor_scheduler {
    panthor_device* ptdev = nullptr;
    kshim::workqueue_struct* wq = nullptr;             // tick, fw events, sync updates, the drm_scheds
    kshim::workqueue_struct* heap_alloc_wq = nullptr;  // tiler OOM (allocates: not in the signalling path)
    kshim::delayed_work tick_work;
    kshim::work_struct sync_upd_work;
    // Deviation, no upstream counterpart: while a group waits on a sync object off its slot (no
    // FW watches it then), re-runs sync_upd_work every tick period so that a CPU store releasing
    // the wait is seen (docs/panthor.md, "Deviations").
    kshim::delayed_work sync_poll_work;
    kshim::work_struct fw_events_work;
    std::atomic<u32> fw_events{0};
    u64 resched_target = 0;  // jiffies; U64_MAX: no periodic tick
    u64 last_tick = 0;
    u64 tick_period = 0;
    kshim::Mutex lock{"panthor_scheduler.lock"};  // everything below but reset.*
    struct {
        panthor_group_run_list runnable[PANTHOR_CSG_PRIORITY_COUNT];
        panthor_group_run_list idle[PANTHOR_CSG_PRIORITY_COUNT];
        panthor_group_wait_list waiting;
    } groups GUARDED_BY(lock);
    panthor_csg_slot csg_slots[MAX_CSGS] GUARDED_BY(lock);
    u32 csg_slot_count = 0;
    u32 cs_slot_count = 0;
    u32 as_slot_count = 0;
    u32 used_csg_slot_count GUARDED_BY(lock) = 0;
    u32 sb_slot_count = 0;
    bool might_have_idle_groups GUARDED_BY(lock) = false;
    struct {
        bool has_ref = false;
    } pm;
    struct {
        kshim::Mutex lock{"panthor_scheduler.reset.lock"};  // protects stopped_groups
        std::atomic<bool> in_progress{false};
        panthor_group_run_list stopped_groups GUARDED_BY(lock);
    } reset;
    panthor_sched_stats stats;  // under lock
};

struct panthor_group_pool {
    kshim::XArray<panthor_group> xa{kshim::XA_FLAGS_ALLOC1};
};

inline void panthor_fw_ring_doorbell(panthor_device* ptdev, u32 doorbell_id) {
    gpu_write(ptdev, CSF_DOORBELL(doorbell_id), 1);
}

inline int ffs_index(u32 mask) {
    return mask ? __builtin_ctz(mask) : -1;
}
inline u32 genmask_low(u32 n) {
    return n >= 32 ? ~0u : (1u << n) - 1;
}

// sched_queue_work / sched_queue_delayed_work: nothing is queued while a reset is pending or in
// progress (post_reset kicks them again).
void sched_queue_work(panthor_scheduler* sched, kshim::work_struct* work);
void sched_queue_tick(panthor_scheduler* sched, unsigned long delay);

// ---- groups (panthor_sched_group.cpp) ----
panthor_group* group_get(panthor_group* group);
void group_put(panthor_group* group);
// group_queue_work(group, name): a reference travels with the work.
void group_queue_work(panthor_group* group, kshim::work_struct* work);
int group_bind_locked(panthor_group* group, u32 csg_id) REQUIRES(group->ptdev->scheduler->lock);
int group_unbind_locked(panthor_group* group) REQUIRES(group->ptdev->scheduler->lock);
bool group_is_idle(const panthor_group* group);
bool group_can_run(const panthor_group* group);
void group_schedule_locked(panthor_group* group, u32 queue_mask) REQUIRES(group->ptdev->scheduler->lock);
void panthor_group_stop(panthor_group* group);
void panthor_group_start(panthor_group* group);
void group_term_work(kshim::work_struct* work);

// ---- queues and jobs (panthor_sched_queue.cpp) ----
panthor_queue* group_create_queue(panthor_group* group, const drm_panthor_queue_create* args, u64 drm_client_id,
                                  u32 gid, u32 qid);
void group_free_queue(panthor_group* group, panthor_queue* queue);
void queue_suspend_timeout(panthor_queue* queue);
void queue_resume_timeout(panthor_queue* queue);
void queue_stop(panthor_queue* queue, panthor_job* bad_job);
void queue_start(panthor_queue* queue);
bool queue_check_job_completion(panthor_queue* queue);
// A sync object's BO mapped for the CPU (a reference and a vmap).
struct panthor_syncwait_map {
    drm::drm_gem_object* obj = nullptr;
    void* kmap = nullptr;
    u64 offset = 0;
};
// Looks the VA up in the VM and maps its BO; never under the scheduler lock. 0 or -errno.
int panthor_syncwait_map_create(panthor_vm* vm, u64 gpu_va, panthor_syncwait_map* out);
void panthor_syncwait_map_release(panthor_syncwait_map* map);
// Swaps the queue's mapping with *map (scheduler lock held, or the queue is going away).
void panthor_queue_swap_syncwait_map(panthor_queue* queue, u64 gpu_va, panthor_syncwait_map* map);
void panthor_queue_put_syncwait_obj(panthor_queue* queue);
// The CPU address of the sync object the queue waits on if it is mapped, else nullptr.
void* panthor_queue_get_syncwait_obj(panthor_group* group, panthor_queue* queue);
void group_sync_upd_work(kshim::work_struct* work);
u32 calc_job_credits(u32 profile_mask);
inline panthor_job* to_panthor_job(drm::drm_sched_job* j) {
    return container_of(j, panthor_job, base);
}

// ---- slots and the tick (panthor_sched_tick.cpp) ----
struct panthor_csg_slots_upd_ctx {
    u32 update_mask = 0;
    u32 timedout_mask = 0;
    struct {
        u32 value = 0, mask = 0;
    } requests[MAX_CSGS];
};
void csgs_upd_ctx_init(panthor_csg_slots_upd_ctx* ctx);
void csgs_upd_ctx_queue_reqs(panthor_device* ptdev, panthor_csg_slots_upd_ctx* ctx, u32 csg_id, u32 value, u32 mask);
int csgs_upd_ctx_apply_locked(panthor_device* ptdev, panthor_csg_slots_upd_ctx* ctx) REQUIRES(ptdev->scheduler->lock);
int cs_slot_reset_locked(panthor_device* ptdev, u32 csg_id, u32 cs_id) REQUIRES(ptdev->scheduler->lock);
void csg_slot_sync_update_locked(panthor_device* ptdev, u32 csg_id) REQUIRES(ptdev->scheduler->lock);
void sched_resume_tick(panthor_device* ptdev) REQUIRES(ptdev->scheduler->lock);
void tick_work(kshim::work_struct* work);

// ---- FW events (panthor_sched_fw_events.cpp) ----
void sched_process_csg_irq_locked(panthor_device* ptdev, u32 csg_id) REQUIRES(ptdev->scheduler->lock);
void process_fw_events_work(kshim::work_struct* work);
void sync_upd_work(kshim::work_struct* work);
// Arms sync_poll_work (unless pending) when a group waits on a sync object off its slot.
void sched_arm_sync_poll_locked(panthor_scheduler* sched) REQUIRES(sched->lock);
void sync_poll_work(kshim::work_struct* work);
void group_tiler_oom_work(kshim::work_struct* work);

}  // namespace panthor
