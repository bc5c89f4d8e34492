// Mirrors include/drm/gpu_scheduler.h: the DRM GPU scheduler's types and entry points.
//
// DOC: Overview. One drm_gpu_scheduler per hardware ring. It owns up to
// DRM_SCHED_PRIORITY_COUNT run queues (index 0 = KERNEL, the highest priority). Userspace-facing
// queues are drm_sched_entity objects; jobs are pushed to an entity, run strictly in push order
// within it, and an entity sits in one run queue of one scheduler at a time (it may move between
// the schedulers of its list while it is idle). Each job carries a drm_sched_fence pair:
// `scheduled` signals when run_job() handed the job to the hardware, `finished` when the
// hardware fence returned by run_job() signalled (with its error). The scheduler's two work
// items run on the submit workqueue: run_job_work picks ready entities (FIFO by oldest waiting
// job, or round-robin) while credits allow; free_job_work releases finished jobs from the head of
// the pending list. A delayed work (TDR) watches the job at the head of the pending list.
//
// Naming: the structs and functions keep upstream's names and fields, as kernel_shim/dma-buf does,
// so this file can be read beside the kernel's; C++ aliases (drm::Scheduler, drm::Entity,
// drm::Job) are provided for new code. Differences from upstream are listed in docs/drm_sched.md.
#pragma once
#include <atomic>
#include <boost/intrusive/list.hpp>
#include <boost/intrusive/set.hpp>
#include <cstdint>

#include "kernel_shim/completion.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/dma-buf/dma-resv.h"
#include "kernel_shim/err.h"
#include "kernel_shim/kref.h"
#include "kernel_shim/log.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/wait.h"
#include "kernel_shim/workqueue.h"

