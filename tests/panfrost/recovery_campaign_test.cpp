// The fault campaign of panfrost's recovery paths on the mock Mali-G52: one workload (a culprit
// file whose chains run on slot 1, a bystander file whose chains run on slot 0, seeded chain
// lengths and submission moments) with one fault class injected at one trigger point, under one
// seed with preemption points on, checked against the invariants every recovery must keep:
//  - every fence of every accepted job signals within a bounded virtual time, with success or an
//    error the fault class explains (-EINVAL for a job fault, -ECANCELED for the guilty job of a
//    timeout, -ENOMEM for a failed allocation); a class that fails one job fails exactly the
//    jobs its fault hit;
//  - no job runs twice: each chain is NULL jobs and a WRITE_VALUE of a value of its own; the GPU
//    writes DONE into each header it completes and refuses a DONE header (DATA_INVALID_FAULT), so
//    a successful chain has every header DONE and its value written, no re-execution is refused
//    unless the class stops a chain where it cannot resume, and the mock's count of completed
//    jobs is at most the number of jobs submitted;
//  - the bystander's work (another file, another slot) completes;
//  - the device runs a fresh job on both files afterwards and autosuspends;
//  - the fixture's checks: no leak, no lockdep/fence-signalling report, no WARN, nobody blocked.
// A run's parameters are (class, trigger, seed); a failing one replays exactly with KSHIM_SEED.
// UPANTHOR_CAMPAIGN_SEEDS (default 1) sets the seeds per cell; the binary prints a table of
// class x trigger -> runs, violations, first failing seed (the format of panthor's campaign).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "hw/jm/job_desc.h"
#include "hw/jm/regs/exceptions.h"
#include "kernel_shim/fault_inject.h"
#include "kernel_shim/log.h"
#include "kernel_shim/report.h"
#include "kernel_shim/runtime.h"
#include "panfrost/panfrost_job.h"
#include "testkit/campaign_params.h"
#include "testkit/panfrost_rig.h"
#include "tests/panfrost/panfrost_test.h"
#include "tests/support/campaign_table.h"

