// Mirrors drivers/gpu/drm/panfrost/panfrost_device.h: the device of a Job Manager Mali GPU, its
// probed features, the per-compatible data, the per-file state, MMIO accessors and the model
// compare helpers.
//
// DOC: The driver reaches the GPU only through pfdev->iomem (MMIO), the "gpu"/"mmu"/"job" IRQ
// lines of the platform device and memory by physical address; it never includes a mock header.
// This slice has GPU_CONTROL, devfreq, the MMU, GEM, the job slots, perfcnt and the coredump
// (docs/panfrost.md).
#pragma once
#include <atomic>
#include <bitset>

#include "drm/drm_device.h"
#include "drm/drm_file.h"
#include "drm/drm_vma_manager.h"
#include "hw/jm/models.h"
#include "hw/jm/regs/job_regs.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/iopoll.h"
#include "kernel_shim/irq.h"
#include "kernel_shim/log.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/platform.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/shrinker.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/workqueue.h"
#include "kernel_shim/xarray.h"
#include "panfrost/panfrost_devfreq.h"

namespace panfrost {

using kshim::s32;
using kshim::u32;
using kshim::u64;

// The job slots' bookkeeping covers NUM_JOB_SLOTS (hw/jm/regs/job_regs.h: 3, whatever JS_PRESENT
// says, as upstream).

// Bits of panfrost_device.is_suspended: whose IRQs are masked and ignored.
enum panfrost_comp_bit {
    PANFROST_COMP_BIT_GPU,
    PANFROST_COMP_BIT_MMU,
    PANFROST_COMP_BIT_JOB,
    PANFROST_COMP_BIT_MAX,
};

// What GET_PARAM exports and what the quirks and model matching look at: every GPU_CONTROL
// identity register, read once at probe.
struct panfrost_features {
    u32 id = 0;        // GPU_ID[31:16] (T60x's raw id rewritten to 0x0600)
    u32 revision = 0;  // GPU_ID[15:0]
    u64 shader_present = 0;
    u64 tiler_present = 0;
    u64 l2_present = 0;
    u64 stack_present = 0;
    u32 as_present = 0;
    u32 js_present = 0;
    u32 l2_features = 0;
    u32 core_features = 0;
    u32 tiler_features = 0;
    u32 mem_features = 0;
    u32 mmu_features = 0;
    u32 thread_features = 0;
    u32 max_threads = 0;
    u32 thread_max_workgroup_sz = 0;
    u32 thread_max_barrier_sz = 0;
    u32 coherency_features = 0;
    u32 selected_coherency = 0;  // DRM_PANFROST_GPU_COHERENCY_*
    u32 afbc_features = 0;
    u32 texture_features[4] = {};
    u32 js_features[16] = {};
    u32 nr_core_groups = 0;
    u32 thread_tls_alloc = 0;
    std::bitset<HW_FEATURES_END> hw_features;
    std::bitset<HW_ISSUE_END> hw_issues;
};

// Power-management features of a compatible (pm_features bits).
enum panfrost_gpu_pm {
    GPU_PM_CLK_DIS,   // gate the clocks on system suspend
    GPU_PM_VREG_OFF,  // drop the supply on system suspend
    GPU_PM_RT,        // gate the clocks on runtime suspend too
};

struct panfrost_device;
struct panfrost_mmu;
struct panfrost_job;
struct panfrost_job_slot;
struct panfrost_jm_ctx;
struct panfrost_perfcnt;

// A circular doubly linked list node (include/linux/list.h's list_head, the operations panfrost
// uses): the LRU of VMs holding an AS and a BO's per-file mappings. Embed it and recover the
// owner with container_of. A node that is in no list points at itself.
struct list_head {
    list_head* next = this;
    list_head* prev = this;
    list_head() = default;
    list_head(const list_head&) = delete;
    list_head& operator=(const list_head&) = delete;
};
inline bool list_empty(const list_head* head) {
    return head->next == head;
}
inline void list_del_init(list_head* e) {
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}
// Inserts e right after head (list_add) or right before it, at the tail (list_add_tail).
inline void list_add(list_head* e, list_head* head) {
    e->next = head->next;
    e->prev = head;
    head->next->prev = e;
    head->next = e;
}
inline void list_add_tail(list_head* e, list_head* head) {
    list_add(e, head->prev);
}
inline void list_move(list_head* e, list_head* head) {
    list_del_init(e);
    list_add(e, head);
}
inline void list_move_tail(list_head* e, list_head* head) {
    list_del_init(e);
    list_add_tail(e, head);
}
inline bool list_is_singular(const list_head* head) {
    return !list_empty(head) && head->next == head->prev;
}

// The OF match data of a compatible (struct panfrost_compatible).
struct panfrost_compatible {
    const char* const* supply_names;  // regulators, nullptr-terminated
    int num_supplies;
    u32 pm_features;                               // BIT(panfrost_gpu_pm)
    void (*vendor_quirk)(panfrost_device* pfdev);  // run at the end of the quirks
};

struct panfrost_device {
    explicit panfrost_device(const drm::DriverDesc& driver);
    panfrost_device(const panfrost_device&) = delete;
    panfrost_device& operator=(const panfrost_device&) = delete;