namespace drm {

using kshim::dma_fence;
using kshim::dma_fence_cb;
using kshim::dma_resv;
using kshim::dma_resv_usage;
using kshim::ktime_t;
using kshim::s64;
using kshim::u32;
using kshim::u64;

using kshim::ERR_PTR;
using kshim::IS_ERR;
using kshim::IS_ERR_OR_NULL;
using kshim::PTR_ERR;

inline constexpr long MAX_WAIT_SCHED_ENTITY_Q_EMPTY = static_cast<long>(kshim::msecs_to_jiffies(1000));

// Flags of the scheduler fences (bits above the dma_fence core's own).
inline constexpr int DRM_SCHED_FENCE_DONT_PIPELINE = kshim::DMA_FENCE_FLAG_USER_BITS;
inline constexpr int DRM_SCHED_FENCE_FLAG_HAS_DEADLINE_BIT = kshim::DMA_FENCE_FLAG_USER_BITS + 1;

enum drm_sched_priority : int {
    DRM_SCHED_PRIORITY_KERNEL,
    DRM_SCHED_PRIORITY_HIGH,
    DRM_SCHED_PRIORITY_NORMAL,
    DRM_SCHED_PRIORITY_LOW,
    DRM_SCHED_PRIORITY_COUNT
};

// Entity selection within a run queue (upstream's sched_policy module parameter).
inline constexpr int DRM_SCHED_POLICY_UNSET = -1;
inline constexpr int DRM_SCHED_POLICY_RR = 0;
inline constexpr int DRM_SCHED_POLICY_FIFO = 1;
// Current upstream's only policy (sched_rq.c): one run queue ordered by each entity's virtual
// GPU time, which grows faster for lower priorities (see sched_fair.cpp).
inline constexpr int DRM_SCHED_POLICY_FAIR = 2;
inline constexpr int DRM_SCHED_POLICY_COUNT = 3;
// The module parameter: the policy of schedulers whose init args leave `policy` unset.
extern int drm_sched_policy;

// What timedout_job() reports.
enum drm_gpu_sched_stat {
    DRM_GPU_SCHED_STAT_NONE,     // reserved: never return it
    DRM_GPU_SCHED_STAT_RESET,    // the job hung; the driver reset what it had to
    DRM_GPU_SCHED_STAT_ENODEV,   // the device is gone: do not re-arm the timeout
    DRM_GPU_SCHED_STAT_NO_HANG,  // false alarm: the job keeps running and stays pending
};

struct drm_gpu_scheduler;
struct drm_sched_entity;
struct drm_sched_job;

// An exponentially weighted moving average of job durations in microseconds, as the kernel's
// DECLARE_EWMA(drm_sched_avgtime, 6, 4): fixed point with 6 fraction bits, each new sample
// weighted 1/16.
// Writers are serialised by their owner's lock; readers may look without it (a heuristic).
struct drm_sched_avgtime {
    std::atomic<unsigned long> internal{0};
    void add(unsigned long val) {
        const unsigned long cur = internal.load(std::memory_order_relaxed);
        internal.store(cur ? (((cur << 4) - cur) + (val << 6)) >> 4 : val << 6, std::memory_order_relaxed);
    }
    unsigned long read() const { return internal.load(std::memory_order_relaxed) >> 6; }
};

// The fair policy's bookkeeping for one entity. Jobs outlive their entity, so each armed job
// holds a reference to add its GPU time once it is done.
struct drm_sched_entity_stats {
    kshim::kref refcount;
    kshim::SpinLock lock{"drm_sched_entity_stats.lock"};  // protects everything below
    ktime_t runtime = 0;                                  // GPU time of the entity's finished jobs
    ktime_t prev_runtime = 0;                             // runtime already folded into vruntime
    ktime_t vruntime = 0;                                 // position on the fair run queue (relative while off it)
    drm_sched_avgtime avg_job_us;
};
struct drm_sched_rq;

using boost::intrusive::link_mode;
using boost::intrusive::safe_link;
using SafeListHook = boost::intrusive::list_member_hook<link_mode<safe_link>>;
using SafeSetHook = boost::intrusive::set_member_hook<link_mode<safe_link>>;

// ---- sched_fence.c ----
struct drm_sched_fence {
    // Signals when run_job() was called (the job left the entity for the hardware ring).
    dma_fence scheduled;
    // Signals when the hardware fence did, with its error; the job's out-fence.
    dma_fence finished;
    ktime_t deadline = 0;  // valid with DRM_SCHED_FENCE_FLAG_HAS_DEADLINE_BIT; under `lock`
    // The hardware fence run_job() returned (a reference), published before `scheduled` signals.
    std::atomic<dma_fence*> parent{nullptr};
    drm_gpu_scheduler* sched = nullptr;
    kshim::SpinLock lock{"drm_sched_fence.lock"};  // both fences' lock
    void* owner = nullptr;
    u64 drm_client_id = 0;
};

drm_sched_fence* to_drm_sched_fence(dma_fence* f);
drm_sched_fence* drm_sched_fence_alloc(drm_sched_entity* entity, void* owner, u64 drm_client_id);
void drm_sched_fence_init(drm_sched_fence* fence, drm_sched_entity* entity);
void drm_sched_fence_free(drm_sched_fence* fence);
void drm_sched_fence_scheduled(drm_sched_fence* fence, dma_fence* parent);
void drm_sched_fence_finished(drm_sched_fence* fence, int result);

// ---- the entity's job queue (upstream's spsc_queue) ----
// A linked list without a lock, as upstream's: push swaps `tail` and links the job behind the
// old tail; pop advances `head` and, when it takes the last job, swings `tail` back to `head`
// (waiting for a push that already swapped it to link its job). Producers (push) are serialised
// by the driver per entity, as upstream requires; the one consumer is the scheduler (or kill,
// once the scheduler no longer uses the entity). The count is two counters, one written by each
// side, so neither side writes the other's cache line for every job.
struct drm_sched_job_queue {
    // The consumer's line.
    alignas(kshim::SMP_CACHE_BYTES) std::atomic<drm_sched_job*> head{nullptr};
    std::atomic<u64> popped{0};
    // The producer's line: the link to fill next (&head while the queue is empty).
    alignas(kshim::SMP_CACHE_BYTES) std::atomic<std::atomic<drm_sched_job*>*> tail{&head};
    std::atomic<u64> pushed{0};

