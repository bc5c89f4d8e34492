// The CSF scheduler's benchmarks, release preset.
//
//   BM_GroupSubmitEmpty    simulated mode. One iteration = GROUP_SUBMIT of a one-instruction
//                          stream (a NOP) to a group already on a CSG slot, then waiting for its
//                          syncobj: the ioctl, drm_sched, run_job, the ring and doorbell, the
//                          mock executing the kernel's job sequence, the SYNC_UPDATE IRQ, fence
//                          signalling and the idle tick that follows. CPU per job, mock included.
//                          Goal <= 5 us. /split:0 measures without the CPU split (the runtime's
//                          default: total_us only); /split:1 turns it on (kernel_shim/cputime.h,
//                          a cycle-counter read per task switch and per MMIO access) and adds
//                          driver_us = kernel tasks, hw_us = the mock's events and MMIO handling,
//                          body_us = the ioctls in the caller.
//   BM_SchedTick/N         simulated mode. N groups, each with a job that keeps it runnable, on
//                          the mock's 8 CSG slots: every full tick rotates them (8 suspended, 8
//                          resumed). One iteration = 10 ms of virtual time = one tick. Counters:
//                          driver_us = CPU of the kernel tasks per tick (the tick work plus the
//                          IRQ and FW-event work it causes), total_us = with the mock and the
//                          runtime, rotations = CSG suspends per tick. Goals: driver <= 20 us,
//                          N = 1024 <= 1.5x N = 16.
//   BM_SchedTickNoop       simulated mode. 8 runnable groups on 8 slots; one iteration = a forced
//                          tick that changes nothing (STATUS_UPDATE round trip, same picks).
//                          Goal: driver <= 2 us.
//   BM_SubmitToRunLatency  real mode (threads, the monotonic clock). One iteration = the
//                          GROUP_SUBMIT ioctl of a NOP stream to its completion fence, wall time.
//                          Goal <= 50 us median, <= 200 us p99. Counters: p50_us, p99_us,
//                          max_us of the iterations' latencies. one_cpu:0 = the threads go where
//                          the host puts them; one_cpu:1 = every thread on one CPU, so that no
//                          hop of the chain wakes a thread on another (possibly halted) vCPU.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "bench/cpu_pinning.h"
#include "bench/panthor_bench_device.h"
#include "drm/drm_syncobj.h"
#include "drm/uaccess.h"
#include "hw/csf/cs_isa.h"
#include "hw/csf/mock_fw_formats.h"
#include "kernel_shim/cputime.h"
#include "kernel_shim/runtime.h"
#include "panthor/panthor_sched.h"

using namespace drm::uapi;
using kshim::u32;
using kshim::u64;
using kshim::u8;

namespace {

namespace cs = panthor::cs;

constexpr u64 kVa = 0x1000000;
constexpr u64 kBoSize = 1ull << 20;
constexpr u64 kTickNs = 10 * kshim::NSEC_PER_MSEC;

// One client: a file with a VM and a BO mapped at kVa holding the streams, and its groups.
struct Client {
    drm::drm_file* file = nullptr;
    u32 vm = 0, bo = 0;
    u8* cpu = nullptr;
    drm::VmArea* map = nullptr;
    std::vector<u32> groups;