namespace panfrost::testing {
namespace {

using kshim::dma_fence;
using kshim::ktime_t;
using mock_hw::FaultKind;
using mock_hw::FaultSpec;
using mock_hw::FaultTrigger;

enum class FaultClass {
    JobHang,          // a job that never completes: the 500 ms timeout and a reset
    JobFault,         // a job fails with JOB_CONFIG_FAULT
    BusFault,         // a job fails with JOB_BUS_FAULT and a GPU bus fault latches
    IrqLost,          // a chain ends without its JOB_INT bit: a later DONE or the timeout finds it
    SoftStopIgnored,  // a reset the test requests meets a SOFT_STOP that does not take
    ResetStuck,       // a reset whose soft reset never completes (the hard reset then does)
    AllocFailure,     // kernel allocations fail at random for 5 ms, a reset among them
};
constexpr FaultClass kClasses[] = {FaultClass::JobHang,     FaultClass::JobFault,        FaultClass::BusFault,
                                   FaultClass::IrqLost,     FaultClass::SoftStopIgnored, FaultClass::ResetStuck,
                                   FaultClass::AllocFailure};

const char* class_name(FaultClass c) {
    switch (c) {
    case FaultClass::JobHang: return "job_hang";
    case FaultClass::JobFault: return "job_fault";
    case FaultClass::BusFault: return "bus_fault";
    case FaultClass::IrqLost: return "irq_lost";
    case FaultClass::SoftStopIgnored: return "soft_stop_ignored";
    case FaultClass::ResetStuck: return "reset_stuck";
    case FaultClass::AllocFailure: return "alloc_failure";
    }
    return "?";
}

// When the fault is armed.
enum class Trigger {
    BeforeSubmit,   // before the workload's first submission
    WhileRunning,   // at a seeded moment while chains run
    DuringReset,    // together with a reset the test requests
    DuringSuspend,  // inside a runtime suspend, at its n-th (seeded) register write
    WithNext,       // on a slot-1 chain that has the next chain waiting in the NEXT registers
};
constexpr Trigger kTriggers[] = {Trigger::BeforeSubmit, Trigger::WhileRunning, Trigger::DuringReset,
                                 Trigger::DuringSuspend, Trigger::WithNext};

const char* trigger_name(Trigger t) {
    switch (t) {
    case Trigger::BeforeSubmit: return "before_submit";
    case Trigger::WhileRunning: return "while_running";
    case Trigger::DuringReset: return "during_reset";
    case Trigger::DuringSuspend: return "during_suspend";
    case Trigger::WithNext: return "with_next";
    }
    return "?";
}

// The classes carried by the FaultPlan's job-slot kinds: they hit a job slot 1 starts (or a
// chain it ends); the others need a reset to meet.
bool job_kind(FaultClass c) {
    return c == FaultClass::JobHang || c == FaultClass::JobFault || c == FaultClass::BusFault ||
           c == FaultClass::IrqLost;
}

using Param = std::tuple<FaultClass, Trigger, u64>;

// Seeds per cell in CI; UPANTHOR_CAMPAIGN_SEEDS asks for more.
constexpr std::uint64_t kCiSeedsPerCell = 1;

std::vector<Param> all_params() {
    return upanthor::testkit::campaign_params(kClasses, kTriggers,
                                              upanthor::testkit::campaign_seeds_per_cell(kCiSeedsPerCell));
}

// The table, filled as runs finish and printed (and written for `upanthor merge`) at exit; its
// `lost` column counts chains a reset reported -ECANCELED without a fault of theirs (see below).
upanthor::testing::CampaignTable& table() {
    static upanthor::testing::CampaignTable t;
    return t;
}
class CampaignReport : public ::testing::Environment {
public:
    void TearDown() override {
        table().report("panfrost fault campaign", "panfrost-recovery",
                       upanthor::testkit::campaign_seeds_per_cell(kCiSeedsPerCell), true);
    }
};
[[maybe_unused]] const auto* const kTableEnv = ::testing::AddGlobalTestEnvironment(new CampaignReport);

constexpr ktime_t kUs = kshim::NSEC_PER_USEC;
// Every fence must have signalled this long after the last submission (a few timeouts).
constexpr ktime_t kSignalBound = 5 * kshim::NSEC_PER_SEC;

// One accepted chain.
struct Chain {
    bool culprit = false;  // the culprit file's (slot 1); else the bystander's (slot 0)
    PanfrostJobBo* bo = nullptr;
    u64 head = 0, target = 0, value = 0;
    size_t jobs = 0;
    dma_fence* fence = nullptr;
};

class PanfrostCampaign : public PanfrostTest, public ::testing::WithParamInterface<Param> {
protected:
    FaultClass cls() const { return std::get<0>(GetParam()); }
    Trigger trig() const { return std::get<1>(GetParam()); }
    u64 seed() const {
        return kshim::seed_from_env(std::get<2>(GetParam()) * 1000003 + static_cast<u64>(cls()) * 31 +
                                    static_cast<u64>(trig()) + 0x9a0f);
    }

    kshim::RuntimeOptions runtime_options() const override {
        kshim::RuntimeOptions o;
        o.seed = seed();
        o.preempt_probability = 0.3;
        return kshim::options_from_env(o);
    }
    bool interleaving_agnostic() const override { return true; }

    void SetUp() override {
        PanfrostTest::SetUp();
        ASSERT_TRUE(wait_autosuspend());
        ASSERT_EQ(machine_->open_file(&bystander_), 0);
        ASSERT_EQ(pf_job_bo(file, kBoSize, &cbo_), 0);
        ASSERT_EQ(pf_job_bo(bystander_, kBoSize, &bbo_), 0);
    }

    void TearDown() override {
        if (HasFailure()) {
            // The driver's side of the story (the kernel log keeps every level).
            const std::vector<kshim::LogLine> lines = kshim::log_lines();
            for (size_t i = lines.size() > 400 ? lines.size() - 400 : 0; i < lines.size(); i++)
                std::fprintf(stderr, "[log] %s\n", lines[i].text.c_str());
        }
        if (pdev_hooked_)
            machine_->pdev()->desc.iomem->trace_hook = nullptr;
        kshim::fault_inject_disarm();
        for (Chain& c : chains_)
            if (c.fence)
                kshim::dma_fence_put(c.fence);
        chains_.clear();
        advance_until_idle(10 * kshim::NSEC_PER_SEC);
        pf_job_bo_release(&cbo_);
        pf_job_bo_release(&bbo_);
        if (bystander_)
            drm::drm_release(bystander_);
        bystander_ = nullptr;
        PanfrostTest::TearDown();
        table().record(class_name(cls()), trigger_name(trig()), seed(), HasFailure(),
                       completed_in_reset_ + lost_in_reset_);
    }

