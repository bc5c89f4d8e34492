// drm_syncobj through the ioctl entry point: signal + wait on already-signalled
// syncobjs (1 and 64 handles), and QUERY on a 1,000-point timeline. Real mode, release preset.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "drm/drm_ioctl.h"
#include "drm/drm_syncobj.h"
#include "drm/uaccess.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/slab.h"

using namespace kshim;
using namespace drm::uapi;

namespace {

const drm::DriverDesc bench_driver = {
    .name = "upanthor-bench",
    .desc = "syncobj bench",
    .major = 1,
    .driver_features = drm::DRIVER_GEM | drm::DRIVER_RENDER | drm::DRIVER_SYNCOBJ | drm::DRIVER_SYNCOBJ_TIMELINE,
};

struct World {
    std::unique_ptr<Runtime> rt = std::make_unique<Runtime>(RuntimeOptions{.mode = Mode::Real});
    drm::drm_device dev{bench_driver};
    drm::drm_file* file = nullptr;
    World() { drm_open(&dev, &file); }
    ~World() { drm::drm_release(file); }

    template <class T>
    int call(unsigned cmd, T* args) {
        drm::UserRange r(*args);
        return drm::ioctl(file, cmd, args);
    }
    u32 create() {
        uapi_create c{0, 0};
        call(DRM_IOCTL_SYNCOBJ_CREATE, &c);
        return c.handle;
    }
    using uapi_create = drm::uapi::drm_syncobj_create;
};

// SYNCOBJ_SIGNAL on N handles, then SYNCOBJ_WAIT (WAIT_ALL, poll) on the same, now signalled, N.
void BM_SyncobjSignalWait(benchmark::State& state) {
    World w;
    const u32 n = static_cast<u32>(state.range(0));
    std::vector<u32> handles(n);
    for (auto& h : handles)
        h = w.create();
    drm::UserRange r(handles.data(), handles.size() * sizeof(u32));
    drm_syncobj_array sig{drm::user_ptr(handles.data()), n, 0};
    drm_syncobj_wait wait{};
    wait.handles = drm::user_ptr(handles.data());
    wait.count_handles = n;
    wait.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    for (auto _ : state) {
        if (w.call(DRM_IOCTL_SYNCOBJ_SIGNAL, &sig))
            state.SkipWithError("signal failed");
        wait.timeout_nsec = 0;
        if (w.call(DRM_IOCTL_SYNCOBJ_WAIT, &wait))
            state.SkipWithError("wait failed");
    }
    state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_SyncobjSignalWait)->Arg(1)->Arg(64);

// Only the wait: N already-signalled syncobjs.
void BM_SyncobjWaitSignalled(benchmark::State& state) {
    World w;
    const u32 n = static_cast<u32>(state.range(0));
    std::vector<u32> handles(n);
    for (auto& h : handles)
        h = w.create();
    drm::UserRange r(handles.data(), handles.size() * sizeof(u32));
    drm_syncobj_array sig{drm::user_ptr(handles.data()), n, 0};
    w.call(DRM_IOCTL_SYNCOBJ_SIGNAL, &sig);
    drm_syncobj_wait wait{};
    wait.handles = drm::user_ptr(handles.data());
    wait.count_handles = n;
    wait.flags = DRM_SYNCOBJ_WAIT_FLAGS_WAIT_ALL;
    for (auto _ : state) {
        if (w.call(DRM_IOCTL_SYNCOBJ_WAIT, &wait))
            state.SkipWithError("wait failed");
    }
    state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_SyncobjWaitSignalled)->Arg(1)->Arg(64);

struct PendingFence {
    dma_fence base;
    SpinLock lock{"bench_fence"};
};
const char* bench_name(dma_fence*) {
    return "bench";
}
const dma_fence_ops pending_ops = {
    .use_64bit_seqno = true,
    .get_driver_name = bench_name,
    .get_timeline_name = bench_name,
    .release = [](dma_fence* f) { kdelete(container_of(f, PendingFence, base)); },
};

// QUERY on a timeline of N points. range(1) == 0: every point still pending except the first,
// so the query walks all N links (the worst case); 1: every point signalled (the walk collapses
// the chain on the first query, as it does for a live timeline).
void BM_TimelineQuery(benchmark::State& state) {
    World w;
    const u64 n = static_cast<u64>(state.range(0));
    const bool signalled = state.range(1);
    u32 h = w.create();
    drm::drm_syncobj* s = drm::drm_syncobj_find(w.file, h);
    std::vector<dma_fence*> fences;
    for (u64 p = 1; p <= n; p++) {
        auto* f = knew<PendingFence>(GFP_KERNEL);
        dma_fence_init(&f->base, &pending_ops, &f->lock, dma_fence_context_alloc(1), p);
        if (signalled || p == 1)
            dma_fence_signal(&f->base);
        drm::drm_syncobj_add_point(s, dma_fence_chain_alloc(), &f->base, p);
        fences.push_back(&f->base);
    }
    u64 point = 0;
    drm::UserRange rh(&h, sizeof h), rp(&point, sizeof point);
    drm_syncobj_timeline_array q{drm::user_ptr(&h), drm::user_ptr(&point), 1, 0};
    for (auto _ : state) {
        if (w.call(DRM_IOCTL_SYNCOBJ_QUERY, &q))
            state.SkipWithError("query failed");
        benchmark::DoNotOptimize(point);
    }
    if (point != (signalled ? n : 1))
        state.SkipWithError("wrong point");
    for (dma_fence* f : fences) {
        if (!dma_fence_is_signaled(f))
            dma_fence_signal(f);
        dma_fence_put(f);
    }
    drm::drm_syncobj_put(s);
    w.rt->advance_until_idle(NSEC_PER_SEC);
}
BENCHMARK(BM_TimelineQuery)->Args({1000, 0})->Args({1000, 1})->ArgNames({"points", "signalled"});

}  // namespace

BENCHMARK_MAIN();
