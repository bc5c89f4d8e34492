// The `upanthor` command line (cli.h).
#include "tools/upanthor/cli.h"

#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <vector>

#include <unistd.h>

#include "tools/preload/server_main.h"
#include "tools/upanthor/info.h"
#include "tools/upanthor/merge.h"
#include "tools/upanthor/replay.h"
#include "tools/upanthor/runner.h"
#include "tools/upanthor/sweep.h"
#include "umd/cs_disasm.h"

namespace upanthor {
namespace {

constexpr const char* kUsage =
    "usage: upanthor <command> [options]\n"
    "\n"
    "The panthor driver on a simulated Mali-G610, in-process.\n"
    "\n"
    "commands:\n"
    "  info [--gpu MODEL] [--json]   probe the device and print what a client can query\n"
    "  run SCENARIO [options]        run a scenario file and check its expectations\n"
    "  sweep FILE --seeds A..B       run a scenario (or replay a capture) under many seeds\n"
    "  replay CAPTURE [options]      replay a session captured by the preload library\n"
    "  merge FILES... [--json]       one table of sweep shards, campaign shards and fuzz results\n"
    "  disasm FILE [--base VA]       disassemble a raw command-stream binary\n"
    "  serve [--socket PATH]         run the driver as a daemon for preload clients\n"
    "  help [COMMAND]                this text, or a command's\n"
    "\n"
    "exit codes: 0 success, 1 the command failed, 2 bad usage.\n";

struct Command;
using Handler = int (*)(const Command&, const std::map<std::string, std::string>&, const std::vector<std::string>&,
                        std::FILE*, std::FILE*);

struct OptSpec {
    const char* name;  // "--json"
    bool takes_value;
    bool repeatable = false;  // every occurrence counts (joined with kRepeatSep in the option map)
};

constexpr char kRepeatSep = '\n';

// A number in [0, 1] (--preempt), or nothing.
std::optional<double> parse_probability(const std::string& v) {
    char* end = nullptr;
    const double p = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !(p >= 0.0 && p <= 1.0))
        return std::nullopt;
    return p;
}

std::vector<std::string> split_repeated(const std::string& v) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t nl; (nl = v.find(kRepeatSep, start)) != std::string::npos; start = nl + 1)
        out.push_back(v.substr(start, nl - start));
    out.push_back(v.substr(start));
    return out;
}

struct Command {
    const char* name;
    const char* usage;  // full help text
    std::vector<OptSpec> options;
    size_t min_positional, max_positional;
    Handler run;
};

int usage_error(std::FILE* err, const std::string& cmd, const std::string& msg) {
    std::fprintf(err, "upanthor%s%s: %s\n", cmd.empty() ? "" : " ", cmd.c_str(), msg.c_str());
    std::fprintf(err, "Try 'upanthor %s--help' for more information.\n", cmd.empty() ? "" : (cmd + " ").c_str());
    return kExitUsage;
}

int run_info(const Command&, const std::map<std::string, std::string>& opts, const std::vector<std::string>&,
             std::FILE* out, std::FILE* err) {
    const auto gpu = opts.find("--gpu");
    return cmd_info(gpu != opts.end() ? gpu->second : "default", opts.count("--json") != 0, out, err);
}

// --seed, --trace, --preempt and --json, which `run` and `replay` share (RunOptions,
// ReplayOptions): 0, or the usage error's exit code.
template <class Options>
int parse_simulation_options(const Command& c, const std::map<std::string, std::string>& opts, std::FILE* err,
                             Options* ro) {
    if (auto it = opts.find("--seed"); it != opts.end()) {
        const std::string& v = it->second;
        char* end = nullptr;
        errno = 0;
        const uint64_t seed = std::strtoull(v.c_str(), &end, 0);
        if (v.empty() || v[0] == '-' || *end || errno)
            return usage_error(err, c.name, "invalid --seed '" + v + "': expected a non-negative integer");
        ro->seed = seed;
    }
    if (auto it = opts.find("--trace"); it != opts.end()) {
        if (it->second.empty())
            return usage_error(err, c.name, "option '--trace' needs a file name");
        ro->trace_path = it->second;
    }
    if (auto it = opts.find("--preempt"); it != opts.end()) {
        const std::optional<double> p = parse_probability(it->second);
        if (!p)
            return usage_error(err, c.name, "invalid --preempt '" + it->second + "': expected a probability in [0, 1]");
        ro->preempt_probability = *p;
    }
    ro->json = opts.count("--json") != 0;
    return 0;
}

