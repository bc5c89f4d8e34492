// panthor driver benchmarks, simulated mode, release preset.
//
//   BM_PanthorProbe        one iteration = panthor_probe on the mock G610 up to a booted MCU, then
//                          panthor_remove (CPU time; goal <= 5 ms per pair)
//   BM_VmBindMapUnmap4K    one iteration = one synchronous VM_BIND ioctl mapping a 4 KiB BO, then
//                          one unmapping it (goal <= 2 us per pair). on_as:1 = the VM is bound to
//                          an address space, so each op also LOCKs the region, flushes the caches
//                          (a GPU_CMD completion IRQ) and UNLOCKs on the mock; on_as:0 = no AS, the
//                          page-table update only (what a bind costs while the VM is idle and
//                          evicted, or before its first job). switches = simulated task switches.
//   BM_VmBindMap1GiB       one iteration = VM_BIND map of a 1 GiB BO with 4 KiB pages (the BO is
//                          offset by one page, so no 2 MiB blocks) and the unmap outside the timer;
//                          ns_per_page counter. Goal: <= 2x BM_IoPgtableMap1GiB per page.
//   BM_IoPgtableMap1GiB    the bare io-pgtable map_pages of the same 1 GiB range, 4 KiB pages.
//   BM_VmBindMap1GiBBlocks one iteration = VM_BIND map of 1 GiB at a 1 GiB-aligned VA, where every
//                          2 MiB block is one level-2 leaf; the unmap outside the timer. sparse:0 =
//                          a 1 GiB BO at offset 0; sparse:1 = a sparse map (MAP_SPARSE | NOEXEC), the
//                          file's 2 MiB dummy repeated 512 times. Goal: sparse <= 2x the BO map.
//   BM_BoSync64MiB         one iteration = one BO_SYNC ioctl over a whole 64 MiB write-back BO
//                          (WB_MMAP): type:0 = CPU_CACHE_FLUSH, type:1 = FLUSH_AND_INVALIDATE. The
//                          mock has no CPU cache, so this is the ioctl, the BO lookup and the walk
//                          of the BO's segments with each sync counted (panthor_device::cache_sync).
#include <benchmark/benchmark.h>

#include "bench/panthor_bench_device.h"
#include "drm/drm_ioctl.h"
#include "drm/uaccess.h"
#include "kernel_shim/iommu/io_pgtable.h"
#include "kernel_shim/page_alloc.h"
#include "kernel_shim/pm_runtime.h"
#include "kernel_shim/runtime.h"
#include "mock_hw/platform.h"
#include "panthor/panthor_drv.h"
#include "panthor/panthor_mmu.h"
#include "uapi/drm/panthor_drm.h"

using namespace drm::uapi;

