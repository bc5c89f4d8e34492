// `upanthor run` (runner.h).
#include "tools/upanthor/runner.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "drm/drm_file.h"
#include "drm/syncobj.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "kernel_shim/runtime.h"
#include "kernel_shim/time.h"
#include "mock_hw/cs_formats.h"
#include "mock_hw/gpu.h"
#include "mock_hw/platform.h"
#include "panthor/panthor_device.h"
#include "panthor/panthor_drv.h"
#include "panthor/panthor_sched.h"
#include "tools/upanthor/cli.h"
#include "tools/upanthor/scenario.h"
#include "umd/cs_builder.h"
#include "umd/drm_file_backend.h"
#include "umd/panthor_client.h"

namespace upanthor {
namespace {

namespace sc = upanthor::scenario;
using namespace drm::uapi;
using u8 = std::uint8_t;
using u16 = std::uint16_t;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s64 = std::int64_t;

// Per VM, the runner's own BO: command streams, mock shader descriptors, progress objects.
constexpr u64 kRunnerVa = 0x10000000;
constexpr u64 kRunnerSize = 8ull << 20;
// Scenario BOs without a fixed `va` are placed from here up.
constexpr u64 kUserVa = 0x40000000;
// With duration_us = 0 the run still stops after this much virtual time.
constexpr s64 kMaxRunNs = 600 * kshim::NSEC_PER_SEC;

u64 align_up(u64 v, u64 a) { return (v + a - 1) & ~(a - 1); }

// The simulator's own speed (virtual vs. wall time); the driver never sees this clock.
double wall_seconds() { return static_cast<double>(kshim::host_monotonic_ns()) * 1e-9; }

const char* errno_name(int e) {
    switch (e < 0 ? -e : e) {
    case ECANCELED: return "ECANCELED";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EINVAL: return "EINVAL";
    case EIO: return "EIO";
    case ENOMEM: return "ENOMEM";
    case EFAULT: return "EFAULT";
    case ENODEV: return "ENODEV";
    case ENOENT: return "ENOENT";
    case EBUSY: return "EBUSY";
    case EAGAIN: return "EAGAIN";
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ENOSPC: return "ENOSPC";
    case E2BIG: return "E2BIG";
    case EOPNOTSUPP: return "EOPNOTSUPP";
    case EBADMSG: return "EBADMSG";
    case EPROTO: return "EPROTO";
    default: return "E?";
    }
}

std::string status_name(int st) {
    if (st == 1) return "signaled";
    if (st == 0) return "pending";
    return errno_name(st);
}

// One job instance: its done fence and when it was submitted / completed. `cb` comes first so
// the fence callback finds its Pending from the dma_fence_cb it is given.
struct Pending {
    kshim::dma_fence_cb cb;
    kshim::dma_fence* fence = nullptr;
    s64 submit_ns = 0;
    s64 done_ns = 0;
    bool done = false;
    bool cb_armed = false;
    int submit_error = 0;  // GROUP_SUBMIT failed: the job never ran
    size_t submission = 0;
    size_t group = 0;
    u32 group_inst = 0;
    u32* done_count = nullptr;
};

void on_job_done(kshim::dma_fence*, kshim::dma_fence_cb* cb) {
    auto* p = reinterpret_cast<Pending*>(cb);
    p->done_ns = kshim::ktime_get();
    p->done = true;
    p->cb_armed = false;
    ++*p->done_count;
}

struct ClientRt {
    drm::File* file = nullptr;
    std::unique_ptr<umd::DrmFileBackend> be;
    std::unique_ptr<umd::PanthorClient> c;
};

struct VmRt {
    size_t client = 0;
    u32 id = 0;
    umd::Bo bo;
    u8* cpu = nullptr;
    u64 used = 0;
    u64 next_va = kUserVa;
};

struct BoRt {
    umd::Bo bo;
    u8* cpu = nullptr;
    u64 va = 0;
};

struct GroupInst {
    u32 handle = 0;
    std::vector<u64> progress_va;  // per queue
};

struct GroupStats {
    u64 submitted = 0, completed = 0, failed = 0;
    std::vector<u64> latencies_us;
};

struct Failure {
    u32 line = 0;
    std::string what;
};

u64 percentile(const std::vector<u64>& sorted, unsigned pct) {
    if (sorted.empty()) return 0;
    return sorted[(sorted.size() - 1) * pct / 100];
}

class Runner {
public:
    Runner(const sc::Scenario& s, const RunOptions& o) : s_(s), opts_(o) {}

