// drm_gpuvm benchmarks (drm/drm_gpuvm.cpp, drm/drm_gpuvm_sm.cpp), release build.
//
// One VM_BIND operation per iteration, the way panthor runs it (testkit/gpuvm_harness.h):
// prepare (allocate the VAs a step may need, top up the index node reserve, obtain the vm_bo),
// sm_map / sm_unmap whose steps update the tree and the BO lists, cleanup (free the returned
// VAs, deferred vm_bo cleanup).
//  - BM_GpuvmMapUnmap/N: N existing 1-page mappings (with 1-page gaps); iterations alternate a
//    map into a gap and the unmap of it, cycling over the gaps so the tree is walked at random
//    depths. ns_per_op is the per-operation cost; compare N = 1k, 10k, 100k for growth.
//  - BM_GpuvmSplit: a 1-page map of another BO in the middle of a 16-page mapping (one REMAP
//    with prev and next plus one MAP); the inverse (unmap + re-map of the whole range) runs
//    with the timer paused.
#include <benchmark/benchmark.h>

#include <memory>

#include "kernel_shim/runtime.h"
#include "testkit/gpuvm_harness.h"

using namespace gpuvm_test;
using namespace kshim;

namespace {

std::unique_ptr<Runtime> real_runtime() {
    return std::make_unique<Runtime>(RuntimeOptions{.mode = Mode::Real});
}

void BM_GpuvmMapUnmap(benchmark::State& state) {
    auto rt = real_runtime();
    const u64 n = static_cast<u64>(state.range(0));
    drm_gem_object* bo = new_bo(16 * kPage);
    {
        TestVm vm;
        for (u64 i = 0; i < n; i++)
            if (vm.map(2 * i * kPage, kPage, bo, 0))
                state.SkipWithError("setup map failed");
        // Gaps visited in a scattered order (a multiplicative walk over the gap indices).
        u64 gap = 0;
        bool mapped = false;
        for (auto _ : state) {
            const u64 addr = (2 * gap + 1) * kPage;
            int ret = mapped ? vm.unmap(addr, kPage) : vm.map(addr, kPage, bo, kPage);
            if (ret)
                state.SkipWithError("bind failed");
            if (mapped)
                gap = (gap + 7919) % n;
            mapped = !mapped;
        }
        if (mapped)
            vm.unmap((2 * gap + 1) * kPage, kPage);
        state.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
        vm.unmap_all();
    }
    drm_gem_object_put(bo);
}
BENCHMARK(BM_GpuvmMapUnmap)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kNanosecond);

void BM_GpuvmSplit(benchmark::State& state) {
    auto rt = real_runtime();
    drm_gem_object* a = new_bo(16 * kPage);
    drm_gem_object* b = new_bo(16 * kPage);
    {
        TestVm vm;
        // A populated VM around the range we split.
        for (u64 i = 0; i < 1000; i++)
            vm.map((1 << 20) + 2 * i * kPage, kPage, a, 0);
        const u64 base = 0x100 * kPage;
        vm.map(base, 16 * kPage, a, 0);
        for (auto _ : state) {
            if (vm.map(base + 7 * kPage, kPage, b, 0))
                state.SkipWithError("split failed");
            state.PauseTiming();
            vm.unmap(base, 16 * kPage);
            vm.map(base, 16 * kPage, a, 0);
            state.ResumeTiming();
        }
        state.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
        vm.unmap_all();
    }
    drm_gem_object_put(a);
    drm_gem_object_put(b);
}
BENCHMARK(BM_GpuvmSplit)->Unit(benchmark::kNanosecond);

}  // namespace

BENCHMARK_MAIN();
