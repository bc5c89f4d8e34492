// `upanthor run` on the mock Mali-G52 with panfrost (jm_run.h): setup of the scenario's files,
// BOs, JM contexts and syncobjs, the timed SUBMITs, the expectations and the summary.
// (No upstream counterpart.)
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "drm/drm_syncobj.h"
#include "host/world.h"
#include "hw/jm/regs/gpu_regs.h"
#include "kernel_shim/dma-buf/dma-fence.h"
#include "mock_jm/jm_platform.h"
#include "panfrost/panfrost_device.h"
#include "panfrost/panfrost_drv.h"
#include "panfrost/panfrost_gem.h"
#include "tools/upanthor/jm_run.h"
#include "tools/upanthor/run_state.h"
#include "tools/upanthor/run_world.h"
#include "tools/upanthor/scenario.h"
#include "umd/panfrost_client.h"

namespace upanthor {
namespace jm_detail {
namespace {

namespace sc = upanthor::scenario;
using run_detail::errno_name;
using run_detail::Failure;
using run_detail::fence_expect_holds;
using run_detail::json_str;
using run_detail::memory_mismatch;
using run_detail::status_name;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using s64 = std::int64_t;

// Per client, the runner's own BO for the job chains.
constexpr u64 kChainBoSize = 8ull << 20;

// One job instance: its done fence, and its outcome kept past teardown.
struct JmPending : run_detail::JobFence {
    u32 instance = 0;

    int final_status = 0;  // at the end of the workload (the fence is gone after teardown)
    bool final = false;

    int status() const {
        if (final)
            return final_status;
        return submit_error ? submit_error : (done ? kshim::dma_fence_get_status(fence) : 0);
    }
};

struct JmClientRt {
    drm::drm_file* file = nullptr;
    std::unique_ptr<umd::DrmFileBackend> be;
    std::unique_ptr<umd::PanfrostClient> c;
    umd::PanfrostBo chain_bo;
    void* chain_cpu = nullptr;
    std::unique_ptr<umd::MappedRanges> mem;
    std::unique_ptr<umd::JobPool> pool;
    std::vector<u64> bo_va;  // per scenario BO (0 for another client's)
};

struct JmBoRt {
    umd::PanfrostBo bo;
    std::uint8_t* cpu = nullptr;
    u64 heap_rss = 0;  // a heap BO: bytes the driver mapped on faults by the end of the workload
};

struct SubmissionStats {
    u64 submitted = 0, completed = 0, failed = 0;
};

class JmRunner {
public:
    JmRunner(const sc::Scenario& s, const RunOptions& o) : s_(s), opts_(o) {}

    int run();
    void report(std::FILE* out) const;
    void report_json(std::FILE* out) const;
    bool passed() const { return setup_error_.empty() && failures_.empty() && kernel_findings_.empty(); }
    RunOutcome outcome() const;

private:
    int setup(upanthor::host::Machine& m);
    int drive(kshim::Runtime& rt, mock_jm::JmPlatform& plat);
    int submit_instance(size_t si, u32 inst);
    void check_expectations();
    void teardown();
    int fail_setup(const std::string& what, int err) {
        setup_error_ = what + ": " + errno_name(err) + " (" + std::to_string(err) + ")";
        return 1;
    }
    std::string where(const sc::SourceLoc& l) const { return s_.file + ":" + std::to_string(l.line); }
    static u32 slot_of(const sc::JmSubmission& sub) { return (sub.requirements & PANFROST_JD_REQ_FS) ? 0 : 1; }