namespace {

using upanthor_bench::Device;

constexpr kshim::u64 kSz4K = 4096;
constexpr kshim::u64 kSz1G = 1ull << 30;

void BM_PanthorProbe(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    drm::uaccess_set_trust_all(true);
    {
        std::unique_ptr<upanthor::host::Machine> machine;
        if (upanthor::host::Machine::create({}, &machine))
            state.SkipWithError("module init failed");
        for (auto _ : state) {
            if (!machine || machine->probe()) {
                state.SkipWithError("probe failed");
                break;
            }
            machine->remove();
        }
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_PanthorProbe)->Unit(benchmark::kMillisecond);

void BM_VmBindMapUnmap4K(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    drm::uaccess_set_trust_all(true);
    {
        Device d;
        if (!d.up())
            return state.SkipWithError("probe failed");
        const kshim::u32 vm = d.vm_create();
        const kshim::u32 bo = d.bo_create(kSz4K);
        const bool on_as = state.range(0) != 0;
        if (!vm || !bo || (on_as && !d.activate(vm)))
            return state.SkipWithError("setup failed");
        const kshim::u64 switches = rt.context_switches();
        for (auto _ : state) {
            if (d.bind(vm, DRM_PANTHOR_VM_BIND_OP_TYPE_MAP, bo, 0, 0x100000, kSz4K) ||
                d.bind(vm, DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP, 0, 0, 0x100000, kSz4K)) {
                state.SkipWithError("bind failed");
                break;
            }
        }
        // Task switches of the simulated runtime per map+unmap pair (IRQ threads, polls).
        state.counters["switches"] = benchmark::Counter(static_cast<double>(rt.context_switches() - switches),
                                                        benchmark::Counter::kAvgIterations);
        d.deactivate();
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_VmBindMapUnmap4K)->ArgName("on_as")->Arg(1)->Arg(0)->Unit(benchmark::kNanosecond);

// Times VM_BIND maps of 1 GiB at VA 1 GiB with `flags` (the unmap after each outside the timer),
// after one untimed map and unmap: that first bind pins the BO, allocating and zeroing its pages,
// or creates the file's sparse dummy, which is not what is measured.
void time_1gib_maps(benchmark::State& state, Device& d, kshim::u32 vm, kshim::u32 flags, kshim::u32 bo,
                    kshim::u64 bo_offset) {
    if (d.bind(vm, flags, bo, bo_offset, kSz1G, kSz1G) ||
        d.bind(vm, DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP, 0, 0, kSz1G, kSz1G))
        return state.SkipWithError("warm-up bind failed");
    for (auto _ : state) {
        if (d.bind(vm, flags, bo, bo_offset, kSz1G, kSz1G)) {
            state.SkipWithError("map failed");
            break;
        }
        state.PauseTiming();
        d.bind(vm, DRM_PANTHOR_VM_BIND_OP_TYPE_UNMAP, 0, 0, kSz1G, kSz1G);
        state.ResumeTiming();
    }
}

void BM_VmBindMap1GiB(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    drm::uaccess_set_trust_all(true);
    kshim::pt_pool_prefault(1024);
    {
        Device d;
        if (!d.up())
            return state.SkipWithError("probe failed");
        const kshim::u32 vm = d.vm_create();
        // One page more than 1 GiB, mapped from offset 4 KiB: physically contiguous but never
        // 2 MiB aligned against the VA, so every page is a 4 KiB PTE.
        const kshim::u32 bo = d.bo_create(kSz1G + kSz4K);
        if (!vm || !bo || !d.activate(vm))
            return state.SkipWithError("setup failed");
        time_1gib_maps(state, d, vm, DRM_PANTHOR_VM_BIND_OP_TYPE_MAP, bo, kSz4K);
        d.deactivate();
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
    state.counters["ns_per_page"] = benchmark::Counter(static_cast<double>(state.iterations() * (kSz1G / kSz4K)),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_VmBindMap1GiB)->Unit(benchmark::kMillisecond);

void BM_IoPgtableMap1GiB(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    kshim::pt_pool_prefault(1024);
    iommu::IoPgtableCfg cfg{};
    cfg.pgsize_bitmap = iommu::SZ_4K | iommu::SZ_2M;
    cfg.ias = 48;
    cfg.oas = 40;
    iommu::IoPgtableOps* ops = iommu::alloc_io_pgtable_ops(iommu::IoPgtableFmt::ARM_64_LPAE_S1, &cfg, nullptr);
    const kshim::phys_addr_t pa = kshim::kPhysBase + kSz4K;  // any arena address: nothing is touched
    for (auto _ : state) {
        size_t mapped = 0;
        if (ops->map_pages(kSz1G, pa, kSz4K, kSz1G / kSz4K, 3, kshim::GFP_KERNEL, &mapped) || mapped != kSz1G) {
            state.SkipWithError("map failed");
            break;
        }
        state.PauseTiming();
        ops->unmap_pages(kSz1G, kSz4K, kSz1G / kSz4K, nullptr);
        state.ResumeTiming();
    }
    iommu::free_io_pgtable_ops(ops);
    state.counters["ns_per_page"] = benchmark::Counter(static_cast<double>(state.iterations() * (kSz1G / kSz4K)),
                                                       benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_IoPgtableMap1GiB)->Unit(benchmark::kMillisecond);

void BM_VmBindMap1GiBBlocks(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    drm::uaccess_set_trust_all(true);
    kshim::pt_pool_prefault(1024);
    {
        Device d;
        if (!d.up())
            return state.SkipWithError("probe failed");
        const bool sparse = state.range(0) != 0;
        const kshim::u32 vm = d.vm_create();
        const kshim::u32 bo = sparse ? 0 : d.bo_create(kSz1G);
        const kshim::u32 flags = sparse ? DRM_PANTHOR_VM_BIND_OP_TYPE_MAP | DRM_PANTHOR_VM_BIND_OP_MAP_SPARSE |
                                              DRM_PANTHOR_VM_BIND_OP_MAP_NOEXEC
                                        : DRM_PANTHOR_VM_BIND_OP_TYPE_MAP;
        if (!vm || (!sparse && !bo) || !d.activate(vm))
            return state.SkipWithError("setup failed");
        time_1gib_maps(state, d, vm, flags, bo, 0);
        d.deactivate();
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_VmBindMap1GiBBlocks)->ArgName("sparse")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_BoSync64MiB(benchmark::State& state) {
    kshim::Runtime rt{kshim::RuntimeOptions{}};
    drm::uaccess_set_trust_all(true);
    {
        Device d;
        if (!d.up())
            return state.SkipWithError("probe failed");
        constexpr kshim::u64 kSize = 64ull << 20;
        drm_panthor_bo_create c{};
        c.size = kSize;
        c.flags = DRM_PANTHOR_BO_WB_MMAP;
        if (drm::ioctl(d.file, DRM_IOCTL_PANTHOR_BO_CREATE, &c))
            return state.SkipWithError("BO_CREATE failed");
        drm_panthor_bo_sync_op op{};
        op.handle = c.handle;
        op.type = static_cast<kshim::u32>(state.range(0));
        op.size = kSize;
        drm_panthor_bo_sync sync{};
        sync.ops = DRM_PANTHOR_OBJ_ARRAY(1, &op);
        // The first sync may populate the BO's pages: not what is measured.
        if (drm::ioctl(d.file, DRM_IOCTL_PANTHOR_BO_SYNC, &sync))
            return state.SkipWithError("BO_SYNC failed");
        const kshim::u64 synced = d.ptdev->cache_sync.bytes.load();
        for (auto _ : state) {
            if (drm::ioctl(d.file, DRM_IOCTL_PANTHOR_BO_SYNC, &sync)) {
                state.SkipWithError("BO_SYNC failed");
                break;
            }
        }
        // What the driver counted as cleaned per call: the whole BO.
        state.counters["synced_MiB"] =
            benchmark::Counter(static_cast<double>(d.ptdev->cache_sync.bytes.load() - synced) / (1 << 20),
                               benchmark::Counter::kAvgIterations);
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_BoSync64MiB)->ArgName("type")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
