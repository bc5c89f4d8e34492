// `upanthor sweep` (sweep.h): seeds in forked processes, results over pipes, a summary with replays.
#include "tools/upanthor/sweep.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel_shim/time.h"
#include "tools/capture/capture_format.h"
#include "tools/upanthor/cli.h"
#include "tools/upanthor/progress.h"
#include "tools/upanthor/replay.h"
#include "tools/upanthor/results.h"
#include "tools/upanthor/run_state.h"
#include "tools/upanthor/runner.h"
#include "tools/upanthor/scenario.h"

namespace upanthor {
namespace {

namespace sc = upanthor::scenario;

using results::kMaxListed;
using run_detail::json_str;
// Poll timeout: how often the progress bar's rate and ETA refresh while no run finishes.
constexpr int kPollMs = 100;

std::optional<std::uint64_t> parse_u64(const std::string& v) {
    if (v.empty() || v[0] == '-' || v[0] == '+' || v[0] == ' ')
        return std::nullopt;
    char* end = nullptr;
    errno = 0;
    const std::uint64_t x = std::strtoull(v.c_str(), &end, 0);
    if (*end || errno)
        return std::nullopt;
    return x;
}

// One seed's result, as the child reports it (or as the parent makes it up for a crash).
struct SeedResult {
    std::uint64_t seed = 0;
    bool passed = false;
    std::vector<std::string> failures;  // the first is what the summary shows
};

// The child's report: "P"/"F", then each failure line; lines end in '\n' (newlines inside a
// failure are flattened). The parent reads until EOF, so a child that dies mid-way is told apart by
// its exit status, not by a torn message.
std::string encode(const RunOutcome& o) {
    std::string msg = o.passed ? "P\n" : "F\n";
    auto add = [&msg](std::string line) {
        std::replace(line.begin(), line.end(), '\n', ' ');
        msg += line + "\n";
    };
    if (!o.setup_error.empty())
        add("setup failed: " + o.setup_error);
    for (const std::string& f : o.failures)
        add(f);
    if (!o.passed && o.setup_error.empty() && o.failures.empty())
        add("failed (the run reported no detail)");
    return msg;
}

bool decode(const std::string& msg, SeedResult* r) {
    if (msg.size() < 2 || (msg[0] != 'P' && msg[0] != 'F') || msg[1] != '\n' || msg.back() != '\n')
        return false;
    r->passed = msg[0] == 'P';
    for (size_t start = 2, nl; start < msg.size(); start = nl + 1) {
        nl = msg.find('\n', start);
        r->failures.push_back(msg.substr(start, nl - start));
    }
    return true;
}

bool write_all(int fd, const std::string& s) {
    for (size_t off = 0; off < s.size();) {
        const ssize_t n = write(fd, s.data() + off, s.size() - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        off += static_cast<size_t>(n);
    }
    return true;
}

// Test hook (cli_test.py sweep_crash): the child for this seed aborts instead of running, so the
// crash path is exercised without a crashing driver.
std::optional<std::uint64_t> test_abort_seed() {
    const char* v = std::getenv("UPANTHOR_SWEEP_TEST_ABORT_SEED");
    return v ? parse_u64(v) : std::nullopt;
}

// In the child: never returns.
// What one seed runs: the scenario's run, or the replay of a capture.
using SeedRun = std::function<RunOutcome(std::uint64_t seed, double preempt)>;

[[noreturn]] void child_main(const SeedRun& run, std::uint64_t seed, double preempt, int wfd,
                             std::optional<std::uint64_t> abort_seed) {
    // Keep the parent's terminal for the summary and the bar: the driver's log of a failing seed
    // is what its replay command shows.
    if (int null = open("/dev/null", O_WRONLY); null >= 0) {
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        close(null);
    }
    std::signal(SIGPIPE, SIG_DFL);
    if (abort_seed && *abort_seed == seed)
        std::abort();
    RunOutcome o;
    try {
        o = run(seed, preempt);
    } catch (const std::exception& e) {
        o = RunOutcome{};
        o.failures.push_back(std::string("exception: ") + e.what());
    } catch (...) {
        o = RunOutcome{};
        o.failures.push_back("exception of an unknown type");
    }
    const bool ok = write_all(wfd, encode(o));
    // _exit: no atexit handlers, no flush of stdio buffers copied from the parent.
    _exit(ok ? 0 : 3);
}

struct Child {
    pid_t pid = -1;
    int fd = -1;  // read end of the result pipe
    std::uint64_t seed = 0;
    std::string buf;
};

std::string status_text(int status) {
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        const char* name = strsignal(sig);
        return "crashed: signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
    }
    if (WIFEXITED(status))
        return "crashed: the worker exited with status " + std::to_string(WEXITSTATUS(status)) + " without a result";
    return "crashed: unknown wait status " + std::to_string(status);
}

// Reaps `c` after its pipe reached EOF and turns what it wrote into a result.
SeedResult reap(Child& c) {
    close(c.fd);
    c.fd = -1;
    int status = 0;
    while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
    }
    SeedResult r;
    r.seed = c.seed;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0) || !decode(c.buf, &r)) {
        r.passed = false;
        r.failures.assign(1, status_text(status));
    }
    return r;
}