int run_run(const Command& c, const std::map<std::string, std::string>& opts, const std::vector<std::string>& pos,
            std::FILE* out, std::FILE* err) {
    RunOptions ro;
    if (auto it = opts.find("--coredump"); it != opts.end()) {
        if (it->second.empty())
            return usage_error(err, c.name, "option '--coredump' needs a directory");
        ro.coredump_dir = it->second;
    }
    if (const int ret = parse_simulation_options(c, opts, err, &ro))
        return ret;
    ro.real = opts.count("--real") != 0;
    if (ro.real && ro.seed)
        return usage_error(err, c.name,
                           "--seed has no meaning with --real (the real-thread runtime is not deterministic)");
    // Progress only for a person watching: never into a pipe or a log file.
    if (isatty(fileno(err)))
        ro.progress_out = err;
    std::vector<std::string> injects;
    if (auto it = opts.find("--inject"); it != opts.end())
        injects = split_repeated(it->second);
    return cmd_run(pos[0], ro, injects, out, err);
}

int run_merge(const Command&, const std::map<std::string, std::string>& opts, const std::vector<std::string>& pos,
              std::FILE* out, std::FILE* err) {
    MergeOptions mo;
    mo.json = opts.count("--json") != 0;
    mo.partial = opts.count("--partial") != 0;
    return cmd_merge(pos, mo, out, err);
}

int run_replay(const Command& c, const std::map<std::string, std::string>& opts, const std::vector<std::string>& pos,
               std::FILE* out, std::FILE* err) {
    ReplayOptions ro;
    if (const int ret = parse_simulation_options(c, opts, err, &ro))
        return ret;
    std::vector<std::string> injects;
    if (auto it = opts.find("--inject"); it != opts.end())
        injects = split_repeated(it->second);
    return cmd_replay(pos[0], ro, injects, out, err);
}

int run_sweep(const Command& c, const std::map<std::string, std::string>& opts, const std::vector<std::string>& pos,
              std::FILE* out, std::FILE* err) {
    SweepOptions so;
    auto seeds = opts.find("--seeds");
    if (seeds == opts.end())
        return usage_error(err, c.name, "missing --seeds A..B");
    const auto range = parse_seed_range(seeds->second);
    if (!range)
        return usage_error(err, c.name,
                           "invalid --seeds '" + seeds->second + "': expected A..B with non-negative integers A <= B");
    so.seeds = *range;
    if (auto it = opts.find("--shard"); it != opts.end()) {
        std::string why;
        const auto shard = it->second == "auto" ? shard_from_environment(&why) : parse_shard(it->second);
        if (!shard && !why.empty())
            return usage_error(err, c.name, why);
        if (!shard)
            return usage_error(err, c.name, "invalid --shard '" + it->second + "': expected I/N with 0 <= I < N");
        so.shard = *shard;
    }
    if (shard_seed_count(so.seeds, so.shard) > kMaxSweepSeeds)
        return usage_error(err, c.name,
                           "--seeds '" + seeds->second + "' gives one invocation more than " +
                               std::to_string(kMaxSweepSeeds) + " seeds: split it with --shard I/N");
    if (auto it = opts.find("--jobs"); it != opts.end()) {
        const auto jobs = parse_jobs(it->second);
        if (!jobs)
            return usage_error(err, c.name,
                               "invalid --jobs '" + it->second + "': expected 1.." + std::to_string(kMaxJobs) +
                                   ", or 0 or auto for one per online CPU");
        so.jobs = *jobs;
    }
    if (auto it = opts.find("--preempt"); it != opts.end()) {
        const std::optional<double> p = parse_probability(it->second);
        if (!p)
            return usage_error(err, c.name, "invalid --preempt '" + it->second + "': expected a probability in [0, 1]");
        so.preempt = *p;
    }
    so.json = opts.count("--json") != 0;
    // The bar is for a person watching: never into a pipe or a log file.
    if (isatty(fileno(err)))
        so.progress_out = err;
    return cmd_sweep(pos[0], so, out, err);
}

int run_disasm(const Command& c, const std::map<std::string, std::string>& opts, const std::vector<std::string>& pos,
               std::FILE* out, std::FILE* err) {
    uint64_t base = 0;
    if (auto it = opts.find("--base"); it != opts.end()) {
        const std::string& v = it->second;
        char* end = nullptr;
        errno = 0;
        base = std::strtoull(v.c_str(), &end, 0);
        if (v.empty() || v[0] == '-' || *end || errno)
            return usage_error(err, c.name, "invalid --base '" + v + "': expected an address like 0x10000");
        if (base % 8)
            return usage_error(err, c.name, "invalid --base '" + v + "': instructions are 8-byte aligned");
    }
    return cmd_disasm(pos[0], base, out, err);
}