    // Lays out and submits one chain of `nulls` NULL jobs and a WRITE_VALUE. A refused SUBMIT
    // is only allowed while allocations fail.
    void submit_chain(bool culprit, u32 nulls) {
        drm::drm_file* f = culprit ? file : bystander_;
        PanfrostJobBo* bo = culprit ? &cbo_ : &bbo_;
        Chain c;
        c.culprit = culprit;
        c.bo = bo;
        c.target = bo->slot();
        c.value = next_value_++;
        c.head = bo->chain(nulls, c.target, c.value);
        ASSERT_NE(c.head, 0u) << "job BO full";
        c.jobs = nulls + 1;
        u32 sync = 0;
        int ret = pf_syncobj_create(f, &sync);
        if (ret) {
            EXPECT_TRUE(kshim::fault_inject_armed()) << ret;
            return;
        }
        ret = pf_submit(f, {.jc = c.head,
                            .bos = {bo->handle},
                            .out_sync = sync,
                            .requirements = culprit ? 0u : static_cast<u32>(PANFROST_JD_REQ_FS)});
        if (ret == 0) {
            c.fence = pf_syncobj_fence(f, sync);
            EXPECT_NE(c.fence, nullptr);
            chains_.push_back(c);
        } else {
            EXPECT_TRUE(kshim::fault_inject_armed()) << "SUBMIT refused: " << ret;
        }
        pf_syncobj_destroy(f, sync);
    }

    // The fault of the class, armed now (for a reset class, with the reset requested when
    // `with_reset`).
    void arm_fault(bool with_reset) {
        if (armed_)
            return;
        armed_ = true;
        std::mt19937_64 rng(seed() ^ 0xfa17);
        FaultSpec s;
        s.js = 1;
        s.trigger = FaultTrigger::nth_occurrence(1 + rng() % 3);
        switch (cls()) {
        case FaultClass::JobHang: s.kind = FaultKind::JobHang; break;
        case FaultClass::JobFault:
            s.kind = FaultKind::JobFault;
            s.exception = DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT;
            break;
        case FaultClass::BusFault:
            s.kind = FaultKind::JobBusFault;
            s.fault_addr = 0x4000000;
            break;
        case FaultClass::IrqLost: s.kind = FaultKind::JobIrqLost; break;
        case FaultClass::SoftStopIgnored:
            s.kind = FaultKind::SoftStopIgnored;
            s.trigger = FaultTrigger::always();
            break;
        case FaultClass::ResetStuck:
            s.kind = FaultKind::ResetNeverCompletes;
            s.trigger = FaultTrigger::always();
            s.js = -1;
            break;
        case FaultClass::AllocFailure:
            kshim::fault_inject_arm({.probability = 0.2, .seed = seed()});
            alloc_until_ = kshim::ktime_get() + 5 * kshim::NSEC_PER_MSEC;
            break;
        }
        if (cls() != FaultClass::AllocFailure)
            fault_id_ = gpu().faults().add(s);
        if (with_reset || !job_kind(cls()))
            request_reset();
    }
    void request_reset() {
        if (reset_requested_)
            return;
        reset_requested_ = true;
        panfrost_device_schedule_reset(pfdev);
    }
    void end_alloc_failures() {
        if (!kshim::fault_inject_armed())
            return;
        if (alloc_until_ > kshim::ktime_get())
            advance(alloc_until_ - kshim::ktime_get());
        kshim::fault_inject_disarm();
    }

