// `upanthor run`: the expectations check and the summary, as text or JSON (run_state.h).
#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstring>

#include "tools/upanthor/run_state.h"

namespace upanthor::run_detail {

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
    if (st == 1)
        return "signaled";
    if (st == 0)
        return "pending";
    return errno_name(st);
}

u64 percentile(const std::vector<u64>& sorted, unsigned pct) {
    if (sorted.empty())
        return 0;
    return sorted[(sorted.size() - 1) * pct / 100];
}

bool fence_expect_holds(const sc::FenceExpect& fe, int st, std::string* want) {
    switch (fe.state) {
    case sc::FenceExpect::State::Signaled: *want = "signaled"; return st == 1;
    case sc::FenceExpect::State::Pending: *want = "pending"; return st == 0;
    case sc::FenceExpect::State::Error: *want = errno_name(fe.error); return st == fe.error;
    }
    return false;
}

std::string memory_mismatch(const sc::Scenario& s, const sc::MemoryExpect& me, const u8* bo_cpu) {
    u64 v = 0;
    std::memcpy(&v, bo_cpu + me.offset, 8);
    if (v == me.value)
        return {};
    char buf[160];
    std::snprintf(buf, sizeof(buf), "memory %s+0x%" PRIx64 ": 0x%" PRIx64 ", expected 0x%" PRIx64,
                  s.bos[me.bo].name.c_str(), me.offset, v, me.value);
    return buf;
}

RunOutcome make_outcome(const std::string& file, u64 seed, const std::string& setup_error,
                        const std::vector<Failure>& failures, const std::vector<std::string>& kernel_findings,
                        s64 virtual_ns, double wall_s) {
    RunOutcome o;
    o.passed = setup_error.empty() && failures.empty() && kernel_findings.empty();
    o.seed = seed;
    o.setup_error = setup_error;
    for (const Failure& f : failures)
        o.failures.push_back(file + ":" + std::to_string(f.line) + ": expectation failed: " + f.what);
    for (const std::string& k : kernel_findings)
        o.failures.push_back("kernel: " + k);
    o.virtual_ns = virtual_ns;
    o.wall_s = wall_s;
    return o;
}

void report_problems(std::FILE* out, const std::string& file, const std::string& setup_error,
                     const std::vector<Failure>& failures, const std::vector<std::string>& kernel_findings) {
    if (!setup_error.empty())
        std::fprintf(out, "run failed: %s\n", setup_error.c_str());
    for (const Failure& f : failures)
        std::fprintf(out, "%s:%u: expectation failed: %s\n", file.c_str(), f.line, f.what.c_str());
    for (const std::string& k : kernel_findings)
        std::fprintf(out, "kernel: %s\n", k.c_str());
}

void report_problems_json(std::FILE* out, u32 checked, const std::vector<Failure>& failures,
                          const std::vector<std::string>& kernel_findings) {
    std::fprintf(out, "  \"expectations_checked\": %u,\n  \"failures\": [", checked);
    for (size_t i = 0; i < failures.size(); i++)
        std::fprintf(out, "%s\n    {\"line\": %u, \"message\": %s}", i ? "," : "", failures[i].line,
                     json_str(failures[i].what).c_str());
    std::fprintf(out, "\n  ],\n  \"kernel_findings\": [");
    for (size_t i = 0; i < kernel_findings.size(); i++)
        std::fprintf(out, "%s\n    %s", i ? "," : "", json_str(kernel_findings[i]).c_str());
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
            const int st = p->submit_error ? p->submit_error : (p->done ? kshim::dma_fence_get_status(p->fence) : 0);
            std::string want;
            if (!fence_expect_holds(fe, st, &want)) {
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
                std::snprintf(buf, sizeof(buf), "': state 0x%x, expected 0x%x (fatal_queues 0x%x)", st->state, ge.state,
                              st->fatal_queues);
                fail(ge.loc.line, "group '" + s_.groups[ge.group].name + "#" + std::to_string(i) + buf);
                break;
            }
        }
    }
    for (const sc::MemoryExpect& me : s_.expect.memory) {
        checked_++;
        if (std::string m = memory_mismatch(s_, me, bos_[me.bo].cpu); !m.empty())
            fail(me.loc.line, std::move(m));
    }
    for (const sc::LatencyExpect& le : s_.expect.latency) {
        // The bounds are virtual-time figures; on real threads latency depends on the host's load.
        if (opts_.real) {
            notes_.push_back("line " + std::to_string(le.loc.line) + ": latency bounds are not checked with --real");
            continue;
        }
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

void Runner::report(std::FILE* out) const {
    const double vt_ms = static_cast<double>(t_end_ - t0_) / 1e6;
    std::fprintf(out, "scenario %s (%s), seed %" PRIu64 "\n", s_.name.c_str(), s_.file.c_str(), seed_);
    std::fprintf(out, "virtual time %.3f ms, wall %.3f s (%.1fx real time)\n", vt_ms, wall_,
                 wall_ > 0 ? vt_ms / 1e3 / wall_ : 0.0);
    std::fprintf(out,
                 "scheduler: %" PRIu64 " ticks (%" PRIu64 " full), %" PRIu64 " CSG starts/resumes, %" PRIu64
                 " suspends/terminates\n",
                 stats_.ticks, stats_.full_ticks, stats_.csg_starts, stats_.csg_suspends);
    std::fprintf(out, "gpu: busy %.3f ms (%.1f%%), %" PRIu64 " fault(s) injected, %" PRIu64 " reset(s)\n",
                 static_cast<double>(gpu_busy_ns_) / 1e6,
                 t_end_ > t0_ ? 100.0 * static_cast<double>(gpu_busy_ns_) / static_cast<double>(t_end_ - t0_) : 0.0,
                 faults_fired_, gpu_resets_.load());
    if (real_jobs_)
        std::fprintf(out,
                     "gpu: %" PRIu64 " job(s) on real shader descriptors completed without running their shaders\n",
                     real_jobs_);
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
    report_problems(out, s_.file, setup_error_, failures_, kernel_findings_);
    for (const std::string& n : notes_)
        std::fprintf(out, "note: %s\n", n.c_str());
    if (coredumps_)
        std::fprintf(out, "coredumps: %u written to %s\n", coredumps_->written(), coredumps_->dir().c_str());
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
    std::fprintf(out,
                 "  \"gpu\": {\"busy_us\": %" PRIu64 ", \"faults_injected\": %" PRIu64 ", \"resets\": %" PRIu64
                 ", \"real_descriptor_jobs\": %" PRIu64 "},\n",
                 gpu_busy_ns_ / 1000, faults_fired_, gpu_resets_.load(), real_jobs_);
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
    std::fprintf(out, "\n  ],\n");
    report_problems_json(out, checked_, failures_, kernel_findings_);
    if (coredumps_)
        std::fprintf(out, "\n  ],\n  \"coredumps\": {\"dir\": %s, \"written\": %u},\n  \"error\": %s\n}\n",
                     json_str(coredumps_->dir()).c_str(), coredumps_->written(),
                     setup_error_.empty() ? "null" : json_str(setup_error_).c_str());
    else
        std::fprintf(out, "\n  ],\n  \"error\": %s\n}\n",
                     setup_error_.empty() ? "null" : json_str(setup_error_).c_str());
}

}  // namespace upanthor::run_detail