// Shell-safe spelling of `arg` for a command a person pastes.
std::string shell_quote(const std::string& arg) {
    const bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) || std::strchr("_./-+:=,@%", ch);
    });
    if (plain)
        return arg;
    std::string q = "'";
    for (char ch : arg)
        q += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return q + "'";
}

std::string replay_command(const std::string& path, std::uint64_t seed, double preempt) {
    return std::string(is_capture_file(path) ? "upanthor replay " : "upanthor run ") + shell_quote(path) + " --seed " +
           std::to_string(seed) + " --preempt " + format_probability(preempt);
}

struct Summary {
    std::string path, name;
    SweepOptions opts;
    unsigned workers = 0;
    std::uint64_t seeds = 0;          // how many the shard has (shard_seed)
    std::vector<SeedResult> failing;  // ascending by seed
    double wall_s = 0;
    std::uint64_t run = 0;
};

void print_text(const Summary& s, std::FILE* out) {
    const SweepOptions& o = s.opts;
    std::fprintf(out, "sweep %s (%s): seeds %" PRIu64 "..%" PRIu64, s.name.c_str(), s.path.c_str(), o.seeds.first,
                 o.seeds.last);
    if (o.shard.count > 1)
        std::fprintf(out, ", shard %" PRIu64 "/%" PRIu64, o.shard.index, o.shard.count);
    std::fprintf(out, ", preempt %s, %u job%s\n", format_probability(o.preempt).c_str(), s.workers,
                 s.workers == 1 ? "" : "s");
    const double rate = s.wall_s > 0 ? static_cast<double>(s.run) / s.wall_s : 0.0;
    std::fprintf(out, "%" PRIu64 " seed%s run: %" PRIu64 " passed, %zu failed in %.2f s wall (%.1f runs/s)\n", s.run,
                 s.run == 1 ? "" : "s", s.run - s.failing.size(), s.failing.size(), s.wall_s, rate);
    if (!s.failing.empty()) {
        std::fprintf(out, "failing seeds (replay each with the command below it):\n");
        for (size_t k = 0; k < s.failing.size() && k < kMaxListed; k++) {
            const SeedResult& r = s.failing[k];
            std::fprintf(out, "  seed %" PRIu64 ": %s", r.seed, r.failures.front().c_str());
            if (r.failures.size() > 1)
                std::fprintf(out, " (+%zu more)", r.failures.size() - 1);
            std::fprintf(out, "\n    %s\n", replay_command(s.path, r.seed, o.preempt).c_str());
        }
        if (s.failing.size() > kMaxListed)
            std::fprintf(out, "  ... and %zu more failing seeds (--json lists them all)\n",
                         s.failing.size() - kMaxListed);
    }
    std::fprintf(out, "%s\n", s.failing.empty() ? "PASS" : "FAIL");
}