    drm_sched_job_queue() = default;
    drm_sched_job_queue(const drm_sched_job_queue&) = delete;
    drm_sched_job_queue& operator=(const drm_sched_job_queue&) = delete;
    // Jobs queued (upstream's spsc_queue_count).
    u32 count() const {
        const u64 out = popped.load(std::memory_order_acquire);
        return static_cast<u32>(pushed.load(std::memory_order_acquire) - out);
    }
};

// The job's dependencies (upstream keeps an xarray): fence references, deduplicated per
// context. Small inline storage; grows with kmalloc at submit time, never on the signalling path.
struct drm_sched_job_deps {
    static constexpr u32 kInline = 4;
    dma_fence* inline_slots[kInline] = {};
    dma_fence** slots = inline_slots;
    u32 count = 0;
    u32 capacity = kInline;
};

struct drm_sched_job {
    // Entity queue link.
    std::atomic<drm_sched_job*> queue_next{nullptr};  // in entity->job_queue
    ktime_t submit_ts = 0;                            // when pushed: the FIFO policy's key
    drm_gpu_scheduler* sched = nullptr;               // set by drm_sched_job_arm
    drm_sched_fence* s_fence = nullptr;
    drm_sched_entity* entity = nullptr;  // cleared once the scheduler popped the job
    u32 credits = 0;
    u32 last_dependency = 0;
    drm_sched_priority s_priority = DRM_SCHED_PRIORITY_NORMAL;
    u64 id = 0;  // unique per scheduler, from arm
    // Hangs this job caused (drm_sched_increase_karma); drm_sched_resubmit_jobs cancels the
    // context of the first job past sched->hang_limit.
    std::atomic<int> karma{0};
    // Entity kill: waits for the previous job, then the dependencies, then a work item.
    dma_fence_cb finish_cb;
    kshim::work_struct work;
    // On the hardware fence: drm_sched_job_done_cb.
    dma_fence_cb cb;
    SafeListHook list;  // in sched->pending_list
    drm_sched_job_deps dependencies;
    drm_sched_entity_stats* entity_stats = nullptr;  // FAIR: a reference from arm to cleanup
};

struct drm_sched_backend_ops {
    // Extra dependencies the driver knows of (returns a reference, or nullptr when none is left).
    dma_fence* (*prepare_job)(drm_sched_job* sched_job, drm_sched_entity* s_entity) = nullptr;
    // Hands the job to the hardware; returns the hardware fence (a reference), nullptr, or an
    // ERR_PTR. The fence must signal in finite time.
    dma_fence* (*run_job)(drm_sched_job* sched_job) = nullptr;
    drm_gpu_sched_stat (*timedout_job)(drm_sched_job* sched_job) = nullptr;
    // Releases the job (drm_sched_job_cleanup and the driver's own memory).
    void (*free_job)(drm_sched_job* sched_job) = nullptr;
    // drm_sched_fini: make the job's hardware fence signal now, with -ECANCELED.
    void (*cancel_job)(drm_sched_job* sched_job) = nullptr;
};

// Laid out by who writes what for every job: the submitter (arm, push) and the scheduler's
// worker (selection, pop) each have their own cache lines, and what both read is set up at init.
struct drm_sched_entity {
    // ---- read by both sides, changed rarely (under `lock`) ----
    drm_sched_rq* rq = nullptr;
    // The caller's array; kept only while the entity may move (more than one scheduler).
    drm_gpu_scheduler** sched_list = nullptr;
    unsigned num_sched_list = 0;
    std::atomic<drm_sched_priority> priority{DRM_SCHED_PRIORITY_NORMAL};
    u64 fence_context = 0;               // scheduled fences use this one, finished fences the next
    std::atomic<int>* guilty = nullptr;  // set (by the driver) when the entity caused a hang
    std::atomic<bool> stopped{false};
    drm_sched_entity_stats* stats = nullptr;  // FAIR only: allocated at init

    // ---- the submitter's: drm_sched_job_arm ----
    alignas(kshim::SMP_CACHE_BYTES) std::atomic<int> fence_seq{0};

    // ---- one line for each side ----
    drm_sched_job_queue job_queue;

