// Mirrors drivers/gpu/drm/panthor/panthor_device.h: the device, its PM state, the reset scaffold,
// MMIO accessors and the PANTHOR_IRQ_HANDLER pattern.
//
// DOC: The driver reaches the GPU only through ptdev->iomem (MMIO), the three IRQ lines of the
// platform device and memory by physical address; it never includes a mock_hw header.
#pragma once
#include <atomic>

#include "drm/drm_device.h"
#include "drm/drm_file.h"
#include "drm/drm_vma_manager.h"
#include "kernel_shim/clk.h"
#include "kernel_shim/completion.h"
#include "kernel_shim/iopoll.h"
#include "kernel_shim/irq.h"
#include "kernel_shim/log.h"
#include "kernel_shim/mutex.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/platform.h"
#include "kernel_shim/spinlock.h"
#include "kernel_shim/workqueue.h"
#include "uapi/drm/panthor_drm.h"

namespace panthor {

using kshim::phys_addr_t;
using kshim::s64;
using kshim::u16;
using kshim::u32;
using kshim::u64;
using kshim::u8;

struct panthor_csf;
struct panthor_devfreq;
struct panthor_fw;
struct panthor_gpu;
struct panthor_group_pool;
struct panthor_heap_pool;
struct panthor_mmu;
struct panthor_scheduler;
struct panthor_vm;
struct panthor_gem_object;
struct panthor_vm_pool;
struct panthor_device;

enum panthor_device_pm_state {
    PANTHOR_DEVICE_PM_STATE_SUSPENDED = 0,
    PANTHOR_DEVICE_PM_STATE_RESUMING,
    PANTHOR_DEVICE_PM_STATE_ACTIVE,
    PANTHOR_DEVICE_PM_STATE_SUSPENDING,
};

// One interrupt line of the GPU (gpu, mmu or job) and its *_INT_* register block.
struct panthor_irq {
    panthor_device* ptdev = nullptr;
    kshim::IrqLine* irq = nullptr;
    // Sources enabled while not suspended. Atomic: the threaded handler reads it while suspend or
    // the MMU fault path (which masks a faulty AS) change it.
    std::atomic<u32> mask{0};
    std::atomic<bool> suspended{true};
    u32 int_base = 0;  // GPU_INT_BASE / MMU_INT_BASE / JOB_INT_BASE
    const char* name = nullptr;
    void (*handler)(panthor_device* ptdev, u32 status) = nullptr;
};

struct panthor_device {
    explicit panthor_device(const drm::DriverDesc& driver);
    panthor_device(const panthor_device&) = delete;
    panthor_device& operator=(const panthor_device&) = delete;

    drm::drm_device base;
    kshim::PlatformDevice* pdev = nullptr;
    kshim::Device* dev = nullptr;  // &pdev->dev, the dev_* log prefix
    phys_addr_t phys_addr = 0;
    kshim::Iomem* iomem = nullptr;
    bool coherent = false;

    drm_panthor_gpu_info gpu_info{};
    drm_panthor_csif_info csif_info{};
    // The page sizes of the GPU page tables (DEV_QUERY_MMU_INFO), set by panthor_mmu_init.
    drm_panthor_mmu_info mmu_info{};

    // CPU cache maintenance (BO_SYNC, the syncwait read, dma-buf CPU access). The shim's CPU has
    // no cache to clean: each DMA sync upstream would issue is counted instead (one per covered
    // sg segment: for_device = clean (DMA_TO_DEVICE), for_cpu = invalidate (DMA_FROM_DEVICE)),
    // with the bytes each covered, and traced as an instant event when tracing is on.
    struct {
        std::atomic<u64> for_device{0};
        std::atomic<u64> for_cpu{0};
        std::atomic<u64> bytes{0};
    } cache_sync;

    panthor_gpu* gpu = nullptr;
    panthor_fw* fw = nullptr;
    panthor_mmu* mmu = nullptr;
    panthor_scheduler* scheduler = nullptr;
    panthor_devfreq* devfreq = nullptr;

    struct {
        kshim::Clk* core = nullptr;
        kshim::Clk* stacks = nullptr;
        kshim::Clk* coregroup = nullptr;
    } clks;

    // The fake mmap offsets of this device's GEM objects (drm_device.vma_offset_manager).
    drm::drm_vma_offset_manager vma_offset_manager;

    struct {
        kshim::work_struct work;
        kshim::workqueue_struct* wq = nullptr;  // reset work and the FW ping watchdog
        std::atomic<int> pending{0};
        // Why the pending reset was scheduled (a panthor_reset_reason, the first request's): the
        // devcoredump the reset work takes names it.
        std::atomic<int> reason{0};
        bool fast = false;  // whether the next FW restart may keep the loaded sections
    } reset;

    struct {
        std::atomic<int> state{PANTHOR_DEVICE_PM_STATE_SUSPENDED};
        // Serialises PM state changes against the USER_FLUSH_ID mmap fault path.
        kshim::Mutex mmio_lock{"panthor.pm.mmio_lock"};
        // What a USER_FLUSH_ID mapping reads while the device is suspended (upstream maps a dummy
        // page holding 1 there).
        kshim::Page* dummy_latest_flush = nullptr;
        bool recovery_needed = false;
    } pm;

    unsigned long current_frequency = 0;
    unsigned long fast_rate = 0;

    struct {
        kshim::Mutex lock{"panthor.unplug.lock"};  // serialises panthor_device_unplug
        kshim::completion done;
    } unplug;