void print_json(const Summary& s, std::FILE* out) {
    const SweepOptions& o = s.opts;
    const double rate = s.wall_s > 0 ? static_cast<double>(s.run) / s.wall_s : 0.0;
    std::fprintf(
        out,
        "{\n  \"kind\": \"sweep\",\n  \"format\": %d,\n  \"scenario\": %s,\n  \"file\": %s,\n  \"range\": {\"first\": "
        "%" PRIu64 ", \"last\": %" PRIu64 "},\n  \"shard\": {\"index\": %" PRIu64 ", \"count\": %" PRIu64
        "},\n  \"preempt\": %s,\n"
        "  \"jobs\": %u,\n  \"passed\": %s,\n  \"seeds_run\": %" PRIu64 ",\n  \"seeds_passed\": %" PRIu64
        ",\n  \"seeds_failed\": %zu,\n  \"wall_time_s\": %.3f,\n  \"runs_per_s\": %.1f,\n  \"seeds\": [",
        results::kFormatVersion, json_str(s.name).c_str(), json_str(s.path).c_str(), o.seeds.first, o.seeds.last,
        o.shard.index, o.shard.count, format_probability(o.preempt).c_str(), s.workers,
        s.failing.empty() ? "true" : "false", s.run, s.run - s.failing.size(), s.failing.size(), s.wall_s, rate);
    for (std::uint64_t k = 0; k < s.seeds; k++)
        std::fprintf(out, "%s%" PRIu64, k ? ", " : "", shard_seed(o.seeds, o.shard, k));
    std::fprintf(out, "],\n  \"failing\": [");
    for (size_t k = 0; k < s.failing.size(); k++) {
        const SeedResult& r = s.failing[k];
        std::fprintf(out, "%s\n    {\"seed\": %" PRIu64 ", \"replay\": %s, \"failures\": [", k ? "," : "", r.seed,
                     json_str(replay_command(s.path, r.seed, o.preempt)).c_str());
        for (size_t f = 0; f < r.failures.size(); f++)
            std::fprintf(out, "%s%s", f ? ", " : "", json_str(r.failures[f]).c_str());
        std::fprintf(out, "]}");
    }
    std::fprintf(out, "%s]\n}\n", s.failing.empty() ? "" : "\n  ");
}

// Ignores SIGPIPE for the parent's lifetime in the sweep (a child's pipe is only read, but a
// closed stdout must not kill the sweep half-way) and restores it after.
class IgnoreSigpipe {
public:
    IgnoreSigpipe() { old_ = std::signal(SIGPIPE, SIG_IGN); }
    ~IgnoreSigpipe() { std::signal(SIGPIPE, old_); }

private:
    void (*old_)(int) = SIG_DFL;
};

}  // namespace

std::optional<SeedRange> parse_seed_range(const std::string& text) {
    const size_t dots = text.find("..");
    if (dots == std::string::npos)
        return std::nullopt;
    const auto a = parse_u64(text.substr(0, dots));
    const auto b = parse_u64(text.substr(dots + 2));
    if (!a || !b || *a > *b)
        return std::nullopt;
    return SeedRange{*a, *b};
}

std::optional<Shard> parse_shard(const std::string& text) {
    const size_t slash = text.find('/');
    if (slash == std::string::npos)
        return std::nullopt;
    const auto i = parse_u64(text.substr(0, slash));
    const auto n = parse_u64(text.substr(slash + 1));
    if (!i || !n || *n == 0 || *i >= *n)
        return std::nullopt;
    return Shard{*i, *n};
}