    // ---- the scheduler's: selection and pop ----
    // In rq->entities while the entity is on a run queue.
    alignas(kshim::SMP_CACHE_BYTES) SafeListHook list;
    // In rq->rb_tree_root (FIFO policy), keyed by oldest_job_waiting.
    SafeSetHook rb_tree_node;
    // Protects rq, sched_list, num_sched_list, priority and stopped (taken before rq->lock).
    kshim::SpinLock lock{"drm_sched_entity.lock"};
    // The run queue tree's key, under rq->lock: FIFO, the oldest waiting job's submit time;
    // FAIR, the entity's virtual runtime.
    ktime_t oldest_job_waiting = 0;
    // The fence the head job waits on (a reference), cleared by its callback.
    std::atomic<dma_fence*> dependency{nullptr};
    dma_fence_cb cb;
    // Finished fence of the last job handed to the hardware (a reference).
    std::atomic<dma_fence*> last_scheduled{nullptr};
    // Complete while the scheduler is not inside this entity (kill waits on it).
    kshim::completion entity_idle;
};

struct EntityFifoOrder {
    bool operator()(const drm_sched_entity& a, const drm_sched_entity& b) const {
        return a.oldest_job_waiting < b.oldest_job_waiting;
    }
};
using EntityFifoTree = boost::intrusive::multiset<
    drm_sched_entity, boost::intrusive::member_hook<drm_sched_entity, SafeSetHook, &drm_sched_entity::rb_tree_node>,
    boost::intrusive::compare<EntityFifoOrder>>;
using EntityList =
    boost::intrusive::list<drm_sched_entity,
                           boost::intrusive::member_hook<drm_sched_entity, SafeListHook, &drm_sched_entity::list>,
                           boost::intrusive::constant_time_size<false>>;

struct drm_sched_rq {
    // Read by submitters for every job (drm_sched_job_arm): not on the line of the lock, which
    // the worker takes for every job.
    drm_gpu_scheduler* sched = nullptr;
    // Protects entities, current_entity, rb_tree_root and the entities' oldest_job_waiting.
    alignas(kshim::SMP_CACHE_BYTES) kshim::SpinLock lock{"drm_sched_rq.lock"};
    EntityList entities;
    drm_sched_entity* current_entity = nullptr;  // round-robin cursor
    EntityFifoTree rb_tree_root;                 // FIFO order
    // Entities on `entities`, written under `lock`. Selection reads it without the lock to skip
    // empty run queues: an entity added meanwhile is followed by a scheduler wake-up anyway.
    std::atomic<u32> nr_entities{0};
    // FAIR: the priority of the entity at the front of the tree, or -1 when it is empty.
    int head_prio = -1;
};

using PendingList =
    boost::intrusive::list<drm_sched_job,
                           boost::intrusive::member_hook<drm_sched_job, SafeListHook, &drm_sched_job::list>,
                           boost::intrusive::constant_time_size<false>>;

struct drm_sched_init_args {
    const drm_sched_backend_ops* ops = nullptr;
    kshim::workqueue_struct* submit_wq = nullptr;   // nullptr: an ordered workqueue is allocated
    kshim::workqueue_struct* timeout_wq = nullptr;  // nullptr: system_wq
    u32 num_rqs = DRM_SCHED_PRIORITY_COUNT;
    u32 credit_limit = 1;
    unsigned hang_limit = 0;                     // hangs a job may cause before resubmit cancels its context
    long timeout = kshim::MAX_SCHEDULE_TIMEOUT;  // jiffies
    std::atomic<int>* score = nullptr;           // shared between schedulers, or nullptr for our own
    const char* name = "drm_sched";
    const kshim::Device* dev = nullptr;
    int policy = DRM_SCHED_POLICY_UNSET;  // ours: per scheduler instead of only the module param
};

// Counters that explain benchmark figures (relaxed; not part of upstream).
struct drm_sched_stats {
    std::atomic<u64> run_work_calls{0};
    std::atomic<u64> free_work_calls{0};
    std::atomic<u64> jobs_run{0};
};

// Laid out as drm_sched_entity: configuration read by both sides first, then one cache line
// for what the submitter writes for every job, and the worker's state after it.
struct drm_gpu_scheduler {
    // ---- configuration, read by both sides ----
    const drm_sched_backend_ops* ops = nullptr;
    u32 credit_limit = 0;
    long timeout = kshim::MAX_SCHEDULE_TIMEOUT;
    const char* name = nullptr;
    u32 num_rqs = 0;
    int policy = DRM_SCHED_POLICY_FIFO;
    drm_sched_rq* sched_rq[DRM_SCHED_PRIORITY_COUNT] = {};  // high to low priority; null past num_rqs
    kshim::workqueue_struct* submit_wq = nullptr;
    kshim::workqueue_struct* timeout_wq = nullptr;
    unsigned hang_limit = 0;
    // A score shared with other schedulers (args.score), or nullptr: then the scheduler keeps its
    // own in score_in / score_out. Read it with drm_sched_score().
    std::atomic<int>* score = nullptr;
    bool ready = false;
    std::atomic<bool> pause_submit{false};
    bool own_submit_wq = false;
    const kshim::Device* dev = nullptr;

    // ---- the submitter's: drm_sched_job_arm, drm_sched_entity_push_job ----
    alignas(kshim::SMP_CACHE_BYTES) std::atomic<u64> job_id_count{0};
    // The scheduler's own score (upstream's _score) is score_in - score_out: jobs pushed and
    // entities queued come in on the submitter's line, finished jobs and removed entities go out
    // on the worker's, so the two sides never write one line for every job.
    std::atomic<int> score_in{0};