    bool init(upanthor_bench::Device& d, drm::drm_file* f) {
        file = f;
        drm_panthor_vm_create vc{};
        if (drm::ioctl(file, DRM_IOCTL_PANTHOR_VM_CREATE, &vc))
            return false;
        vm = vc.id;
        drm_panthor_bo_create bc{};
        bc.size = kBoSize;
        if (drm::ioctl(file, DRM_IOCTL_PANTHOR_BO_CREATE, &bc))
            return false;
        bo = bc.handle;
        drm_panthor_vm_bind_op op{};
        op.flags = DRM_PANTHOR_VM_BIND_OP_TYPE_MAP;
        op.bo_handle = bo;
        op.va = kVa;
        op.size = kBoSize;
        drm_panthor_vm_bind b{};
        b.vm_id = vm;
        b.ops = DRM_PANTHOR_OBJ_ARRAY(1, &op);
        if (drm::ioctl(file, DRM_IOCTL_PANTHOR_VM_BIND, &b))
            return false;
        drm_panthor_bo_mmap_offset mo{};
        mo.handle = bo;
        if (drm::ioctl(file, DRM_IOCTL_PANTHOR_BO_MMAP_OFFSET, &mo))
            return false;
        if (drm::drm_mmap(file, mo.offset, kBoSize, PROT_READ | PROT_WRITE, MAP_SHARED, &map))
            return false;
        cpu = static_cast<u8*>(map->addr);
        (void)d;
        return true;
    }
    void fini() {
        if (map)
            drm::drm_munmap(map);
        map = nullptr;
    }
    u64 put(u64 off, const void* p, size_t n) {
        std::memcpy(cpu + off, p, n);
        return kVa + off;
    }
    int group_create(const panthor::panthor_device* ptdev, u32 ringbuf_size = 4096) {
        drm_panthor_queue_create q{};
        q.priority = 1;
        q.ringbuf_size = ringbuf_size;
        drm_panthor_group_create a{};
        a.queues = DRM_PANTHOR_OBJ_ARRAY(1, &q);
        a.priority = PANTHOR_GROUP_PRIORITY_MEDIUM;
        a.compute_core_mask = a.fragment_core_mask = ptdev->gpu_info.shader_present;
        a.tiler_core_mask = ptdev->gpu_info.tiler_present;
        a.max_compute_cores = a.max_fragment_cores = static_cast<kshim::u8>(__builtin_popcountll(a.compute_core_mask));
        a.max_tiler_cores = 1;
        a.vm_id = vm;
        const int ret = drm::ioctl(file, DRM_IOCTL_PANTHOR_GROUP_CREATE, &a);
        if (!ret)
            groups.push_back(a.group_handle);
        return ret;
    }
    int submit(u32 group, u64 stream, u32 size, u32 signal_syncobj) {
        drm_panthor_sync_op sig{};
        sig.flags = DRM_PANTHOR_SYNC_OP_SIGNAL | DRM_PANTHOR_SYNC_OP_HANDLE_TYPE_SYNCOBJ;
        sig.handle = signal_syncobj;
        drm_panthor_queue_submit qs{};
        qs.stream_addr = stream;
        qs.stream_size = size;
        if (signal_syncobj)
            qs.syncs = DRM_PANTHOR_OBJ_ARRAY(1, &sig);
        drm_panthor_group_submit gs{};
        gs.group_handle = group;
        gs.queue_submits = DRM_PANTHOR_OBJ_ARRAY(1, &qs);
        return drm::ioctl(file, DRM_IOCTL_PANTHOR_GROUP_SUBMIT, &gs);
    }
    u32 syncobj_create() {
        drm_syncobj_create c{};
        return drm::ioctl(file, DRM_IOCTL_SYNCOBJ_CREATE, &c) ? 0 : c.handle;
    }
    int syncobj_wait(u32 handle, kshim::ktime_t timeout) {
        drm_syncobj_wait w{};
        w.handles = reinterpret_cast<u64>(&handle);
        w.count_handles = 1;
        w.timeout_nsec = kshim::ktime_get() + timeout;
        return drm::ioctl(file, DRM_IOCTL_SYNCOBJ_WAIT, &w);
    }
};

// A simulated runtime that splits its CPU time by account (off by default: it costs).
kshim::RuntimeOptions split_options() {
    kshim::RuntimeOptions o;
    o.cputime_split = true;
    return o;
}

void set_cpu_counters(benchmark::State& state, const kshim::CpuTimes& a, const kshim::CpuTimes& b, double per) {
    auto us = [&](kshim::CpuAccount acc) { return static_cast<double>(b[acc] - a[acc]) / 1000.0 / per; };
    state.counters["driver_us"] = us(kshim::CpuAccount::Kernel);
    state.counters["hw_us"] = us(kshim::CpuAccount::Hardware);
    state.counters["body_us"] = us(kshim::CpuAccount::Body);
    state.counters["total_us"] = static_cast<double>(b.total() - a.total()) / 1000.0 / per;
}

// Submits a NOP stream and waits for it, `n` times; false on an error.
bool submit_and_wait(Client& c, u32 group, u64 stream, u32 syncobj, int n) {
    for (int i = 0; i < n; i++) {
        if (c.submit(group, stream, 8, syncobj) || c.syncobj_wait(syncobj, kshim::NSEC_PER_SEC))
            return false;
    }
    return true;
}

void BM_GroupSubmitEmpty(benchmark::State& state) {
    const bool split = state.range(0) != 0;
    kshim::RuntimeOptions o;
    o.cputime_split = split;
    kshim::Runtime rt{o};
    drm::uaccess_set_trust_all(true);
    {
        upanthor_bench::Device d;
        Client c;
        if (!d.up() || !c.init(d, d.file) || c.group_create(d.ptdev, 65536))
            return state.SkipWithError("setup failed");
        const u64 nop = 0;
        const u64 stream = c.put(0, &nop, sizeof(nop));
        const u32 syncobj = c.syncobj_create();
        // The first job brings the group onto a slot; later ones find it there.
        if (!submit_and_wait(c, c.groups[0], stream, syncobj, 2))
            return state.SkipWithError("warm-up failed");
        const kshim::CpuTimes before = kshim::cputime_all();
        const u64 cpu0 = kshim::process_cputime_ns();
        const panthor::panthor_sched_stats s0 = panthor::panthor_sched_get_stats(d.ptdev);
        const u64 switches = rt.context_switches();
        for (auto _ : state) {
            if (!submit_and_wait(c, c.groups[0], stream, syncobj, 1)) {
                state.SkipWithError("submit failed");
                break;
            }
        }
        const double n = static_cast<double>(state.iterations());
        if (split)
            set_cpu_counters(state, before, kshim::cputime_all(), n);
        else
            state.counters["total_us"] = static_cast<double>(kshim::process_cputime_ns() - cpu0) / 1000.0 / n;
        const panthor::panthor_sched_stats s1 = panthor::panthor_sched_get_stats(d.ptdev);
        // Each job's completion idles the group (CSG IDLE -> a tick), and the next submit to the
        // idle group resumes the tick: upstream's behaviour, part of what a job costs.
        state.counters["ticks_per_job"] =
            static_cast<double>(s1.ticks - s0.ticks) / static_cast<double>(state.iterations());
        state.counters["switches_per_job"] =
            static_cast<double>(rt.context_switches() - switches) / static_cast<double>(state.iterations());
        c.fini();
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_GroupSubmitEmpty)->ArgName("split")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

// N groups spread over files of 128 (the per-file limit), each running a job far longer than the
// benchmark, so every group stays runnable and the ticks keep rotating.
struct RotationRig {
    // 1024 groups' suspend buffers and queue pages must fit the MCU's 64 MiB shared window: a
    // small protected-mode suspend buffer (never used here) makes room.
    static mock_hw::GpuConfig config() {
        mock_hw::GpuConfig c;
        c.mcu.protm_suspend_size = 0x1000;
        return c;
    }
    upanthor_bench::Device d{config()};
    std::vector<Client> clients;
    std::vector<drm::drm_file*> files;

    bool setup(u32 n) {
        if (!d.up())
            return false;
        const u32 nfiles = (n + 127) / 128;
        clients.resize(nfiles);
        for (u32 f = 0; f < nfiles; f++) {
            drm::drm_file* file = f == 0 ? d.file : nullptr;
            if (!file) {
                if (drm::drm_open(&d.ptdev->base, &file))
                    return false;
                files.push_back(file);
            }
            if (!clients[f].init(d, file))
                return false;
            mock_hw::MockShader sh;
            sh.kind = mock_hw::MockShader::Run;
            sh.duration_ns = 3600ull * kshim::NSEC_PER_SEC;
            const u64 spd = clients[f].put(4096, &sh, sizeof(sh));
            const u64 instrs[] = {cs::move48(16, spd), cs::run_compute(1)};
            const u64 stream = clients[f].put(0, instrs, sizeof(instrs));
            for (u32 g = f * 128; g < std::min(n, (f + 1) * 128); g++) {
                if (clients[f].group_create(d.ptdev))
                    return false;
                if (clients[f].submit(clients[f].groups.back(), stream, sizeof(instrs), 0))
                    return false;
            }
        }
        return true;
    }
    void teardown() {
        for (Client& c : clients)
            c.fini();
        for (drm::drm_file* f : files)
            drm::drm_release(f);
        files.clear();
    }
};

void BM_SchedTick(benchmark::State& state) {
    kshim::Runtime rt{split_options()};
    drm::uaccess_set_trust_all(true);
    {
        RotationRig rig;
        if (!rig.setup(static_cast<u32>(state.range(0))))
            return state.SkipWithError("setup failed");
        // Everything submitted and the rotation going.
        rt.advance(3 * kTickNs);
        const panthor::panthor_sched_stats s0 = panthor::panthor_sched_get_stats(rig.d.ptdev);
        const kshim::CpuTimes before = kshim::cputime_all();
        const kshim::ktime_t t0 = kshim::ktime_get();
        for (auto _ : state)
            rt.advance(kTickNs);
        state.counters["virt_ms_per_iter"] =
            static_cast<double>(kshim::ktime_get() - t0) / 1e6 / static_cast<double>(state.iterations());
        const kshim::CpuTimes after = kshim::cputime_all();
        const panthor::panthor_sched_stats s1 = panthor::panthor_sched_get_stats(rig.d.ptdev);
        const double ticks = static_cast<double>(s1.ticks - s0.ticks);
        if (ticks < 0.7 * static_cast<double>(state.iterations()) || !s1.ticking) {
            const std::string msg = "the tick did not rotate: ticks " + std::to_string(ticks) + " ticking " +
                                    std::to_string(s1.ticking) + " used " + std::to_string(s1.used_csg_slots);
            state.SkipWithError(msg.c_str());
        }
        set_cpu_counters(state, before, after, ticks);
        state.counters["ticks_per_iter"] = ticks / static_cast<double>(state.iterations());
        state.counters["rotations"] = static_cast<double>(s1.csg_suspends - s0.csg_suspends) / ticks;
        rig.teardown();
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
// Iterations are capped: a group's jobs time out after 5 s on a slot.
BENCHMARK(BM_SchedTick)->Arg(16)->Arg(64)->Arg(256)->Arg(1024)->Iterations(200)->Unit(benchmark::kMicrosecond);

void BM_SchedTickNoop(benchmark::State& state) {
    kshim::Runtime rt{split_options()};
    drm::uaccess_set_trust_all(true);
    {
        RotationRig rig;
        if (!rig.setup(8))
            return state.SkipWithError("setup failed");
        rt.advance(3 * kTickNs);
        const panthor::panthor_sched_stats s0 = panthor::panthor_sched_get_stats(rig.d.ptdev);
        const kshim::CpuTimes before = kshim::cputime_all();
        for (auto _ : state) {
            // What an MMU fault report does: an immediate tick.
            panthor::panthor_sched_report_mmu_fault(rig.d.ptdev);
            rt.advance(kshim::NSEC_PER_USEC * 100);
        }
        const kshim::CpuTimes after = kshim::cputime_all();
        const panthor::panthor_sched_stats s1 = panthor::panthor_sched_get_stats(rig.d.ptdev);
        const double ticks = static_cast<double>(s1.ticks - s0.ticks);
        if (ticks < static_cast<double>(state.iterations()) || s1.csg_suspends != s0.csg_suspends)
            state.SkipWithError("the forced tick changed the slots");
        set_cpu_counters(state, before, after, ticks);
        rig.teardown();
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_SchedTickNoop)->Iterations(2000)->Unit(benchmark::kMicrosecond);

void BM_SubmitToRunLatency(benchmark::State& state) {
    // Before the runtime exists, so that its threads inherit the placement.
    upanthor_bench::SavedAffinity saved;
    if (state.range(0) != 0)
        upanthor_bench::pin_this_thread(upanthor_bench::allowed_cpus().front());
    kshim::RuntimeOptions o;
    o.mode = kshim::Mode::Real;
    kshim::Runtime rt{o};
    drm::uaccess_set_trust_all(true);
    {
        upanthor_bench::Device d;
        Client c;
        if (!d.up() || !c.init(d, d.file) || c.group_create(d.ptdev, 65536))
            return state.SkipWithError("setup failed");
        const u64 nop = 0;
        const u64 stream = c.put(0, &nop, sizeof(nop));
        const u32 syncobj = c.syncobj_create();
        if (!submit_and_wait(c, c.groups[0], stream, syncobj, 2))
            return state.SkipWithError("warm-up failed");
        // Each iteration's latency on the host clock, for the percentiles (the mean hides the tail).
        std::vector<double> us;
        us.reserve(1 << 16);
        for (auto _ : state) {
            const auto t0 = std::chrono::steady_clock::now();
            if (!submit_and_wait(c, c.groups[0], stream, syncobj, 1)) {
                state.SkipWithError("submit failed");
                break;
            }
            us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
        }
        if (!us.empty()) {
            std::sort(us.begin(), us.end());
            const auto pct = [&](double p) { return us[static_cast<size_t>(p * static_cast<double>(us.size() - 1))]; };
            state.counters["p50_us"] = pct(0.50);
            state.counters["p99_us"] = pct(0.99);
            state.counters["max_us"] = us.back();
        }
        c.fini();
    }
    rt.advance_until_idle();
    drm::uaccess_set_trust_all(false);
}
BENCHMARK(BM_SubmitToRunLatency)->ArgName("one_cpu")->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