std::optional<Shard> shard_from_environment(std::string* why) {
    auto env = [](const char* name) -> std::optional<std::uint64_t> {
        const char* v = std::getenv(name);
        return v ? parse_u64(v) : std::nullopt;
    };
    auto set = [](const char* name) { return std::getenv(name) != nullptr; };
    auto checked = [why](std::optional<std::uint64_t> i, std::optional<std::uint64_t> n,
                         const char* from) -> std::optional<Shard> {
        if (!i || !n || *n == 0 || *i >= *n) {
            *why = std::string("--shard auto: ") + from + " does not give an index below a non-zero count";
            return std::nullopt;
        }
        return Shard{*i, *n};
    };
    if (set("UPANTHOR_SHARD_INDEX"))
        return checked(env("UPANTHOR_SHARD_INDEX"), env("UPANTHOR_SHARD_COUNT"),
                       "UPANTHOR_SHARD_INDEX/UPANTHOR_SHARD_COUNT");
    if (set("SLURM_ARRAY_TASK_ID")) {
        // A job array --array=MIN-MAX[:STEP]: task ids MIN, MIN+STEP, ... (SLURM_ARRAY_TASK_COUNT of them).
        const auto id = env("SLURM_ARRAY_TASK_ID");
        const std::uint64_t min = env("SLURM_ARRAY_TASK_MIN").value_or(0);
        const std::uint64_t step = std::max<std::uint64_t>(env("SLURM_ARRAY_TASK_STEP").value_or(1), 1);
        std::optional<std::uint64_t> index;
        if (id && *id >= min && (*id - min) % step == 0)
            index = (*id - min) / step;
        return checked(index, env("SLURM_ARRAY_TASK_COUNT"),
                       "SLURM_ARRAY_TASK_ID/_MIN/_STEP/_COUNT (an array of evenly spaced task ids)");
    }
    if (set("JOB_COMPLETION_INDEX"))  // a Kubernetes Indexed Job: the count is .spec.completions
        return checked(env("JOB_COMPLETION_INDEX"), env("UPANTHOR_SHARD_COUNT"),
                       "JOB_COMPLETION_INDEX with UPANTHOR_SHARD_COUNT (set it to the Job's completions)");
    *why =
        "--shard auto: no shard in the environment (UPANTHOR_SHARD_INDEX/_COUNT, SLURM_ARRAY_TASK_ID, "
        "JOB_COMPLETION_INDEX)";
    return std::nullopt;
}

std::optional<unsigned> parse_jobs(const std::string& text) {
    std::optional<std::uint64_t> n = text == "auto" ? std::optional<std::uint64_t>(0) : parse_u64(text);
    if (!n || *n > kMaxJobs)
        return std::nullopt;
    if (*n == 0) {
        const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        return cpus > 0 ? static_cast<unsigned>(std::min<long>(cpus, kMaxJobs)) : 1u;
    }
    return static_cast<unsigned>(*n);
}

std::uint64_t shard_seed_count(const SeedRange& range, const Shard& shard) {
    const std::uint64_t span = range.last - range.first;
    if (span < shard.index)
        return 0;
    const std::uint64_t n = (span - shard.index) / shard.count;
    return n == UINT64_MAX ? n : n + 1;
}

std::string format_probability(double p) {
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, p);
    return std::string(buf, r.ptr);
}