int run_serve(const Command&, const std::map<std::string, std::string>& opts, const std::vector<std::string>&,
              std::FILE* out, std::FILE* err) {
    preload::ServeOptions so;
    if (auto it = opts.find("--gpu"); it != opts.end())
        so.gpu = it->second;
    if (auto it = opts.find("--socket"); it != opts.end())
        so.socket = it->second;
    if (auto it = opts.find("--trace"); it != opts.end())
        so.trace = it->second;
    return preload::serve_main(so, out, err);
}

const std::vector<Command>& commands() {
    static const std::vector<Command> cmds = {
        {"info",
         "usage: upanthor info [--gpu MODEL] [--json]\n"
         "\n"
         "Probes the driver on the simulated mock GPU and prints what a client can query. panthor\n"
         "(g610): the GPU (model, id, revision, cores, L2, tiler, MMU, coherency, features), the\n"
         "CSIF, the firmware and its interface version, the timestamp frequency and the allowed\n"
         "group priorities. panfrost (g52): the GPU (model, id, cores, L2, tiler, MMU, address\n"
         "spaces, job slots and their features), the hardware features and issues the driver\n"
         "read, the selected coherency, the timestamp frequency and the allowed JM context\n"
         "priorities.\n"
         "\n"
         "  --gpu MODEL   the host GPU model: g610 (the default) or g52\n"
         "  --json        the same as a JSON document\n",
         {{"--gpu", true}, {"--json", false}},
         0,
         0,
         run_info},
        {"run",
         "usage: upanthor run SCENARIO [--seed N] [--trace FILE] [--json] [--coredump DIR] [--inject SPEC]... "
         "[--real]\n"
         "\n"
         "Runs a scenario file (docs/scenario-format.md) on the driver hosted in-process on the\n"
         "simulated GPU, in virtual time, then checks its [expect] section and prints a summary: per\n"
         "group the jobs submitted/completed/failed and their submit-to-done latency, scheduler\n"
         "ticks, virtual time and the seed. Exit code 0 if every expectation holds, 1 if not, 2 if\n"
         "the file is malformed (its diagnostics are printed).\n"
         "\n"
         "  --seed N       runtime seed (default: the scenario's)\n"
         "  --trace FILE   write a Perfetto/Chrome JSON trace of the run to FILE\n"
         "  --preempt P    chance that a preemption point switches tasks (default 0; what\n"
         "                 `upanthor sweep` uses, so that its replay commands reproduce a run)\n"
         "  --json         the summary as a JSON document\n"
         "  --inject SPEC  add a fault, as a [[fault]] table written key=value,...: e.g.\n"
         "                 kind=FwHang,at_us=2000 or kind=CsFatal,after_count=3,exception=0x58\n"
         "                 (repeatable; same keys and checks as [[fault]])\n"
         "  --real         the real-thread runtime instead of virtual time (not deterministic:\n"
         "                 timed submissions wait in real time)\n"
         "  --coredump DIR write each devcoredump the driver takes to DIR/coredump-<n>.txt (DIR is\n"
         "                 created if missing; each dump is read and cleared, so the next fault dumps\n"
         "                 too); the summary says how many were written\n",
         {{"--seed", true},
          {"--trace", true},
          {"--coredump", true},
          {"--inject", true, true},
          {"--real", false},
          {"--preempt", true},
          {"--json", false}},
         1,
         1,
         run_run},
        {"sweep",
         "usage: upanthor sweep SCENARIO --seeds A..B [--jobs N] [--shard I/N] [--preempt P] [--json]\n"
         "\n"
         "Runs a scenario once per seed of A..B (inclusive), each run in a process of its own with\n"
         "preemption points switching tasks at random, so that seeds explore interleavings. Shows a\n"
         "progress bar on stderr when it is a terminal; then prints the seeds run, passed and failed,\n"
         "the wall time and runs/s, and for each failing seed (the first 50 in text) its first failure\n"
         "and the command that replays it exactly: upanthor run SCENARIO --seed N --preempt P.\n"
         "Exit code 0 if every seed passed, 1 if one failed or crashed, 2 for bad usage or a\n"
         "malformed file (nothing runs).\n"
         "\n"
         "  --seeds A..B  the seeds to run, integers A <= B\n"
         "  --jobs N      runs at a time, in forked processes (default 1; 0 or auto: one per online CPU)\n"
         "  --shard I/N   only the seeds s with (s - A) % N == I: N invocations with I = 0..N-1 (a CI\n"
         "                matrix, GNU parallel, a job array) cover A..B exactly once between them;\n"
         "                `--shard auto` takes I and N from a job engine's environment: a Slurm job\n"
         "                array, a Kubernetes Indexed Job (with UPANTHOR_SHARD_COUNT), or\n"
         "                UPANTHOR_SHARD_INDEX/UPANTHOR_SHARD_COUNT; `upanthor merge` adds shards up\n"
         "  --preempt P   chance that a preemption point switches tasks (default 0.3)\n"
         "  --json        the summary as a JSON document (every seed run, every failing seed)\n",
         {{"--seeds", true}, {"--jobs", true}, {"--shard", true}, {"--preempt", true}, {"--json", false}},
         1,
         1,
         run_sweep},
        {"replay",
         "usage: upanthor replay CAPTURE [--seed N] [--preempt P] [--inject SPEC]... [--trace FILE] [--json]\n"
         "\n"
         "Replays a client session captured by the preload library (UPANTHOR_CAPTURE=FILE, docs/capture.md)\n"
         "on the driver hosted in-process on the simulated GPU, in virtual time: the same calls, with\n"
         "handles, VM ids, syncobjs and descriptors remapped, BO contents restored before each\n"
         "submission; each result is compared with the captured one (a mismatch names the record's\n"
         "line, the call and what differed), then the end-of-run checks of `upanthor run` run (leaks,\n"
         "reports, stuck tasks). Exit code 0 if everything matched and the checks passed, 1 if not,\n"
         "2 if the file is not a valid capture (truncated, corrupt, another format version).\n"
         "\n"
         "  --seed N       runtime seed (default 1)\n"
         "  --preempt P    chance that a preemption point switches tasks (default 0)\n"
         "  --inject SPEC  add a fault, as `upanthor run --inject` (repeatable); results that then\n"
         "                 differ from the capture are listed as divergences and do not fail the replay\n"
         "  --trace FILE   write a Perfetto/Chrome JSON trace of the replay to FILE\n"
         "  --json         the summary as a JSON document\n",
         {{"--seed", true}, {"--trace", true}, {"--inject", true, true}, {"--preempt", true}, {"--json", false}},
         1,
         1,
         run_replay},
        {"merge",
         "usage: upanthor merge FILE... [--json] [--partial]\n"
         "\n"
         "Merges result files into one table: shards of `upanthor sweep --json` (one per --shard I/N),\n"
         "shards of a recovery fault campaign run with UPANTHOR_RESULTS_JSON=FILE (GTEST_SHARD_INDEX of\n"
         "GTEST_TOTAL_SHARDS), and fuzz campaigns (scripts/fuzz-campaign.sh's result.json). Files of the\n"
         "same run are added up: for each run, what ran, the counts, every failing seed with the command\n"
         "that replays it, then the totals. A sharded run must be complete (every shard index once);\n"
         "the merge of N sweep shards reports what the unsharded sweep reports. Exit code 0 if every\n"
         "run is complete and passed, 1 if something failed, 2 if a file is not a result file or a\n"
         "shard is missing or repeated.\n"
         "\n"
         "  --json      the merged result as a JSON document (sweeps keep `sweep --json`'s fields)\n"
         "  --partial   report an incomplete run instead of refusing it (exit 0 or 1 as above)\n",
         {{"--json", false}, {"--partial", false}},
         1,
         SIZE_MAX,
         run_merge},
        {"disasm",
         "usage: upanthor disasm FILE [--base VA]\n"
         "\n"
         "Disassembles FILE, raw little-endian 64-bit command-stream instructions (its size must be a\n"
         "multiple of 8), one line per instruction: \"ADDR: RAW  MNEMONIC operands\".\n"
         "\n"
         "  --base VA   GPU address of the first instruction (default 0; decimal or 0x hex)\n",
         {{"--base", true}},
         1,
         1,
         run_disasm},
        {"serve",
         "usage: upanthor serve [--gpu MODEL] [--socket PATH] [--trace FILE]\n"
         "\n"
         "Runs the panthor driver on the simulated GPU (real-thread runtime) as a daemon shared by\n"
         "many processes: a program run with libupanthor_preload.so in LD_PRELOAD and\n"
         "UPANTHOR_SERVER=PATH in its environment is a thin client of it (docs/preload.md \"Two\n"
         "modes\"). Descriptors are real and pass across fork, dup and UNIX sockets; a file is\n"
         "released when its last descriptor in any process closes, and a line on stdout says what\n"
         "that released. Stops on SIGTERM or SIGINT (clients' calls then fail with ENODEV); exit\n"
         "code 1 if the driver leaked or reported anything.\n"
         "\n"
         "  --gpu MODEL     the host GPU model (default: the default model)\n"
         "  --socket PATH   where to listen (default $XDG_RUNTIME_DIR/upanthor.sock, else\n"
         "                  /tmp/upanthor-<uid>.sock)\n"
         "  --trace FILE    write the runtime's trace (Chrome JSON) to FILE at exit\n",
         {{"--gpu", true}, {"--socket", true}, {"--trace", true}},
         0,
         0,
         run_serve},
    };
    return cmds;
}