    // ---- the worker's ----
    alignas(kshim::SMP_CACHE_BYTES) std::atomic<u32> credit_count{0};
    std::atomic<int> score_out{0};
    drm_sched_avgtime avg_job_us;  // FAIR: over every job, under job_list_lock
    // Jobs handed to the hardware and not yet freed, in run order.
    PendingList pending_list;
    kshim::SpinLock job_list_lock{"drm_gpu_scheduler.job_list_lock"};  // protects pending_list, tdr_*
    bool free_guilty = false;  // drm_sched_stop kept the signalled bad job alive for the handler
    // Ours (see drm_sched_suspend_timeout): the timer is not restarted while suspended.
    bool tdr_suspended = false;     // under job_list_lock
    unsigned long tdr_expires = 0;  // jiffies the armed timer fires at; under job_list_lock
    drm_sched_stats stats;
    kshim::wait_queue_head job_scheduled;  // woken when jobs leave entities (entity flush waits on it)
    kshim::work_struct work_run_job;
    kshim::work_struct work_free_job;
    kshim::delayed_work work_tdr;
    drm_sched_rq rq_storage[DRM_SCHED_PRIORITY_COUNT];
};

using Scheduler = drm_gpu_scheduler;
using Entity = drm_sched_entity;
using Job = drm_sched_job;

// ---- sched_main.c ----
int drm_sched_init(drm_gpu_scheduler* sched, const drm_sched_init_args* args);
void drm_sched_fini(drm_gpu_scheduler* sched);

int drm_sched_job_init(drm_sched_job* job, drm_sched_entity* entity, u32 credits, void* owner, u64 drm_client_id = 0);
void drm_sched_job_arm(drm_sched_job* job);
int drm_sched_job_add_dependency(drm_sched_job* job, dma_fence* fence);
int drm_sched_job_add_resv_dependencies(drm_sched_job* job, dma_resv* resv, dma_resv_usage usage);
// Upstream takes the GEM object; we take its reservation object until GEM exists.
int drm_sched_job_add_implicit_dependencies(drm_sched_job* job, dma_resv* resv, bool write);
bool drm_sched_job_has_dependency(drm_sched_job* job, dma_fence* fence);
void drm_sched_job_cleanup(drm_sched_job* job);

void drm_sched_wakeup(drm_gpu_scheduler* sched);
bool drm_sched_wqueue_ready(drm_gpu_scheduler* sched);
void drm_sched_wqueue_stop(drm_gpu_scheduler* sched);
void drm_sched_wqueue_start(drm_gpu_scheduler* sched);
void drm_sched_stop(drm_gpu_scheduler* sched, drm_sched_job* bad);
void drm_sched_start(drm_gpu_scheduler* sched, int errnum);
void drm_sched_fault(drm_gpu_scheduler* sched);
unsigned long drm_sched_suspend_timeout(drm_gpu_scheduler* sched);
void drm_sched_resume_timeout(drm_gpu_scheduler* sched, unsigned long remaining);
void drm_sched_tdr_queue_imm(drm_gpu_scheduler* sched);
// Deprecated upstream, kept for drivers that still recover this way (panfrost): count a hang
// against `bad` and mark its entity guilty; after drm_sched_stop and the driver's reset, run
// every pending job again (the guilty context's jobs with -ECANCELED set on `finished`).
void drm_sched_increase_karma(drm_sched_job* bad);
void drm_sched_resubmit_jobs(drm_gpu_scheduler* sched);
drm_gpu_scheduler* drm_sched_pick_best(drm_gpu_scheduler** sched_list, unsigned num_sched_list);
// The load-balancing score (upstream reads atomic_read(sched->score)): jobs pushed and not yet
// finished plus entities on the run queues.
int drm_sched_score(const drm_gpu_scheduler* sched);
// Credits left before the limit (upstream's static drm_sched_available_credits, exposed for tests).
u32 drm_sched_available_credits(drm_gpu_scheduler* sched);

// ---- sched_entity.c ----
int drm_sched_entity_init(drm_sched_entity* entity, drm_sched_priority priority, drm_gpu_scheduler** sched_list,
                          unsigned num_sched_list, std::atomic<int>* guilty);
long drm_sched_entity_flush(drm_sched_entity* entity, long timeout);
void drm_sched_entity_fini(drm_sched_entity* entity);
void drm_sched_entity_destroy(drm_sched_entity* entity);
// Static upstream (called from flush for a killed process and from fini); public here so a
// driver can stop an entity with queued jobs: they finish with -ESRCH once their dependencies did.
void drm_sched_entity_kill(drm_sched_entity* entity);
void drm_sched_entity_push_job(drm_sched_job* sched_job);
void drm_sched_entity_set_priority(drm_sched_entity* entity, drm_sched_priority priority);
void drm_sched_entity_modify_sched(drm_sched_entity* entity, drm_gpu_scheduler** sched_list, unsigned num_sched_list);
int drm_sched_entity_error(drm_sched_entity* entity);
void drm_sched_entity_select_rq(drm_sched_entity* entity);
bool drm_sched_entity_is_ready(drm_sched_entity* entity);

}  // namespace drm