    // DuringSuspend: arms the fault at the n-th register write of a runtime suspend. The hook runs
    // inside the driver: it only adds a FaultPlan spec (a reset class's reset is requested after).
    void install_suspend_hook(u32 nth) {
        pdev_hooked_ = true;
        machine_->pdev()->desc.iomem->trace_hook = [this, nth, seen = 0u](bool write, u32, u32) mutable {
            if (!write || armed_ || kshim::pm_runtime_status(dev()) != kshim::RPM_SUSPENDING)
                return;
            if (++seen == nth)
                arm_fault_from_hook();
        };
    }
    void arm_fault_from_hook() {
        // A reset class's reset (and AllocFailure's window) wait for the test body.
        if (job_kind(cls()))
            arm_fault(false);
        else
            hook_hit_ = true;
    }

    bool all_signalled() {
        for (const Chain& c : chains_)
            if (!kshim::dma_fence_is_signaled(c.fence))
                return false;
        return true;
    }

    void check_reports() {
        for (const kshim::Report& r : kshim::take_reports())
            ADD_FAILURE() << "unexpected report [" << kshim::report_kind_name(r.kind) << "]: " << r.title;
    }

    // Whether the class may leave a chain the reset cannot resume (a slot that does not
    // soft-stop, or a chain that ended without its IRQ): the reset submits it again from its
    // head, whose DONE header the GPU refuses with DATA_INVALID_FAULT (-EINVAL).
    bool may_restart_chains() const {
        return cls() == FaultClass::JobHang || cls() == FaultClass::SoftStopIgnored || cls() == FaultClass::IrqLost;
    }

    bool ran_to_the_end(const Chain& c) {
        for (u64 j : c.bo->jobs_of(c.head, c.jobs + 1))
            if ((c.bo->header(j)->exception_status & 0xFF) != desc::kJobStatusDone)
                return false;
        return c.bo->value(c.target) == c.value;
    }

    bool never_started(const Chain& c) {
        for (u64 j : c.bo->jobs_of(c.head, c.jobs + 1))
            if (c.bo->header(j)->exception_status != 0)
                return false;
        return c.bo->value(c.target) == 0;
    }
    bool reset_happened() const { return reset_requested_ || kshim::log_contains("gpu sched timeout"); }

    void check_invariants() {
        const u64 fired = fault_id_ >= 0 ? gpu().faults().fired(fault_id_) : 0;
        u64 culprit_errors = 0, submitted_jobs = 0;
        for (const Chain& c : chains_) {
            submitted_jobs += c.jobs;
            const int st = kshim::dma_fence_get_status(c.fence);
            const std::string who = std::string(c.culprit ? "culprit" : "bystander") + " chain of " +
                                    std::to_string(c.jobs) + " jobs, value " + std::to_string(c.value);
            if (st == 1) {
                // Ran once, to the end: every header DONE, the value written.
                EXPECT_TRUE(ran_to_the_end(c)) << who;
                continue;
            }
            // A chain that completed while a reset had the schedulers stopped: the reset's
            // panfrost_job_run finds jc 0 and returns no fence, and drm_sched_start finishes such
            // a job with -ECANCELED (upstream behaves so). It ran, once; it is not a failure.
            if (st == -ECANCELED && ran_to_the_end(c)) {
                EXPECT_TRUE(reset_happened()) << who << ": cancelled after running, without a reset";
                completed_in_reset_++;
                continue;
            }
            // A chain that never started, cancelled by a reset: the reset writes NOP to the NEXT
            // registers and soft-stops the current chain; when that chain completes instead of
            // stopping, the slot is idle with the NEXT job still recorded, and the IRQ handler
            // counts it as done (the merged-DONE rule), so the reset's run_job finds jc 0 and
            // drm_sched_start cancels it. Upstream does the same: innocent work lost, with an
            // error, never half-run.
            // A hung job never writes its header either: the hang's own chain is the class's
            // error, counted first.
            const bool hang_victim = cls() == FaultClass::JobHang && c.culprit && culprit_errors < fired;
            if (st == -ECANCELED && never_started(c) && reset_happened() && !hang_victim) {
                lost_in_reset_++;
                continue;
            }
            if (!c.culprit && cls() != FaultClass::AllocFailure) {
                ADD_FAILURE() << who << " (innocent) failed with " << st;
                continue;
            }
            culprit_errors++;
            switch (cls()) {
            case FaultClass::JobFault:
            case FaultClass::BusFault: EXPECT_EQ(st, -EINVAL) << who; break;
            case FaultClass::JobHang:
            case FaultClass::SoftStopIgnored:
            case FaultClass::IrqLost: EXPECT_TRUE(st == -ECANCELED || st == -EINVAL) << who << ": " << st; break;
            case FaultClass::ResetStuck: EXPECT_EQ(st, -ECANCELED) << who; break;
            case FaultClass::AllocFailure: EXPECT_TRUE(st == -ENOMEM || st == -ECANCELED) << who << ": " << st; break;
            }
        }
        // A job fault fails exactly the chain it hit; a hang fails its chain (and, when the reset
        // cannot stop a chain, the one it restarts).
        switch (cls()) {
        case FaultClass::JobFault:
        case FaultClass::BusFault: EXPECT_EQ(culprit_errors, fired); break;
        case FaultClass::JobHang: EXPECT_LE(culprit_errors, 2 * fired); break;
        case FaultClass::IrqLost: EXPECT_LE(culprit_errors, fired); break;
        case FaultClass::ResetStuck: EXPECT_EQ(culprit_errors, 0u); break;
        case FaultClass::SoftStopIgnored: EXPECT_LE(culprit_errors, 1u); break;
        case FaultClass::AllocFailure: break;
        }
        if (!may_restart_chains()) {
            EXPECT_FALSE(kshim::log_contains("DATA_INVALID_FAULT")) << "a job ran twice";
        }
        u64 completed = 0;
        {
            kshim::SpinGuard g(gpu().lock());
            for (u32 js = 0; js < 3; js++)
                completed += gpu().jobs().stats_locked(js).jobs_completed;
        }
        EXPECT_LE(completed, submitted_jobs) << "the GPU completed more jobs than were submitted";
    }