const Command* find_command(const std::string& name) {
    for (const Command& c : commands())
        if (name == c.name)
            return &c;
    return nullptr;
}

}  // namespace

int cmd_disasm(const std::string& path, uint64_t base_va, std::FILE* out, std::FILE* err) {
    std::ifstream f(path, std::ios::binary);
    if (!f) {
        std::fprintf(err, "upanthor disasm: cannot open '%s': %s\n", path.c_str(), std::strerror(errno));
        return kExitFailure;
    }
    const std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (f.bad()) {
        std::fprintf(err, "upanthor disasm: cannot read '%s'\n", path.c_str());
        return kExitFailure;
    }
    if (bytes.size() % 8) {
        std::fprintf(err, "upanthor disasm: '%s' is %zu bytes, not a multiple of 8 (one instruction is 8 bytes)\n",
                     path.c_str(), bytes.size());
        return kExitFailure;
    }
    std::vector<uint64_t> code(bytes.size() / 8);
    for (size_t k = 0; k < code.size(); k++) {
        uint64_t v = 0;
        for (int b = 7; b >= 0; b--)
            v = (v << 8) | bytes[k * 8 + static_cast<size_t>(b)];
        code[k] = v;
    }
    const std::string text = umd::cs::disasm(code, base_va);
    std::fwrite(text.data(), 1, text.size(), out);
    return kExitOk;
}