    u32 profile_mask = 0;
};

inline panthor_device* to_panthor_device(drm::drm_device* ddev) {
    return container_of(ddev, panthor_device, base);
}

// What the profiling slots of finished jobs add up to.
struct panthor_gpu_usage {
    u64 time = 0;    // GPU timestamp ticks
    u64 cycles = 0;  // GPU cycles
};

// Per-open-file state (drm_file.driver_priv).
struct panthor_file {
    panthor_device* ptdev = nullptr;
    panthor_vm_pool* vms = nullptr;
    panthor_group_pool* groups = nullptr;
    u64 user_mmio_offset = 0;  // DRM_PANTHOR_USER_MMIO_OFFSET_{32,64}BIT
    // GPU usage of the file's jobs so far (fdinfo), gathered from its groups.
    kshim::SpinLock stats_lock{"panthor_file.stats_lock"};  // protects stats
    panthor_gpu_usage stats;
    u64 client_id = 0;  // drm_file.client_id
    // The object behind the file's sparse mappings (panthor_vm_sparse.cpp): created on the first
    // sparse MAP, one reference dropped when the file closes.
    struct {
        kshim::Mutex lock{"panthor_file.sparse.lock"};  // protects dummy_bo
        panthor_gem_object* dummy_bo = nullptr;
    } sparse;
};

int panthor_device_init(panthor_device* ptdev);
void panthor_device_unplug(panthor_device* ptdev);

// Why a reset was scheduled. Upstream only logs the cause at each call site; we also keep it for
// the devcoredump the reset takes.
enum panthor_reset_reason {
    PANTHOR_RESET_REQUESTED,          // asked for with no fault behind it (tests, tools)
    PANTHOR_RESET_FW_PING_TIMEOUT,    // the firmware did not answer the watchdog's GLB PING
    PANTHOR_RESET_MCU_FATAL,          // a missed ping or CSG ack, and MCU_STATUS says FATAL
    PANTHOR_RESET_CSG_ACK_TIMEOUT,    // a CSG request (state, endpoint config, status update) not acked in time
    PANTHOR_RESET_CSG_INVALID_STATE,  // a CSG reported a state nobody asked for
    PANTHOR_RESET_CS_UNRECOVERABLE,   // CS_FATAL with CS_UNRECOVERABLE
    PANTHOR_RESET_AS_TIMEOUT,         // an AS command never completed (AS_ACTIVE stuck)
    PANTHOR_RESET_LOCKED_REGION,      // a locked VA region could not be flushed and unlocked
    PANTHOR_RESET_GROUP_BIND,         // a group's VM could not get an address space
};
const char* panthor_reset_reason_name(panthor_reset_reason reason);

// Schedules a GPU reset (once; further calls while one is pending do nothing, and the first
// request's reason is the one recorded).
void panthor_device_schedule_reset(panthor_device* ptdev, panthor_reset_reason reason = PANTHOR_RESET_REQUESTED);
inline bool panthor_device_reset_is_pending(panthor_device* ptdev) {
    return ptdev->reset.pending.load() != 0;
}

// Runtime PM callbacks (panthor_pm_ops).
int panthor_device_resume(kshim::Device* dev);
int panthor_device_suspend(kshim::Device* dev);
extern const kshim::DevPmOps panthor_pm_ops;

// Resumes the device for an ioctl that touches the hardware; pair with pm_runtime_put_autosuspend.
int panthor_device_resume_and_get(panthor_device* ptdev);

// DRM_PANTHOR_EXCEPTION_* names ("Unknown exception type" otherwise).
const char* panthor_exception_name(panthor_device* ptdev, u32 exception_code);

// ---- MMIO ----
inline u32 gpu_read(panthor_device* ptdev, u32 reg) {
    return kshim::readl(ptdev->iomem, reg);
}
inline void gpu_write(panthor_device* ptdev, u32 reg, u32 data) {
    kshim::writel(data, ptdev->iomem, reg);
}
inline u64 gpu_read64(panthor_device* ptdev, u32 reg) {
    return gpu_read(ptdev, reg) | (static_cast<u64>(gpu_read(ptdev, reg + 4)) << 32);
}
inline void gpu_write64(panthor_device* ptdev, u32 reg, u64 data) {
    gpu_write(ptdev, reg, static_cast<u32>(data));
    gpu_write(ptdev, reg + 4, static_cast<u32>(data >> 32));
}
// A free-running 64-bit counter: HI, LO, HI until both HI reads agree.
inline u64 gpu_read64_counter(panthor_device* ptdev, u32 reg) {
    u32 lo, hi1, hi2;
    do {
        hi1 = gpu_read(ptdev, reg + 4);
        lo = gpu_read(ptdev, reg);
        hi2 = gpu_read(ptdev, reg + 4);
    } while (hi1 != hi2);
    return lo | (static_cast<u64>(hi2) << 32);
}

}  // namespace panthor

// Polls a register through the runtime (virtual time passes in simulated mode).
#define gpu_read_poll_timeout(dev, reg, val, cond, delay_us, timeout_us) \
    read_poll_timeout(::panthor::gpu_read, val, cond, delay_us, timeout_us, false, dev, reg)
#define gpu_read_poll_timeout_atomic(dev, reg, val, cond, delay_us, timeout_us) \
    read_poll_timeout_atomic(::panthor::gpu_read, val, cond, delay_us, timeout_us, false, dev, reg)
#define gpu_read64_poll_timeout(dev, reg, val, cond, delay_us, timeout_us) \
    read_poll_timeout(::panthor::gpu_read64, val, cond, delay_us, timeout_us, false, dev, reg)