    drm::drm_device base;
    kshim::PlatformDevice* pdev = nullptr;
    kshim::Device* dev = nullptr;  // &pdev->dev, the dev_* log prefix
    const panfrost_compatible* comp = nullptr;
    kshim::Iomem* iomem = nullptr;
    bool coherent = false;

    kshim::IrqLine* gpu_irq = nullptr;
    kshim::IrqLine* mmu_irq = nullptr;
    kshim::IrqLine* job_irq = nullptr;
    // PANFROST_COMP_BIT_*: the block's IRQ is masked and its handler ignores the line (shared).
    std::atomic<u32> is_suspended{0};

    kshim::Clk* clock = nullptr;
    kshim::Clk* bus_clock = nullptr;
    kshim::Regulator* regulators[2] = {};
    int num_regulators = 0;

    panfrost_features features;

    panfrost_devfreq pfdevfreq;

    // Options upstream takes from the command line and sysfs; the host and tests set them.
    // unstable_ioctls (module parameter, off): PERFCNT_ENABLE/DUMP answer -ENOSYS without it.
    std::atomic<bool> unstable_ioctls{false};
    // profiling (sysfs attribute, off): per-job time and cycles for fdinfo.
    std::atomic<bool> profile_mode{false};
    // dump_core (module parameter, on): the next job timeout takes a devcoredump, then clears it.
    std::atomic<bool> dump_core{true};

    panfrost_perfcnt* perfcnt = nullptr;

    // Where GEM mmap offsets come from (drm_device.vma_offset_manager).
    drm::drm_vma_offset_manager vma_offset_manager;

    // Address-space allocation (panfrost_mmu.cpp): which ASes are handed out, which are disabled
    // after an unhandled fault (their MMU interrupts stay masked), and the VMs holding one.
    kshim::SpinLock as_lock{"panfrost.as_lock"};
    unsigned long as_alloc_mask = 0;  // as_lock
    u32 as_faulty_mask = 0;           // as_lock
    list_head as_lru_list;            // panfrost_mmu.list, most recently used first; as_lock

    // The slot schedulers and their lock (panfrost_job.cpp).
    panfrost_job_slot* js = nullptr;
    // The jobs on the hardware per slot: [0] is current (or the only one), [1] waits in NEXT.
    // js->job_lock.
    panfrost_job* jobs[NUM_JOB_SLOTS][2] = {};
    // Drops the scheduler's job references outside the fence-signalling free_job path.
    kshim::workqueue_struct* job_put_wq = nullptr;
    // Serialises arm + push of jobs so the schedulers' fence seqnos follow submission order.
    kshim::Mutex sched_lock{"panfrost.sched_lock"};

    struct {
        std::atomic<int> pending{0};            // a reset is wanted: START is not written meanwhile
        kshim::workqueue_struct* wq = nullptr;  // ordered; also the schedulers' timeout queue
        kshim::work_struct work;
    } reset;

    struct {
        std::atomic<int> use_count{0};
        // Serialises the 0 <-> 1 transitions of use_count with the GPU_CMD they write.
        kshim::SpinLock lock{"panfrost.cycle_counter.lock"};
    } cycle_counter;

    // Purgeable BOs (MADVISE DONTNEED), oldest first, and the shrinker that purges them
    // (panfrost_gem_shrinker.cpp). Taken before a BO's mappings.lock, after its resv.
    kshim::Mutex shrinker_lock{"panfrost.shrinker_lock"};
    list_head shrinker_list;  // panfrost_gem_object.madv_list; shrinker_lock
    kshim::shrinker* shrinker = nullptr;