    // 0, or 1 with `setup_error_` set.
    int run();
    void report(std::FILE* out) const;
    void report_json(std::FILE* out) const;
    bool passed() const { return setup_error_.empty() && failures_.empty(); }
    const std::string& setup_error() const { return setup_error_; }
    u64 seed() const { return seed_; }

private:
    int setup(mock_hw::MockPlatform& plat);
    int submit_instance(size_t sub, u32 inst);
    // The stream of job `j` on (group g instance gi, queue q): its VA and size.
    int stream_for(size_t j, size_t g, u32 gi, size_t q, u64* va, u32* size);
    u8* vm_alloc(size_t vm, u64 size, u64* va);
    void check_expectations();
    void teardown();
    int fail_setup(const std::string& what, int err) {
        setup_error_ = what + ": " + errno_name(err) + " (" + std::to_string(err) + ")";
        return 1;
    }
    umd::PanthorClient& client_of_vm(size_t vm) { return *clients_[s_.vms[vm].client].c; }

    const sc::Scenario& s_;
    RunOptions opts_;
    u64 seed_ = 1;
    std::string setup_error_;
    panthor::panthor_device* ptdev_ = nullptr;
    std::vector<ClientRt> clients_;
    std::vector<VmRt> vms_;
    std::vector<BoRt> bos_;
    std::vector<umd::TilerHeap> heaps_;
    std::vector<std::vector<GroupInst>> groups_;
    std::vector<u32> syncobjs_;
    std::map<std::tuple<size_t, size_t, u32, size_t, bool>, std::pair<u64, u32>> streams_;
    std::vector<bool> heap_seeded_;
    std::vector<std::unique_ptr<Pending>> pending_;
    u32 done_count_ = 0;
    u32 total_ = 0;
    s64 t0_ = 0;
    s64 t_end_ = 0;
    double wall_ = 0;
    panthor::panthor_sched_stats stats_{};
    std::vector<GroupStats> gstats_;
    std::vector<Failure> failures_;
    u32 checked_ = 0;
};

u8* Runner::vm_alloc(size_t vm, u64 size, u64* va) {
    VmRt& v = vms_[vm];
    const u64 at = align_up(v.used, 64);
    if (at + size > v.bo.size)
        return nullptr;
    v.used = at + size;
    *va = kRunnerVa + at;
    return v.cpu + at;
}

int Runner::setup(mock_hw::MockPlatform& plat) {
    int ret = panthor::panthor_probe(plat.pdev());
    if (ret)
        return fail_setup("panthor_probe (is the mock firmware image built? target upanthor_firmware)", ret);
    ptdev_ = panthor::panthor_from_pdev(plat.pdev());

    for (const sc::Client& cl : s_.clients) {
        ClientRt& c = clients_.emplace_back();
        ret = drm::drm_open(&ptdev_->base, &c.file);
        if (ret)
            return fail_setup("drm_open for client '" + cl.name + "'", ret);
        static_cast<panthor::panthor_file*>(c.file->driver_priv)->cap_sys_nice = cl.cap_sys_nice;
        c.be = std::make_unique<umd::DrmFileBackend>(c.file);
        auto r = umd::PanthorClient::open(*c.be);
        if (!r.ok())
            return fail_setup("PanthorClient::open for client '" + cl.name + "'", r.error());
        c.c = std::move(*r);
    }
    for (const sc::Vm& vm : s_.vms) {
        umd::PanthorClient& c = *clients_[vm.client].c;
        VmRt& v = vms_.emplace_back();
        v.client = vm.client;
        auto id = c.vm_create();
        if (!id.ok())
            return fail_setup("VM_CREATE '" + vm.name + "'", id.error());
        v.id = id->id;
        auto bo = c.bo_create(kRunnerSize);
        if (!bo.ok())
            return fail_setup("runner BO for VM '" + vm.name + "'", bo.error());
        v.bo = *bo;
        auto cpu = c.bo_mmap(v.bo.handle, v.bo.size);
        if (!cpu.ok())
            return fail_setup("mmap of the runner BO", cpu.error());
        v.cpu = static_cast<u8*>(*cpu);
        std::memset(v.cpu, 0, v.bo.size);
        if (umd::Status st = c.vm_map(v.id, v.bo.handle, kRunnerVa, v.bo.size); !st)
            return fail_setup("VM_BIND of the runner BO", st.error());
    }
    for (const sc::Bo& b : s_.bos) {
        umd::PanthorClient& c = client_of_vm(b.vm);
        VmRt& v = vms_[b.vm];
        BoRt& r = bos_.emplace_back();
        auto bo = c.bo_create(b.size);
        if (!bo.ok())
            return fail_setup(s_.file + ":" + std::to_string(b.loc.line) + ": BO_CREATE '" + b.name + "'", bo.error());
        r.bo = *bo;
        auto cpu = c.bo_mmap(r.bo.handle, r.bo.size);
        if (!cpu.ok())
            return fail_setup("mmap of BO '" + b.name + "'", cpu.error());
        r.cpu = static_cast<u8*>(*cpu);
        const u32 word = b.pattern.value_or(0);
        for (u64 off = 0; off + 4 <= r.bo.size; off += 4)
            std::memcpy(r.cpu + off, &word, 4);
        for (const sc::BoValue& val : b.values)
            std::memcpy(r.cpu + val.offset, &val.value, 8);
        if (b.va) {
            r.va = *b.va;
        } else {
            r.va = v.next_va;
            v.next_va = align_up(v.next_va + r.bo.size, 0x10000);
        }
        (void)c.bo_set_label(r.bo.handle, b.name.c_str());
        if (umd::Status st = c.vm_map(v.id, r.bo.handle, r.va, r.bo.size); !st)
            return fail_setup(s_.file + ":" + std::to_string(b.loc.line) + ": VM_BIND of BO '" + b.name + "'", st.error());
    }
    for (const sc::TilerHeap& h : s_.heaps) {
        umd::TilerHeapDesc d;
        d.vm_id = vms_[h.vm].id;
        d.initial_chunk_count = h.initial_chunks;
        d.chunk_size = h.chunk_size;
        d.max_chunks = h.max_chunks;
        d.target_in_flight = h.target_in_flight;
        auto r = client_of_vm(h.vm).tiler_heap_create(d);
        if (!r.ok())
            return fail_setup(s_.file + ":" + std::to_string(h.loc.line) + ": TILER_HEAP_CREATE '" + h.name + "'", r.error());
        heaps_.push_back(*r);
        heap_seeded_.push_back(false);
    }
    for (const sc::Group& g : s_.groups) {
        umd::PanthorClient& c = client_of_vm(g.vm);
        auto& insts = groups_.emplace_back();
        umd::GroupDesc d;
        d.vm_id = vms_[g.vm].id;
        d.priority = static_cast<u8>(g.priority);
        for (const sc::Queue& q : g.queues)
            d.queues.push_back({.priority = q.priority, .ringbuf_size = q.ring_size});
        for (u32 i = 0; i < g.instances; i++) {
            GroupInst& gi = insts.emplace_back();
            auto h = c.group_create(d);
            if (!h.ok())
                return fail_setup(s_.file + ":" + std::to_string(g.loc.line) + ": GROUP_CREATE '" + g.name + "' instance " +
                                      std::to_string(i),
                                  h.error());
            gi.handle = *h;
            for (size_t q = 0; q < g.queues.size(); q++) {
                u64 va = 0;
                if (!vm_alloc(g.vm, 16, &va))
                    return fail_setup("runner BO full (progress objects)", -ENOSPC);
                gi.progress_va.push_back(va);
            }
        }
    }
    for (const sc::Syncobj& so : s_.syncobjs) {
        auto h = clients_[so.client].c->syncobj_create();
        if (!h.ok())
            return fail_setup("SYNCOBJ_CREATE '" + so.name + "'", h.error());
        syncobjs_.push_back(*h);
    }
    return 0;
}

int Runner::stream_for(size_t j, size_t g, u32 gi, size_t q, u64* va, u32* size) {
    const sc::Job& job = s_.jobs[j];
    // The first job to use a tiler heap seeds its free list; that stream is not reused.
    const bool seed_heap = job.kind == sc::JobKind::TilerFragment && !heap_seeded_[job.heap];
    if (seed_heap)
        heap_seeded_[job.heap] = true;
    const auto key = std::make_tuple(j, g, gi, q, seed_heap);
    if (auto it = streams_.find(key); it != streams_.end()) {
        *va = it->second.first;
        *size = it->second.second;
        return 0;
    }
    const size_t vm = s_.groups[g].vm;
    umd::PanthorClient& c = client_of_vm(vm);

    std::optional<mock_hw::MockShader> shader;
    switch (job.kind) {
    case sc::JobKind::Compute:
        shader = umd::cs::mock::run(job.duration_us * kshim::NSEC_PER_USEC);
        break;
    case sc::JobKind::Hang:
        shader = umd::cs::mock::hang();
        break;
    case sc::JobKind::FaultAccess: {
        mock_hw::MockShader m;
        m.kind = mock_hw::MockShader::Access;
        m.addr = job.address;
        shader = m;
        break;
    }
    case sc::JobKind::TilerFragment:
        shader = umd::cs::mock::run(0);
        shader->heap_chunks = job.chunks;
        break;
    default:
        break;
    }
    u64 shader_va = 0, frag_va = 0;
    if (shader) {
        u8* p = vm_alloc(vm, sizeof(mock_hw::MockShader), &shader_va);
        if (!p) {
            setup_error_ = "runner BO full (shaders)";
            return -ENOSPC;
        }
        std::memcpy(p, &*shader, sizeof(*shader));
    }
    if (job.kind == sc::JobKind::TilerFragment) {
        const mock_hw::MockShader frag = umd::cs::mock::run(0);
        u8* p = vm_alloc(vm, sizeof(frag), &frag_va);
        if (!p) {
            setup_error_ = "runner BO full (shaders)";
            return -ENOSPC;
        }
        std::memcpy(p, &frag, sizeof(frag));
    }
    const u64 cap = align_up((job.instrs.size() + 64) * 8, 64);
    u64 sva = 0;
    u8* mem = vm_alloc(vm, cap, &sva);
    if (!mem) {
        setup_error_ = "runner BO full (streams)";
        return -ENOSPC;
    }
    umd::cs::Builder b(c.cs_config(), mem, sva, cap);
    const umd::cs::Reg64 d0 = b.reg64(0), d2 = b.reg64(2);
    auto run_shader = [&] {
        b.set_spd(shader_va);
        b.set_sb_entry(3, 0);
        b.req_resource(true, false, false, false);
        b.run_compute();
        b.req_resource(false, false, false, false);
    };
    switch (job.kind) {
    case sc::JobKind::Compute:
    case sc::JobKind::Hang:
    case sc::JobKind::FaultAccess:
        run_shader();
        break;
    case sc::JobKind::Store:
        b.move64(d0, bos_[job.bo].va + job.offset);
        b.move64(d2, job.value);
        b.store64(d2, d0, 0);
        break;
    case sc::JobKind::Wait: {
        const size_t wg = job.wait_queue.group;
        const u32 wgi = gi < groups_[wg].size() ? gi : 0;
        b.move64(d0, groups_[wg][wgi].progress_va[job.wait_queue.queue]);
        b.move64(d2, job.value - 1);
        b.sync_wait64(d0, d2, panthor::cs::GREATER);
        break;
    }
    case sc::JobKind::Asm:
        for (const sc::AsmInstr& in : job.instrs) {
            const umd::cs::Reg32 rd{in.dst}, rs{in.src};
            const umd::cs::Reg64 dd{in.dst}, ds{in.src};
            switch (in.op) {
            case sc::AsmOp::Nop: b.nop(); break;
            case sc::AsmOp::Move48:
                b.move48(dd, static_cast<u64>(in.imm) + (in.bo_ref ? bos_[*in.bo_ref].va : 0));
                break;
            case sc::AsmOp::Move32: b.move32(rd, static_cast<u32>(in.imm)); break;
            case sc::AsmOp::AddImm32: b.add32(rd, rs, static_cast<std::int32_t>(in.imm)); break;
            case sc::AsmOp::Load:
                if (in.wide)
                    b.load64(dd, ds, static_cast<std::int16_t>(in.imm));
                else
                    b.load32(rd, ds, static_cast<std::int16_t>(in.imm));
                break;
            case sc::AsmOp::Store:
                if (in.wide)
                    b.store64(dd, ds, static_cast<std::int16_t>(in.imm));
                else
                    b.store32(rd, ds, static_cast<std::int16_t>(in.imm));
                break;
            case sc::AsmOp::Wait: b.wait(static_cast<u16>(in.imm)); break;
            case sc::AsmOp::SyncAdd64: b.sync_add64(dd, ds); break;
            case sc::AsmOp::SyncWait64:
                b.sync_wait64(dd, ds, in.cond_greater ? panthor::cs::GREATER : panthor::cs::LEQUAL);
                break;
            }
        }
        break;
    case sc::JobKind::TilerFragment: {
        // One tiling pass taking `chunks` chunks, then the fragment pass handing them back. The
        // mock firmware leaves seeding the context's free list to the heap's creator: the first
        // stream that uses the heap does it (seed_heap).
        const umd::TilerHeap& h = heaps_[job.heap];
        const umd::cs::Reg64 last = b.reg64(8), first = b.reg64(10);
        b.move64(d0, h.ctx_gpu_va);
        b.heap_set(d0);
        if (seed_heap) {
            b.move64(d2, h.first_chunk_gpu_va | (s_.heaps[job.heap].chunk_size >> 12));
            b.store64(d2, d0, static_cast<std::int16_t>(offsetof(mock_hw::MockHeapContext, free_chunk)));
            b.wait_all();
        }
        b.set_sb_entry(3, 0);
        b.heap_operation(panthor::cs::HEAP_VT_START);
        b.set_idvs_shader(shader_va);
        b.req_resource(false, false, false, true);
        b.run_idvs();
        b.req_resource(false, false, false, false);
        b.wait_slot(3);
        b.finish_tiling();
        b.load_multiple(last.lo(), 0xF, d0, static_cast<std::int16_t>(offsetof(mock_hw::MockHeapContext, last_chunk)));
        b.heap_operation(panthor::cs::HEAP_VT_END);
        b.set_fbd(frag_va);
        b.req_resource(false, true, false, false);
        b.run_fragment();
        b.req_resource(false, false, false, false);
        b.wait_slot(3);
        b.finish_fragment(false, last, first);
        b.heap_operation(panthor::cs::HEAP_FRAG_END);
        break;
    }
    }
    // The queue's progress object counts its completed jobs (what `wait` jobs look at).
    b.wait_all();
    b.move64(d0, groups_[g][gi].progress_va[q]);
    b.move64(d2, 1);
    b.sync_add64(d0, d2);
    b.wait_all();
    b.pad_to(8);
    if (umd::Status st = b.finish(); !st) {
        setup_error_ = "job '" + job.name + "' (line " + std::to_string(job.loc.line) +
                       "): command stream: " + b.error_message();
        return st.error();
    }
    *va = sva;
    *size = static_cast<u32>(b.size_bytes());
    streams_[key] = {sva, *size};
    return 0;
}

int Runner::submit_instance(size_t si, u32 inst) {
    const sc::Submission& sub = s_.submissions[si];
    const size_t g = sub.queue.group;
    const size_t client = vms_[s_.groups[g].vm].client;
    umd::PanthorClient& c = *clients_[client].c;
    for (u32 gi = 0; gi < groups_[g].size(); gi++) {
        u64 va = 0;
        u32 size = 0;
        if (int ret = stream_for(sub.job, g, gi, sub.queue.queue, &va, &size))
            return ret;
        auto done = c.syncobj_create();
        if (!done.ok()) {
            setup_error_ = "SYNCOBJ_CREATE (job fence)";
            return done.error();
        }
        std::vector<drm_panthor_sync_op> syncs;
        for (const sc::SyncRef& w : sub.waits)
            syncs.push_back(s_.syncobjs[w.syncobj].timeline ? umd::timeline_wait(syncobjs_[w.syncobj], w.point + inst)
                                                            : umd::sync_wait(syncobjs_[w.syncobj]));
        for (const sc::SyncRef& w : sub.signals)
            syncs.push_back(s_.syncobjs[w.syncobj].timeline
                                ? umd::timeline_signal(syncobjs_[w.syncobj], w.point + inst)
                                : umd::sync_signal(syncobjs_[w.syncobj]));
        syncs.push_back(umd::sync_signal(*done));
        umd::QueueSubmit qs;
        qs.queue_index = static_cast<u32>(sub.queue.queue);
        qs.stream_addr = va;
        qs.stream_size = size;
        qs.latest_flush = c.latest_flush_id().value_or(0);
        qs.syncs = std::move(syncs);

        auto p = std::make_unique<Pending>();
        p->submission = si;
        p->group = g;
        p->group_inst = gi;
        p->done_count = &done_count_;
        p->submit_ns = kshim::ktime_get();
        gstats_[g].submitted++;
        total_++;
        if (umd::Status st = c.group_submit(groups_[g][gi].handle, qs); !st) {
            p->submit_error = st.error();
            p->done = true;
            p->done_ns = p->submit_ns;
            done_count_++;
        } else if (int ret = drm::drm_syncobj_find_fence(clients_[client].file, *done, 0, 0, &p->fence); ret) {
            p->submit_error = ret;
            p->done = true;
            p->done_ns = p->submit_ns;
            done_count_++;
        } else {
            p->cb_armed = true;
            if (kshim::dma_fence_add_callback(p->fence, &p->cb, on_job_done)) {
                p->cb_armed = false;
                p->done = true;
                p->done_ns = kshim::ktime_get();
                done_count_++;
            }
        }
        pending_.push_back(std::move(p));
    }
    return 0;
}

int Runner::run() {
    seed_ = opts_.seed ? *opts_.seed : (s_.seed ? s_.seed : 1);
    kshim::RuntimeOptions ro;
    ro.seed = seed_;
    if (!opts_.trace_path.empty()) {
        ro.trace = true;
        ro.trace_path = opts_.trace_path;
    }
    const double wall0 = wall_seconds();
    int rc = 0;
    {
        kshim::Runtime rt{ro};
        {
            mock_hw::MockPlatform plat(s_.gpu);
            for (const sc::Fault& f : s_.faults)
                if (f.spec.kind == mock_hw::FaultKind::BootFail)
                    plat.gpu().faults().add(f.spec);
            int ret = panthor::panthor_init();
            if (ret) {
                rc = fail_setup("panthor_init", ret);
            } else {
                gstats_.resize(s_.groups.size());
                rc = setup(plat);
                if (!rc) {
                    t0_ = kshim::ktime_get();
                    // Fault times in the file count from the start of the workload, after boot.
                    for (const sc::Fault& f : s_.faults) {
                        if (f.spec.kind == mock_hw::FaultKind::BootFail)
                            continue;
                        mock_hw::FaultSpec spec = f.spec;
                        if (spec.trigger.type == mock_hw::FaultTrigger::Type::AtTime)
                            spec.trigger.at += t0_;
                        plat.gpu().faults().add(spec);
                    }
                    struct Ev {
                        u64 t_us;
                        size_t sub;
                        u32 inst;
                    };
                    std::vector<Ev> evs;
                    for (size_t i = 0; i < s_.submissions.size(); i++)
                        for (u32 k = 0; k < s_.submissions[i].count; k++)
                            evs.push_back({s_.submissions[i].start_us + k * s_.submissions[i].every_us, i, k});
                    std::stable_sort(evs.begin(), evs.end(), [](const Ev& a, const Ev& b) { return a.t_us < b.t_us; });
                    const s64 end = s_.duration_us ? t0_ + kshim::us_to_ktime(s_.duration_us) : t0_ + kMaxRunNs;
                    for (const Ev& e : evs) {
                        const s64 at = t0_ + kshim::us_to_ktime(e.t_us);
                        if (at > end)
                            break;
                        const s64 now = kshim::ktime_get();
                        if (at > now)
                            rt.advance(at - now);
                        if (submit_instance(e.sub, e.inst)) {
                            rc = 1;
                            break;
                        }
                    }
                    if (!rc) {
                        const s64 now = kshim::ktime_get();
                        if (end > now)
                            rt.run_until([this] { return done_count_ == total_; }, end - now);
                    }
                    t_end_ = kshim::ktime_get();
                    stats_ = panthor::panthor_sched_get_stats(ptdev_);
                    if (!rc)
                        check_expectations();
                }
                teardown();
                if (ptdev_)
                    panthor::panthor_remove(plat.pdev());
                panthor::panthor_exit();
            }
        }
        rt.run_until_idle();
    }
    wall_ = wall_seconds() - wall0;
    return rc;
}

void Runner::check_expectations() {
    auto fail = [this](u32 line, std::string what) { failures_.push_back({line, std::move(what)}); };
    // Job outcomes, per group.
    for (const auto& p : pending_) {
        GroupStats& gs = gstats_[p->group];
        if (!p->done)
            continue;
        const int st = p->submit_error ? p->submit_error : kshim::dma_fence_get_status(p->fence);
        if (st == 1) {
            gs.completed++;
            gs.latencies_us.push_back(static_cast<u64>(kshim::ktime_to_us(p->done_ns - p->submit_ns)));
        } else {
            gs.failed++;
        }
    }
    for (GroupStats& gs : gstats_)
        std::sort(gs.latencies_us.begin(), gs.latencies_us.end());

    for (const sc::FenceExpect& fe : s_.expect.fences) {
        checked_++;
        u32 n = 0;
        for (const auto& p : pending_) {
            if (s_.submissions[p->submission].fence != fe.fence)
                continue;
            const int st = p->submit_error ? p->submit_error
                                           : (p->done ? kshim::dma_fence_get_status(p->fence) : 0);
            bool ok = false;
            std::string want;
            switch (fe.state) {
            case sc::FenceExpect::State::Signaled: ok = st == 1; want = "signaled"; break;
            case sc::FenceExpect::State::Pending: ok = st == 0; want = "pending"; break;
            case sc::FenceExpect::State::Error: ok = st == fe.error; want = errno_name(fe.error); break;
            }
            if (!ok) {
                fail(fe.loc.line, "fence '" + fe.fence + "' (" + s_.groups[p->group].name + "#" +
                                      std::to_string(p->group_inst) + ", job " + std::to_string(n) + "): expected " +
                                      want + ", got " + status_name(st));
                break;  // one line per fence is enough
            }
            n++;
        }
    }
    for (const sc::GroupExpect& ge : s_.expect.groups) {
        checked_++;
        umd::PanthorClient& c = client_of_vm(s_.groups[ge.group].vm);
        for (u32 i = 0; i < groups_[ge.group].size(); i++) {
            auto st = c.group_get_state(groups_[ge.group][i].handle);
            if (!st.ok()) {
                fail(ge.loc.line, "group '" + s_.groups[ge.group].name + "#" + std::to_string(i) +
                                      "': GROUP_GET_STATE failed with " + errno_name(st.error()));
                break;
            }
            if (st->state != ge.state) {
                char buf[96];
                std::snprintf(buf, sizeof(buf), "': state 0x%x, expected 0x%x (fatal_queues 0x%x)", st->state,
                              ge.state, st->fatal_queues);
                fail(ge.loc.line, "group '" + s_.groups[ge.group].name + "#" + std::to_string(i) + buf);
                break;
            }
        }
    }
    for (const sc::MemoryExpect& me : s_.expect.memory) {
        checked_++;
        u64 v = 0;
        std::memcpy(&v, bos_[me.bo].cpu + me.offset, 8);
        if (v != me.value) {
            char buf[160];
            std::snprintf(buf, sizeof(buf), "memory %s+0x%" PRIx64 ": 0x%" PRIx64 ", expected 0x%" PRIx64,
                          s_.bos[me.bo].name.c_str(), me.offset, v, me.value);
            fail(me.loc.line, buf);
        }
    }
    for (const sc::LatencyExpect& le : s_.expect.latency) {
        checked_++;
        std::vector<u64> lat;
        for (size_t g = 0; g < gstats_.size(); g++)
            if (!le.group || *le.group == g)
                lat.insert(lat.end(), gstats_[g].latencies_us.begin(), gstats_[g].latencies_us.end());
        std::sort(lat.begin(), lat.end());
        const std::string who = le.group ? "group '" + s_.groups[*le.group].name + "'" : "all groups";
        if (lat.empty()) {
            fail(le.loc.line, "latency of " + who + ": no job completed");
            continue;
        }
        auto check = [&](const char* what, std::optional<u64> bound, u64 got) {
            if (bound && got > *bound)
                fail(le.loc.line, std::string("latency of ") + who + ": " + what + " " + std::to_string(got) +
                                      " us > " + std::to_string(*bound) + " us");
        };
        check("p50", le.p50_us, percentile(lat, 50));
        check("p99", le.p99_us, percentile(lat, 99));
        check("max", le.max_us, lat.back());
    }
}

void Runner::teardown() {
    for (auto& p : pending_) {
        if (p->cb_armed && p->fence)
            kshim::dma_fence_remove_callback(p->fence, &p->cb);
        p->cb_armed = false;
        if (p->fence)
            kshim::dma_fence_put(p->fence);
        p->fence = nullptr;
    }
    // Closing a file destroys what is left of its groups, heaps, VMs and handles.
    for (ClientRt& c : clients_) {
        c.c.reset();
        c.be.reset();
        if (c.file)
            drm::drm_release(c.file);
        c.file = nullptr;
    }
}

void Runner::report(std::FILE* out) const {
    const double vt_ms = static_cast<double>(t_end_ - t0_) / 1e6;
    std::fprintf(out, "scenario %s (%s), seed %" PRIu64 "\n", s_.name.c_str(), s_.file.c_str(), seed_);
    std::fprintf(out, "virtual time %.3f ms, wall %.3f s (%.1fx real time)\n", vt_ms, wall_,
                 wall_ > 0 ? vt_ms / 1e3 / wall_ : 0.0);
    std::fprintf(out, "scheduler: %" PRIu64 " ticks (%" PRIu64 " full), %" PRIu64 " CSG starts/resumes, %" PRIu64
                      " suspends/terminates\n",
                 stats_.ticks, stats_.full_ticks, stats_.csg_starts, stats_.csg_suspends);
    std::fprintf(out, "%-16s %9s %9s %9s %9s %9s %9s\n", "group", "submitted", "completed", "failed", "p50_us",
                 "p99_us", "max_us");
    for (size_t g = 0; g < s_.groups.size(); g++) {
        const GroupStats& gs = gstats_[g];
        std::string name = s_.groups[g].name;
        if (s_.groups[g].instances > 1)
            name += " x" + std::to_string(s_.groups[g].instances);
        std::fprintf(out, "%-16s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 "\n",
                     name.c_str(), gs.submitted, gs.completed, gs.failed, percentile(gs.latencies_us, 50),
                     percentile(gs.latencies_us, 99), gs.latencies_us.empty() ? 0 : gs.latencies_us.back());
    }
    if (!setup_error_.empty())
        std::fprintf(out, "run failed: %s\n", setup_error_.c_str());
    for (const Failure& f : failures_)
        std::fprintf(out, "%s:%u: expectation failed: %s\n", s_.file.c_str(), f.line, f.what.c_str());
    std::fprintf(out, "%s: %u expectation(s) checked, %zu failed\n", passed() ? "PASS" : "FAIL", checked_,
                 failures_.size());
}

std::string json_str(const std::string& s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
            o += static_cast<char>(c);
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            o += buf;
        } else {
            o += static_cast<char>(c);
        }
    }
    return o + "\"";
}