int cmd_sweep(const std::string& path, const SweepOptions& opts, std::FILE* out, std::FILE* err) {
    // A capture (upanthor replay) or a scenario (upanthor run), each read once, here.
    Summary sum;
    sum.path = path;
    std::optional<sc::ParseResult> pr;
    capture::Capture cap;
    SeedRun run;
    if (is_capture_file(path)) {
        std::string why;
        if (!capture::read_capture(path, &cap, &why)) {
            std::fprintf(err, "upanthor sweep: %s\n", why.c_str());
            return kExitUsage;
        }
        sum.name = cap.header.program;
        run = [&](std::uint64_t seed, double preempt) {
            ReplayOptions ro;
            ro.seed = seed;
            ro.preempt_probability = preempt;
            return replay_outcome_as_run(replay_capture(cap, path, ro, nullptr));
        };
    } else {
        pr = sc::parse_scenario_file(path);
        if (!pr->ok()) {
            for (const sc::Diagnostic& d : pr->diagnostics)
                std::fprintf(err, "%s\n", d.to_string().c_str());
            return kExitUsage;
        }
        sum.name = pr->scenario->name;
        run = [&](std::uint64_t seed, double preempt) {
            RunOptions ro;
            ro.seed = seed;
            ro.preempt_probability = preempt;
            return run_scenario(*pr->scenario, ro, nullptr);
        };
    }
    sum.opts = opts;
    sum.seeds = shard_seed_count(opts.seeds, opts.shard);
    sum.workers =
        static_cast<unsigned>(std::min<std::uint64_t>(std::max(opts.jobs, 1u), std::max<std::uint64_t>(sum.seeds, 1)));
    const std::optional<std::uint64_t> abort_seed = test_abort_seed();

    IgnoreSigpipe sigpipe;
    ProgressBar bar(opts.progress_out, sum.seeds);
    const std::uint64_t t0 = kshim::host_monotonic_ns();
    std::vector<Child> running;
    std::vector<pollfd> pfds;
    std::uint64_t next = 0;  // index of the next seed to start
    int fatal_errno = 0;
    const char* fatal_what = nullptr;
    // Nothing buffered may be written twice by a child (it _exits, but be explicit).
    std::fflush(nullptr);
    while ((next < sum.seeds && !fatal_what) || !running.empty()) {
        while (!fatal_what && running.size() < sum.workers && next < sum.seeds) {
            const std::uint64_t seed = shard_seed(opts.seeds, opts.shard, next);
            int fds[2];
            if (pipe2(fds, O_CLOEXEC) < 0) {
                if (running.empty()) {
                    fatal_what = "pipe";
                    fatal_errno = errno;
                }
                break;
            }
            const pid_t pid = fork();
            if (pid == 0) {
                close(fds[0]);
                for (const Child& c : running)
                    close(c.fd);
                child_main(run, seed, opts.preempt, fds[1], abort_seed);
            }
            close(fds[1]);
            if (pid < 0) {
                close(fds[0]);
                // Out of processes: wait for one to finish, unless none runs.
                if (running.empty()) {
                    fatal_what = "fork";
                    fatal_errno = errno;
                }
                break;
            }
            running.push_back(Child{pid, fds[0], seed, {}});
            next++;
        }
        if (running.empty())
            break;
        pfds.clear();
        for (const Child& c : running)
            pfds.push_back(pollfd{c.fd, POLLIN, 0});
        if (poll(pfds.data(), pfds.size(), kPollMs) < 0 && errno != EINTR) {
            fatal_what = "poll";
            fatal_errno = errno;
            break;
        }
        // Back to front, so that erasing keeps the remaining indices valid.
        for (size_t k = pfds.size(); k-- > 0;) {
            if (!pfds[k].revents)
                continue;
            Child& c = running[k];
            char buf[4096];
            const ssize_t n = read(c.fd, buf, sizeof buf);
            if (n > 0) {
                c.buf.append(buf, static_cast<size_t>(n));
                continue;
            }
            if (n < 0 && (errno == EINTR || errno == EAGAIN))
                continue;
            SeedResult r = reap(c);
            sum.run++;
            if (!r.passed)
                sum.failing.push_back(std::move(r));
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        }
        bar.update(sum.run, sum.failing.size());
    }
    // Only reached with children left on a poll error: do not leave them behind.
    for (Child& c : running) {
        kill(c.pid, SIGKILL);
        reap(c);
    }
    bar.finish();
    sum.wall_s = static_cast<double>(kshim::host_monotonic_ns() - t0) * 1e-9;
    if (fatal_what) {
        std::fprintf(err, "upanthor sweep: %s: %s (%" PRIu64 " of %" PRIu64 " seeds run)\n", fatal_what,
                     std::strerror(fatal_errno), sum.run, sum.seeds);
        return kExitFailure;
    }
    std::sort(sum.failing.begin(), sum.failing.end(),
              [](const SeedResult& a, const SeedResult& b) { return a.seed < b.seed; });
    if (opts.json)
        print_json(sum, out);
    else
        print_text(sum, out);
    return sum.failing.empty() ? kExitOk : kExitFailure;
}

}  // namespace upanthor