    // Both files still run a job, and the GPU autosuspends after it.
    void check_device_works() {
        gpu().faults().clear();
        const size_t before = chains_.size();
        ASSERT_NO_FATAL_FAILURE(submit_chain(true, 2));
        ASSERT_NO_FATAL_FAILURE(submit_chain(false, 2));
        ASSERT_EQ(chains_.size(), before + 2);
        ASSERT_TRUE(run_until([&] { return all_signalled(); }, kshim::NSEC_PER_SEC));
        for (size_t i = before; i < chains_.size(); i++) {
            EXPECT_EQ(kshim::dma_fence_get_status(chains_[i].fence), 1);
            EXPECT_EQ(chains_[i].bo->value(chains_[i].target), chains_[i].value);
        }
        EXPECT_EQ(pfdev->reset.pending.load(), 0);
        EXPECT_TRUE(wait_autosuspend());
    }

    static constexpr size_t kBoSize = 1024 * 1024;
    drm::drm_file* bystander_ = nullptr;
    PanfrostJobBo cbo_, bbo_;
    std::vector<Chain> chains_;
    u64 next_value_ = 0x1000;
    int fault_id_ = -1;
    bool armed_ = false;
    bool hook_hit_ = false;
    bool reset_requested_ = false;
    bool pdev_hooked_ = false;
    ktime_t alloc_until_ = 0;
    u64 completed_in_reset_ = 0;  // ran to the end, reported -ECANCELED by the reset
    u64 lost_in_reset_ = 0;       // never started, reported -ECANCELED by the reset
};

TEST_P(PanfrostCampaign, EveryFenceSignalsOnceAndTheDeviceRecovers) {
    std::mt19937_64 rng(seed());
    // Chain lengths: most short, some long enough (300 NULL jobs, 30 us) to be running when
    // the fault or the reset comes.
    auto length = [&] {
        static constexpr u32 kLen[] = {0, 0, 3, 10, 50, 300};
        return kLen[rng() % std::size(kLen)];
    };
    auto gap = [&] { advance(static_cast<ktime_t>(rng() % 40) * kUs); };

    // The workload: 12 culprit chains and 8 bystander chains in a seeded order.
    constexpr int kCulprit = 12, kBystander = 8;
    std::vector<bool> order;
    for (int i = 0; i < kCulprit; i++)
        order.push_back(true);
    for (int i = 0; i < kBystander; i++)
        order.push_back(false);
    std::shuffle(order.begin(), order.end(), rng);
    const size_t arm_at = 2 + rng() % (order.size() - 4);

    switch (trig()) {
    case Trigger::BeforeSubmit:
        arm_fault(false);
        for (size_t i = 0; i < order.size(); i++) {
            ASSERT_NO_FATAL_FAILURE(submit_chain(order[i], length()));
            gap();
        }
        break;
    case Trigger::WhileRunning:
    case Trigger::DuringReset:
        for (size_t i = 0; i < order.size(); i++) {
            if (i == arm_at)
                arm_fault(trig() == Trigger::DuringReset);
            ASSERT_NO_FATAL_FAILURE(submit_chain(order[i], length()));
            gap();
        }
        break;
    case Trigger::DuringSuspend: {
        // The first half runs to completion, the GPU autosuspends (where the hook arms the
        // fault), and the second half wakes it up again.
        install_suspend_hook(static_cast<u32>(1 + rng() % 6));
        for (size_t i = 0; i < order.size() / 2; i++)
            ASSERT_NO_FATAL_FAILURE(submit_chain(order[i], length()));
        ASSERT_TRUE(run_until([&] { return all_signalled(); }, kSignalBound));
        ASSERT_TRUE(wait_autosuspend());
        if (!armed_)
            arm_fault(false);  // a suspend with fewer register writes: right after it
        for (size_t i = order.size() / 2; i < order.size(); i++) {
            ASSERT_NO_FATAL_FAILURE(submit_chain(order[i], length()));
            gap();
        }
        if (hook_hit_)
            request_reset();
        break;
    }
    case Trigger::WithNext: {
        // The bystander's work and half the culprit's first; then, on an idle slot 1, a long
        // chain (the fault's, nth = 1) with a short one behind it in NEXT.
        for (size_t i = 0; i < order.size() / 2; i++) {
            ASSERT_NO_FATAL_FAILURE(submit_chain(order[i], length()));
            gap();
        }
        ASSERT_TRUE(run_until([&] { return panfrost_jm_is_idle(pfdev) && all_signalled(); }, kSignalBound));
        armed_ = false;
        arm_fault(false);
        if (fault_id_ >= 0 && job_kind(cls())) {
            // Re-arm on the very next slot-1 job.
            gpu().faults().clear();
            FaultSpec s;
            s.js = 1;
            s.trigger = FaultTrigger::nth_occurrence(1);
            s.kind = cls() == FaultClass::JobHang    ? FaultKind::JobHang
                     : cls() == FaultClass::JobFault ? FaultKind::JobFault
                     : cls() == FaultClass::BusFault ? FaultKind::JobBusFault
                                                     : FaultKind::JobIrqLost;
            s.exception = DRM_PANFROST_EXCEPTION_JOB_CONFIG_FAULT;
            s.fault_addr = 0x4000000;
            fault_id_ = gpu().faults().add(s);
        }
        ASSERT_NO_FATAL_FAILURE(submit_chain(true, 300));
        ASSERT_NO_FATAL_FAILURE(submit_chain(true, 0));
        for (size_t i = order.size() / 2; i < order.size(); i++) {
            ASSERT_NO_FATAL_FAILURE(submit_chain(order[i], length()));
            gap();
        }
        break;
    }
    }
    end_alloc_failures();

    ASSERT_TRUE(run_until([&] { return all_signalled(); }, kSignalBound)) << "a fence never signalled";
    ASSERT_TRUE(run_until([&] { return panfrost_jm_is_idle(pfdev) && !pfdev->reset.pending.load(); }, kSignalBound));
    check_invariants();
    check_reports();
    check_device_works();
    check_reports();
}

std::string param_name(const ::testing::TestParamInfo<Param>& p) {
    return std::string(class_name(std::get<0>(p.param))) + "_" + trigger_name(std::get<1>(p.param)) + "_seed" +
           std::to_string(std::get<2>(p.param));
}

INSTANTIATE_TEST_SUITE_P(Campaign, PanfrostCampaign, ::testing::ValuesIn(all_params()), param_name);

}  // namespace
}  // namespace panfrost::testing