    // CPU cache maintenance asked by SYNC_BO (panfrost_gem_sync). The shim's CPU has no cache
    // to clean: each DMA sync upstream would issue is counted here instead (one per covered
    // sg segment: for_device = clean (DMA_TO_DEVICE), for_cpu = invalidate (DMA_FROM_DEVICE)),
    // with the bytes each covered, and traced as an instant event when tracing is on.
    struct {
        std::atomic<u64> for_device{0};
        std::atomic<u64> for_cpu{0};
        std::atomic<u64> bytes{0};
    } cache_sync;
};

inline panfrost_device* to_panfrost_device(drm::drm_device* ddev) {
    return container_of(ddev, panfrost_device, base);
}

// Per-slot time and GPU cycles of a file's profiled jobs (fdinfo's drm-engine-/drm-cycles-).
struct panfrost_engine_usage {
    u64 elapsed_ns[NUM_JOB_SLOTS] = {};
    u64 cycles[NUM_JOB_SLOTS] = {};
};

// Per-open-file state (drm_file.driver_priv): the device, the file's VM and its JM contexts.
struct panfrost_file_priv {
    panfrost_device* pfdev = nullptr;
    panfrost_mmu* mmu = nullptr;  // this file's VM (panfrost_mmu_ctx_create at open)
    // Handle -> context (one reference each); handle 0 is the default context made at open.
    kshim::XArray<panfrost_jm_ctx> jm_ctxs;
    // Written by the job IRQ under js->job_lock as profiled jobs leave the hardware.
    panfrost_engine_usage engine_usage;
};

inline bool panfrost_has_hw_feature(const panfrost_device* pfdev, panfrost_hw_feature feat) {
    return pfdev->features.hw_features.test(feat);
}
inline bool panfrost_has_hw_issue(const panfrost_device* pfdev, panfrost_hw_issue issue) {
    return pfdev->features.hw_issues.test(issue);
}

// Bifrost and later ids carry an arch number in [15:12]: only arch major and product major count.
inline int panfrost_model_cmp(const panfrost_device* pfdev, s32 id) {
    s32 match_id = static_cast<s32>(pfdev->features.id);
    if (match_id & 0xf000)
        match_id &= 0xf00f;
    return match_id - id;
}
inline bool panfrost_model_is_bifrost(const panfrost_device* pfdev) {
    return panfrost_model_cmp(pfdev, 0x1000) >= 0;
}
inline bool panfrost_model_eq(const panfrost_device* pfdev, s32 id) {
    return !panfrost_model_cmp(pfdev, id);
}

int panfrost_device_init(panfrost_device* pfdev);
void panfrost_device_fini(panfrost_device* pfdev);
// Soft reset, power-on, MMU reset and the job interrupts cleared (and unmasked when
// enable_job_int): what every runtime resume does, and the reset path with the IRQs kept masked.
void panfrost_device_reset(panfrost_device* pfdev, bool enable_job_int);

int panfrost_device_runtime_suspend(kshim::Device* dev);
int panfrost_device_runtime_resume(kshim::Device* dev);
extern const kshim::DevPmOps panfrost_pm_ops;

// The name of an exception code (hw/jm/regs/exceptions.h); "Unknown exception type" otherwise.
const char* panfrost_exception_name(u32 exception_code);

// ---- MMIO ----
inline u32 gpu_read(panfrost_device* pfdev, u32 reg) {
    return kshim::readl(pfdev->iomem, reg);
}
inline void gpu_write(panfrost_device* pfdev, u32 reg, u32 data) {
    kshim::writel(data, pfdev->iomem, reg);
}
inline u64 gpu_read64(panfrost_device* pfdev, u32 reg) {
    return gpu_read(pfdev, reg) | (static_cast<u64>(gpu_read(pfdev, reg + 4)) << 32);
}
// A free-running 64-bit counter: HI, LO, HI until both HI reads agree.
inline u64 gpu_read64_counter(panfrost_device* pfdev, u32 reg) {
    u32 lo, hi1, hi2;
    do {
        hi1 = gpu_read(pfdev, reg + 4);
        lo = gpu_read(pfdev, reg);
        hi2 = gpu_read(pfdev, reg + 4);
    } while (hi1 != hi2);
    return lo | (static_cast<u64>(hi2) << 32);
}

}  // namespace panfrost