void Runner::report_json(std::FILE* out) const {
    std::fprintf(out, "{\n  \"scenario\": %s,\n  \"file\": %s,\n  \"seed\": %" PRIu64 ",\n", json_str(s_.name).c_str(),
                 json_str(s_.file).c_str(), seed_);
    std::fprintf(out, "  \"passed\": %s,\n", passed() ? "true" : "false");
    std::fprintf(out, "  \"virtual_time_us\": %" PRId64 ",\n  \"wall_time_s\": %.6f,\n",
                 static_cast<s64>(kshim::ktime_to_us(t_end_ - t0_)), wall_);
    std::fprintf(out,
                 "  \"scheduler\": {\"ticks\": %" PRIu64 ", \"full_ticks\": %" PRIu64 ", \"csg_starts\": %" PRIu64
                 ", \"csg_suspends\": %" PRIu64 "},\n",
                 stats_.ticks, stats_.full_ticks, stats_.csg_starts, stats_.csg_suspends);
    std::fprintf(out, "  \"groups\": [");
    for (size_t g = 0; g < s_.groups.size(); g++) {
        const GroupStats& gs = gstats_[g];
        std::fprintf(out,
                     "%s\n    {\"name\": %s, \"instances\": %u, \"submitted\": %" PRIu64 ", \"completed\": %" PRIu64
                     ", \"failed\": %" PRIu64 ", \"latency_us\": {\"p50\": %" PRIu64 ", \"p99\": %" PRIu64
                     ", \"max\": %" PRIu64 "}}",
                     g ? "," : "", json_str(s_.groups[g].name).c_str(), s_.groups[g].instances, gs.submitted,
                     gs.completed, gs.failed, percentile(gs.latencies_us, 50), percentile(gs.latencies_us, 99),
                     gs.latencies_us.empty() ? 0 : gs.latencies_us.back());
    }
    std::fprintf(out, "\n  ],\n  \"expectations_checked\": %u,\n  \"failures\": [", checked_);
    for (size_t i = 0; i < failures_.size(); i++)
        std::fprintf(out, "%s\n    {\"line\": %u, \"message\": %s}", i ? "," : "", failures_[i].line,
                     json_str(failures_[i].what).c_str());
    std::fprintf(out, "\n  ],\n  \"error\": %s\n}\n",
                 setup_error_.empty() ? "null" : json_str(setup_error_).c_str());
}

}  // namespace

int cmd_run(const std::string& path, const RunOptions& opts, std::FILE* out, std::FILE* err) {
    sc::ParseResult pr = sc::parse_scenario_file(path);
    if (!pr.ok()) {
        for (const sc::Diagnostic& d : pr.diagnostics)
            std::fprintf(err, "%s\n", d.to_string().c_str());
        return kExitUsage;
    }
    Runner r(*pr.scenario, opts);
    r.run();
    if (opts.json)
        r.report_json(out);
    else
        r.report(out);
    if (!r.setup_error().empty())
        std::fprintf(err, "upanthor run: %s\n", r.setup_error().c_str());
    return r.passed() ? kExitOk : kExitFailure;
}

}  // namespace upanthor