    const sc::Scenario& s_;
    RunOptions opts_;
    u64 seed_ = 1;
    std::string setup_error_;
    std::vector<JmClientRt> clients_;
    std::vector<JmBoRt> bos_;
    std::vector<u32> ctxs_;
    std::vector<u32> syncobjs_;
    std::vector<std::unique_ptr<JmPending>> pending_;
    std::vector<SubmissionStats> stats_;
    std::atomic<u32> done_count_{0};
    u32 total_ = 0;
    s64 t0_ = 0, t_end_ = 0;
    double wall_ = 0;
    std::vector<Failure> failures_;
    std::vector<std::string> kernel_findings_;
    u64 faults_fired_ = 0;
    std::atomic<u64> gpu_resets_{0};
    u32 checked_ = 0;
};

int JmRunner::setup(upanthor::host::Machine& m) {
    if (int ret = m.probe())
        return fail_setup("panfrost_probe (see the driver's log above)", ret);
    // panfrost leaves the MMU interrupt masked after probe until the GPU is reset or resumed (as
    // upstream): start from an autosuspended device, so the first job's resume unmasks it.
    if (!m.settle())
        return fail_setup("the device did not autosuspend after probe", -EBUSY);
    for (const sc::Client& cl : s_.clients) {
        JmClientRt& c = clients_.emplace_back();
        if (int ret = m.open_file(&c.file))
            return fail_setup("drm_open for client '" + cl.name + "'", ret);
        c.be = std::make_unique<umd::DrmFileBackend>(c.file);
        if (cl.cap_sys_nice)
            c.be->creds().cap_effective = kshim::cap_raise(kshim::CAP_EMPTY_SET, kshim::CAP_SYS_NICE);
        auto r = umd::PanfrostClient::open(*c.be);
        if (!r.ok())
            return fail_setup("PanfrostClient::open for client '" + cl.name + "'", r.error());
        c.c = std::move(*r);
        auto bo = c.c->bo_create(static_cast<u32>(kChainBoSize));
        if (!bo.ok())
            return fail_setup("the job-chain BO of client '" + cl.name + "'", bo.error());
        c.chain_bo = *bo;
        auto cpu = c.c->bo_mmap(bo->handle, kChainBoSize);
        if (!cpu.ok())
            return fail_setup("mmap of the job-chain BO", cpu.error());
        c.chain_cpu = *cpu;
        c.mem = std::make_unique<umd::MappedRanges>();
        c.mem->add(bo->va, c.chain_cpu, kChainBoSize);
        c.pool = std::make_unique<umd::JobPool>(*c.mem, bo->va, kChainBoSize);
        c.bo_va.assign(s_.bos.size(), 0);
    }
    for (size_t i = 0; i < s_.bos.size(); i++) {
        const sc::Bo& b = s_.bos[i];
        JmClientRt& c = clients_[s_.vms[b.vm].client];
        JmBoRt& r = bos_.emplace_back();
        const u32 flags = b.heap ? PANFROST_BO_HEAP | PANFROST_BO_NOEXEC : 0;
        auto bo = c.c->bo_create(static_cast<u32>(b.size), flags);
        if (!bo.ok())
            return fail_setup(where(b.loc) + ": CREATE_BO '" + b.name + "'", bo.error());
        r.bo = *bo;
        c.bo_va[i] = bo->va;
        if (b.heap)
            continue;
        auto cpu = c.c->bo_mmap(bo->handle, b.size);
        if (!cpu.ok())
            return fail_setup("mmap of BO '" + b.name + "'", cpu.error());
        r.cpu = static_cast<std::uint8_t*>(*cpu);
        const u32 word = b.pattern.value_or(0);
        for (u64 off = 0; off + 4 <= b.size; off += 4)
            std::memcpy(r.cpu + off, &word, 4);
        for (const sc::BoValue& val : b.values)
            std::memcpy(r.cpu + val.offset, &val.value, 8);
    }
    for (const sc::JmCtx& x : s_.jm_ctxs) {
        auto h = clients_[x.client].c->jm_ctx_create(x.priority);
        if (!h.ok())
            return fail_setup(where(x.loc) + ": JM_CTX_CREATE '" + x.name + "'", h.error());
        ctxs_.push_back(*h);
    }
    for (const sc::Syncobj& so : s_.syncobjs) {
        auto h = clients_[so.client].c->syncobj_create();
        if (!h.ok())
            return fail_setup("SYNCOBJ_CREATE '" + so.name + "'", h.error());
        syncobjs_.push_back(*h);
    }
    stats_.resize(s_.jm_submissions.size());
    return 0;
}

int JmRunner::submit_instance(size_t si, u32 inst) {
    const sc::JmSubmission& sub = s_.jm_submissions[si];
    JmClientRt& c = clients_[sub.client];
    auto p = std::make_unique<JmPending>();
    p->submission = si;
    p->instance = inst;
    p->done_count = &done_count_;
    p->submit_ns = kshim::ktime_get();
    stats_[si].submitted++;
    total_++;
    auto finish_now = [&](int err) {
        p->fail_submit(err);
        pending_.push_back(std::move(p));
        return 0;
    };

    // A fresh copy of the chain: the GPU wrote the last one's headers back. The pool wraps when
    // full; by then the chains at its start are long done (8 MiB of jobs per client).
    umd::JobChain jc(*c.mem, c.c->arch());
    int ret = build_chain(s_.chains[sub.chain], c.bo_va, *c.pool, jc);
    if (ret == -ENOMEM) {
        c.pool->reset();
        jc.reset();
        ret = build_chain(s_.chains[sub.chain], c.bo_va, *c.pool, jc);
    }
    if (ret)
        return finish_now(ret);

    auto done = c.c->syncobj_create();
    if (!done.ok()) {
        setup_error_ = "SYNCOBJ_CREATE (job fence)";
        return 1;
    }
    umd::JmSubmit js;
    js.jc = jc.first_job();
    js.out_sync = *done;
    js.requirements = sub.requirements;
    js.jm_ctx = sub.ctx ? ctxs_[*sub.ctx] : 0;
    for (size_t bo : sub.bos)
        js.bos.push_back(bos_[bo].bo.handle);
    for (const sc::SyncRef& w : sub.waits)
        js.in_syncs.push_back(syncobjs_[w.syncobj]);
    if (umd::Status st = c.c->submit(js); !st)
        return finish_now(st.error());
    for (const sc::SyncRef& sig : sub.signals)
        if (umd::Status st = c.c->transfer_sync(syncobjs_[sig.syncobj], *done); !st) {
            setup_error_ = "signalling syncobj '" + s_.syncobjs[sig.syncobj].name + "': " + errno_name(st.error());
            return 1;
        }
    if (int r = drm::drm_syncobj_find_fence(c.file, *done, 0, 0, &p->fence))
        return finish_now(r);
    (void)c.c->syncobj_destroy(*done);  // the fence reference is all the runner needs
    p->arm();
    pending_.push_back(std::move(p));
    return 0;
}

int JmRunner::drive(kshim::Runtime& rt, mock_jm::JmPlatform& plat) {
    t0_ = kshim::ktime_get();
    // Recovery resets: the reset commands panfrost_reset() issues (reset.pending is set meanwhile),
    // not the soft reset of every runtime resume.
    panfrost::panfrost_device* pfdev = panfrost::panfrost_from_pdev(plat.pdev());
    plat.pdev()->desc.iomem->trace_hook = [this, pfdev](bool write, u32 off, u32 value) {
        if (write && off == panfrost::GPU_CMD &&
            (value == panfrost::GPU_CMD_SOFT_RESET || value == panfrost::GPU_CMD_HARD_RESET) &&
            pfdev->reset.pending.load())
            gpu_resets_.fetch_add(1, std::memory_order_relaxed);
    };
    const std::vector<int> fault_ids = run_detail::add_workload_faults(plat.gpu().faults(), s_, opts_, t0_);

    if (int rc = run_detail::run_workload(
            rt, s_, t0_, run_detail::submission_schedule(s_.jm_submissions),
            [this](size_t sub, u32 inst) { return submit_instance(sub, inst); },
            [this] { return done_count_ == total_; }, nullptr))
        return rc;
    t_end_ = kshim::ktime_get();
    for (size_t i = 0; i < s_.bos.size(); i++) {
        if (!s_.bos[i].heap)
            continue;
        drm::drm_gem_object* obj = clients_[s_.vms[s_.bos[i].vm].client].file->gem.lookup(bos_[i].bo.handle);
        if (obj) {
            bos_[i].heap_rss = panfrost::to_panfrost_bo(obj)->heap_rss_size;
            drm::drm_gem_object_put(obj);
        }
    }
    for (int id : fault_ids)
        faults_fired_ += plat.gpu().faults().fired(id);
    plat.pdev()->desc.iomem->trace_hook = nullptr;
    check_expectations();
    return 0;
}

void JmRunner::check_expectations() {
    auto fail = [this](u32 line, std::string what) { failures_.push_back({line, std::move(what)}); };
    for (const auto& p : pending_) {
        const int st = p->status();
        p->final_status = st;
        p->final = true;
        if (st == 1)
            stats_[p->submission].completed++;
        else if (st < 0)
            stats_[p->submission].failed++;
    }
    for (const sc::FenceExpect& fe : s_.expect.fences) {
        checked_++;
        for (const auto& p : pending_) {
            const sc::JmSubmission& sub = s_.jm_submissions[p->submission];
            if (sub.fence != fe.fence)
                continue;
            const int st = p->status();
            std::string want;
            if (!fence_expect_holds(fe, st, &want)) {
                fail(fe.loc.line, "fence '" + fe.fence + "' (chain " + s_.chains[sub.chain].name + ", job " +
                                      std::to_string(p->instance) + "): expected " + want + ", got " + status_name(st));
                break;
            }
        }
    }
    for (const sc::MemoryExpect& me : s_.expect.memory) {
        checked_++;
        if (std::string m = memory_mismatch(s_, me, bos_[me.bo].cpu); !m.empty())
            fail(me.loc.line, std::move(m));
    }
    if (s_.expect.gpu_resets) {
        checked_++;
        if (gpu_resets_.load() != *s_.expect.gpu_resets)
            fail(s_.expect.gpu_resets_loc.line, "gpu_resets: " + std::to_string(gpu_resets_.load()) + ", expected " +
                                                    std::to_string(*s_.expect.gpu_resets));
    }
}

void JmRunner::teardown() {
    for (auto& p : pending_)
        p->release();
    for (JmClientRt& c : clients_) {
        c.pool.reset();
        c.mem.reset();
        c.c.reset();
        c.be.reset();  // unmaps what is still mapped
        if (c.file)
            drm::drm_release(c.file);
        c.file = nullptr;
    }
}

int JmRunner::run() {
    seed_ = run_detail::run_seed(s_, opts_);
    const double wall0 = run_detail::wall_seconds();
    host::Machine::Options mo;
    mo.model = "g52";
    run_detail::WorldSteps steps;
    steps.fail_setup = [this](const std::string& step, int err) { return fail_setup(step, err); };
    steps.faults = [](host::Machine& m) -> mock_hw::FaultPlan& { return m.jm()->gpu().faults(); };
    steps.setup = [this](host::Machine& m) {
        stats_.resize(s_.jm_submissions.size());
        return setup(m);
    };
    steps.drive = [this](host::World& w) { return drive(w.rt(), *w.machine()->jm()); };
    steps.teardown = [this] { teardown(); };
    const int rc =
        run_detail::run_in_world(run_detail::runtime_options(opts_, seed_), mo, s_, steps, &kernel_findings_);
    wall_ = run_detail::wall_seconds() - wall0;
    return rc;
}

RunOutcome JmRunner::outcome() const {
    return run_detail::make_outcome(s_.file, seed_, setup_error_, failures_, kernel_findings_, t_end_ - t0_, wall_);
}

void JmRunner::report(std::FILE* out) const {
    const double vt_ms = static_cast<double>(t_end_ - t0_) / 1e6;
    std::fprintf(out, "scenario %s (%s), seed %" PRIu64 ", gpu g52 (panfrost)\n", s_.name.c_str(), s_.file.c_str(),
                 seed_);
    std::fprintf(out, "virtual time %.3f ms, wall %.3f s\n", vt_ms, wall_);
    std::fprintf(out, "gpu: %" PRIu64 " fault(s) injected, %" PRIu64 " reset(s)\n", faults_fired_, gpu_resets_.load());
    for (size_t i = 0; i < s_.bos.size(); i++)
        if (s_.bos[i].heap)
            std::fprintf(out, "heap %s: %" PRIu64 " KiB of %" PRIu64 " KiB mapped on GPU faults\n",
                         s_.bos[i].name.c_str(), bos_[i].heap_rss >> 10, s_.bos[i].size >> 10);
    std::fprintf(out, "%-16s %-10s %4s %-10s %9s %9s %9s  %s\n", "chain", "fence", "slot", "ctx", "submitted",
                 "completed", "failed", "job fences");
    for (size_t i = 0; i < s_.jm_submissions.size(); i++) {
        const sc::JmSubmission& sub = s_.jm_submissions[i];
        // The fence statuses of its jobs, run-length encoded: "signaled x59, ETIMEDOUT".
        std::string statuses;
        std::string last;
        u32 run = 0;
        auto flush = [&] {
            if (!run)
                return;
            statuses += (statuses.empty() ? "" : ", ") + last + (run > 1 ? " x" + std::to_string(run) : "");
        };
        for (const auto& p : pending_) {
            if (p->submission != i)
                continue;
            const std::string st = status_name(p->status());
            if (st != last) {
                flush();
                last = st;
                run = 0;
            }
            run++;
        }
        flush();
        const std::string ctx = sub.ctx ? s_.jm_ctxs[*sub.ctx].name : "default";
        std::fprintf(out, "%-16s %-10s %4u %-10s %9" PRIu64 " %9" PRIu64 " %9" PRIu64 "  %s\n",
                     s_.chains[sub.chain].name.c_str(), sub.fence.empty() ? "-" : sub.fence.c_str(), slot_of(sub),
                     ctx.c_str(), stats_[i].submitted, stats_[i].completed, stats_[i].failed, statuses.c_str());
    }
    run_detail::report_problems(out, s_.file, setup_error_, failures_, kernel_findings_);
    std::fprintf(out, "%s: %u expectation(s) checked, %zu failed\n", passed() ? "PASS" : "FAIL", checked_,
                 failures_.size());
}

void JmRunner::report_json(std::FILE* out) const {
    std::fprintf(out, "{\n  \"scenario\": %s,\n  \"file\": %s,\n  \"seed\": %" PRIu64 ",\n  \"gpu_model\": \"g52\",\n",
                 json_str(s_.name).c_str(), json_str(s_.file).c_str(), seed_);
    std::fprintf(out, "  \"passed\": %s,\n", passed() ? "true" : "false");
    std::fprintf(out, "  \"virtual_time_us\": %" PRId64 ",\n  \"wall_time_s\": %.6f,\n",
                 static_cast<s64>(kshim::ktime_to_us(t_end_ - t0_)), wall_);
    std::fprintf(out, "  \"gpu\": {\"faults_injected\": %" PRIu64 ", \"resets\": %" PRIu64 "},\n", faults_fired_,
                 gpu_resets_.load());
    std::fprintf(out, "  \"heaps\": [");
    bool first_heap = true;
    for (size_t i = 0; i < s_.bos.size(); i++)
        if (s_.bos[i].heap) {
            std::fprintf(out, "%s{\"bo\": %s, \"size\": %" PRIu64 ", \"mapped\": %" PRIu64 "}", first_heap ? "" : ", ",
                         json_str(s_.bos[i].name).c_str(), s_.bos[i].size, bos_[i].heap_rss);
            first_heap = false;
        }
    std::fprintf(out, "],\n");
    std::fprintf(out, "  \"jm_submissions\": [");
    for (size_t i = 0; i < s_.jm_submissions.size(); i++) {
        const sc::JmSubmission& sub = s_.jm_submissions[i];
        std::fprintf(out,
                     "%s\n    {\"chain\": %s, \"fence\": %s, \"slot\": %u, \"ctx\": %s, \"requirements\": %u, "
                     "\"submitted\": %" PRIu64 ", \"completed\": %" PRIu64 ", \"failed\": %" PRIu64 ", \"jobs\": [",
                     i ? "," : "", json_str(s_.chains[sub.chain].name).c_str(),
                     sub.fence.empty() ? "null" : json_str(sub.fence).c_str(), slot_of(sub),
                     sub.ctx ? json_str(s_.jm_ctxs[*sub.ctx].name).c_str() : "null", sub.requirements,
                     stats_[i].submitted, stats_[i].completed, stats_[i].failed);
        bool first = true;
        for (const auto& p : pending_) {
            if (p->submission != i)
                continue;
            const s64 lat = p->done ? kshim::ktime_to_us(p->done_ns - p->submit_ns) : -1;
            std::fprintf(out, "%s{\"instance\": %u, \"fence\": %s, \"latency_us\": %" PRId64 "}", first ? "" : ", ",
                         p->instance, json_str(status_name(p->status())).c_str(), lat);
            first = false;
        }
        std::fprintf(out, "]}");
    }
    std::fprintf(out, "\n  ],\n");
    run_detail::report_problems_json(out, checked_, failures_, kernel_findings_);
    std::fprintf(out, "\n  ],\n  \"error\": %s\n}\n", setup_error_.empty() ? "null" : json_str(setup_error_).c_str());
}

}  // namespace
}  // namespace jm_detail

RunOutcome run_jm_scenario(const scenario::Scenario& s, const RunOptions& opts, std::FILE* report_out) {
    jm_detail::JmRunner r(s, opts);
    return run_detail::run_and_report(r, opts, report_out);
}

}  // namespace upanthor
