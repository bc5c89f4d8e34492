// A multi-threaded client of the preload library: one process, one render-node
// descriptor, one VM, and several client threads that each create a group and a BO, then submit
// stores and wait for them on syncobjs, all at once. Built without any kernel code: the driver is
// the preload library's, on its real-thread runtime, so under the tsan preset ThreadSanitizer sees
// the whole ioctl path (file, VM, scheduler, syncobjs, fences) driven concurrently.
//
// The client threads are plain POSIX threads, as an application's are (this is userspace, not
// kernel code on the shim). A PanthorClient is shared between them once its flush-ID page is
// mapped (latest_flush_id() maps it on first use), as panvk shares its kmod device.
#include <gtest/gtest.h>
#include <pthread.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "umd/cs_builder.h"
#include "umd/panthor_client.h"
#include "umd/real_fd_backend.h"

namespace umd {
namespace {

constexpr int kThreads = 4;
constexpr int kSubmits = 16;
constexpr u64 kStreamSize = 0x1000;
constexpr u64 kBoSize = (kSubmits + 1) * kStreamSize;  // one stream per submit, then the results
constexpr u64 kVaBase = 0x10000000;
constexpr s64 kTimeoutNs = 10'000'000'000;  // wall time: a loaded sanitizer run is slow

u64 value_of(int thread, int submit) {
    return 0x5EED000000000000ull | (u64(thread) << 32) | u64(submit);
}

struct Worker {
    PanthorClient* client = nullptr;
    u32 vm = 0;
    int index = 0;
    pthread_barrier_t* start = nullptr;
    // Filled by the thread.
    int failed_at = -1;  // the submit that went wrong, -1 if none
    int error = 0;       // its errno (0: a wrong value was read back)
    u64 last_point = 0;
};

// One thread's life: a group and a BO of its own on the shared VM, then kSubmits stores, each
// waited for through both a binary syncobj and the point it signals on the thread's timeline.
void* worker_main(void* arg) {
    auto* w = static_cast<Worker*>(arg);
    PanthorClient& c = *w->client;
    auto fail = [w](int at, int e) {
        w->failed_at = at;
        w->error = e;
        return nullptr;
    };
    pthread_barrier_wait(w->start);

    const u64 va = kVaBase + static_cast<u64>(w->index) * 0x100000;
    Result<Bo> bo = c.bo_create(kBoSize);
    if (!bo)
        return fail(0, bo.error());
    Result<void*> cpu = c.bo_mmap(bo->handle, bo->size);
    if (!cpu)
        return fail(0, cpu.error());
    auto* mem = static_cast<u8*>(*cpu);
    if (Status s = c.vm_map(w->vm, bo->handle, va, bo->size); !s)
        return fail(0, s.error());
    Result<u32> group = c.group_create({.vm_id = w->vm, .queues = {{}}});
    if (!group)
        return fail(0, group.error());
    Result<u32> timeline = c.syncobj_create();
    if (!timeline)
        return fail(0, timeline.error());

    const u64 results_va = va + kSubmits * kStreamSize;
    for (int i = 0; i < kSubmits; i++) {
        cs::Builder b(c.cs_config(), mem + i * kStreamSize, va + i * kStreamSize, kStreamSize);
        b.move64(b.reg64(0), results_va + static_cast<u64>(i) * 8);
        b.move64(b.reg64(2), value_of(w->index, i));
        b.store64(b.reg64(2), b.reg64(0));
        if (Status s = b.finish(); !s)
            return fail(i, s.error());
        Result<u32> done = c.syncobj_create();
        if (!done)
            return fail(i, done.error());
        const u64 point = static_cast<u64>(i) + 1;
        Result<u32> flush = c.latest_flush_id();
        if (!flush)
            return fail(i, flush.error());
        if (Status s = c.group_submit(
                *group, QueueSubmit::of(0, b, *flush, {sync_signal(*done), timeline_signal(*timeline, point)}));
            !s)
            return fail(i, s.error());
        if (Result<u32> r = c.syncobj_wait(*done, c.deadline_after(kTimeoutNs)); !r)
            return fail(i, r.error());
        if (Result<u32> r = c.syncobj_timeline_wait({&*timeline, 1}, {&point, 1}, c.deadline_after(kTimeoutNs)); !r)
            return fail(i, r.error());
        u64 got;
        std::memcpy(&got, mem + kSubmits * kStreamSize + static_cast<u64>(i) * 8, sizeof(got));
        if (got != value_of(w->index, i))
            return fail(i, 0);
        if (Status s = c.syncobj_destroy(*done); !s)
            return fail(i, s.error());
    }
    Result<std::vector<u64>> last = c.syncobj_query({&*timeline, 1});
    if (!last)
        return fail(kSubmits, last.error());
    w->last_point = last->at(0);

    if (Result<GroupState> st = c.group_get_state(*group); !st || st->state != 0)
        return fail(kSubmits, st ? -EIO : st.error());
    Status s = c.group_destroy(*group);
    if (s)
        s = c.syncobj_destroy(*timeline);
    if (s)
        s = c.munmap(mem, bo->size);
    if (s)
        s = c.vm_unmap(w->vm, va, bo->size);
    if (s)
        s = c.bo_destroy(bo->handle);
    if (!s)
        return fail(kSubmits, s.error());
    return nullptr;
}

TEST(MtClient, ThreadsSubmittingOnOneFileEachReadBackTheirOwnStores) {
    Result<std::unique_ptr<RealFdBackend>> be = RealFdBackend::open();
    ASSERT_TRUE(be.ok()) << "open(" << RealFdBackend::kRenderNode << "): " << std::strerror(-be.error())
                         << " (this test runs under LD_PRELOAD=libupanthor_preload.so)";
    Result<std::unique_ptr<PanthorClient>> client = PanthorClient::open(**be);
    ASSERT_TRUE(client.ok()) << client.error();
    PanthorClient& c = **client;
    ASSERT_TRUE(c.latest_flush_id().ok());  // maps the flush page before the threads share c
    Result<VmInfo> vm = c.vm_create();
    ASSERT_TRUE(vm.ok()) << vm.error();

    pthread_barrier_t start;
    ASSERT_EQ(pthread_barrier_init(&start, nullptr, kThreads), 0);
    std::vector<Worker> workers(kThreads);
    std::vector<pthread_t> threads(kThreads);
    for (int t = 0; t < kThreads; t++) {
        workers[t] = {.client = &c, .vm = vm->id, .index = t, .start = &start};
        ASSERT_EQ(pthread_create(&threads[t], nullptr, worker_main, &workers[t]), 0);
    }
    for (pthread_t& t : threads)
        pthread_join(t, nullptr);
    pthread_barrier_destroy(&start);

    for (const Worker& w : workers) {
        EXPECT_EQ(w.failed_at, -1) << "thread " << w.index << " failed at submit " << w.failed_at << ": "
                                   << (w.error ? std::strerror(-w.error) : "wrong value read back");
        if (w.failed_at == -1) {
            EXPECT_EQ(w.last_point, static_cast<u64>(kSubmits)) << "thread " << w.index;
        }
    }
    EXPECT_TRUE(c.vm_destroy(vm->id).ok());
}

// Several descriptors of the node, one per thread: independent files served concurrently, each
// with its own VM; a handle of one file means nothing in another.
TEST(MtClient, ThreadsWithAFileEachWorkIndependently) {
    struct PerThread {
        std::unique_ptr<RealFdBackend> be;
        std::unique_ptr<PanthorClient> client;
        Worker w;
    };
    std::vector<PerThread> per(kThreads);
    pthread_barrier_t start;
    ASSERT_EQ(pthread_barrier_init(&start, nullptr, kThreads), 0);
    for (int t = 0; t < kThreads; t++) {
        Result<std::unique_ptr<RealFdBackend>> be = RealFdBackend::open();
        ASSERT_TRUE(be.ok()) << std::strerror(-be.error());
        per[t].be = std::move(*be);
        Result<std::unique_ptr<PanthorClient>> client = PanthorClient::open(*per[t].be);
        ASSERT_TRUE(client.ok()) << client.error();
        per[t].client = std::move(*client);
        ASSERT_TRUE(per[t].client->latest_flush_id().ok());
        Result<VmInfo> vm = per[t].client->vm_create();
        ASSERT_TRUE(vm.ok()) << vm.error();
        per[t].w = {.client = per[t].client.get(), .vm = vm->id, .index = t, .start = &start};
    }
    // Every file got VM id 1: ids are per file.
    for (const PerThread& p : per)
        EXPECT_EQ(p.w.vm, per[0].w.vm);
    std::vector<pthread_t> threads(kThreads);
    for (int t = 0; t < kThreads; t++)
        ASSERT_EQ(pthread_create(&threads[t], nullptr, worker_main, &per[t].w), 0);
    for (pthread_t& t : threads)
        pthread_join(t, nullptr);
    pthread_barrier_destroy(&start);
    for (PerThread& p : per) {
        EXPECT_EQ(p.w.failed_at, -1) << "thread " << p.w.index << " failed at submit " << p.w.failed_at << ": "
                                     << (p.w.error ? std::strerror(-p.w.error) : "wrong value read back");
        EXPECT_TRUE(p.client->vm_destroy(p.w.vm).ok());
    }
}

}  // namespace
}  // namespace umd