int cli_main(std::span<const std::string> args, std::FILE* out, std::FILE* err) {
    if (args.empty())
        return usage_error(err, "", "missing command");
    const std::string& name = args[0];
    if (name == "-h" || name == "--help") {
        std::fputs(kUsage, out);
        return kExitOk;
    }
    if (name == "help") {
        if (args.size() == 1) {
            std::fputs(kUsage, out);
            return kExitOk;
        }
        const Command* c = find_command(args[1]);
        if (!c || args.size() > 2)
            return usage_error(err, "help", c ? "too many arguments" : "unknown command '" + args[1] + "'");
        std::fputs(c->usage, out);
        return kExitOk;
    }
    if (!name.empty() && name[0] == '-')
        return usage_error(err, "", "unknown option '" + name + "' (options follow the command)");
    const Command* c = find_command(name);
    if (!c)
        return usage_error(err, "", "unknown command '" + name + "'");

    std::map<std::string, std::string> opts;
    std::vector<std::string> pos;
    bool only_positional = false;
    for (size_t k = 1; k < args.size(); k++) {
        const std::string& a = args[k];
        if (only_positional || a.size() < 2 || a[0] != '-') {
            pos.push_back(a);
            continue;
        }
        if (a == "--") {
            only_positional = true;
            continue;
        }
        if (a == "-h" || a == "--help") {
            std::fputs(c->usage, out);
            return kExitOk;
        }
        const size_t eq = a.find('=');
        const std::string key = a.substr(0, eq);
        const OptSpec* spec = nullptr;
        for (const OptSpec& s : c->options)
            if (key == s.name)
                spec = &s;
        if (!spec)
            return usage_error(err, c->name, "unknown option '" + key + "'");
        std::string value;
        if (spec->takes_value) {
            if (eq != std::string::npos) {
                value = a.substr(eq + 1);
            } else if (k + 1 < args.size()) {
                value = args[++k];
            } else {
                return usage_error(err, c->name, "option '" + key + "' needs a value");
            }
        } else if (eq != std::string::npos) {
            return usage_error(err, c->name, "option '" + key + "' takes no value");
        }
        // A repeated option keeps the last value, except the repeatable ones, which accumulate.
        if (spec->repeatable && opts.count(key))
            opts[key] += kRepeatSep + value;
        else
            opts[key] = value;
    }
    if (pos.size() < c->min_positional)
        return usage_error(err, c->name, "missing argument");
    if (pos.size() > c->max_positional)
        return usage_error(err, c->name, "unexpected argument '" + pos[c->max_positional] + "'");
    return c->run(*c, opts, pos, out, err);
}

}  // namespace upanthor
