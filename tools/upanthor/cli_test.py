#!/usr/bin/env python3
"""CTest checks of the built `upanthor` program (tools/upanthor/CMakeLists.txt, label sim).

usage: cli_test.py CASE UPANTHOR WORKDIR
"""
import json
import os
import pty
import struct
import subprocess
import sys


def run(exe, *args):
    p = subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what, out="", err=""):
    if not cond:
        sys.stderr.write(f"FAIL: {what}\n--- stdout\n{out}\n--- stderr\n{err}\n")
        sys.exit(1)


def case_info(exe, work):
    rc, out, err = run(exe, "info")
    check(rc == 0, f"info exit {rc}", out, err)
    for needle in ("Mali-G610", "0xa8670005", "arch 10.8 rev 6", "shader cores      4",
                   "48-bit VA, 40-bit PA", "CSIF: 8 CSG slots, 8 CS per CSG, 96 CS registers",
                   "Timestamp: 24000000 Hz", "Group priorities: low medium",
                   "MMU page sizes: 4K 2M (page_size_bitmap 0x201000)"):
        check(needle in out, f"info output lacks {needle!r}", out, err)


def case_info_json(exe, work):
    rc, out, err = run(exe, "info", "--json")
    check(rc == 0, f"info --json exit {rc}", out, err)
    try:
        d = json.loads(out)
    except json.JSONDecodeError as e:
        check(False, f"info --json is not JSON: {e}", out, err)
    check(d["gpu"]["model"] == "Mali-G610", "gpu.model", out)
    check(d["gpu"]["gpu_id"] == 0xA8670005, "gpu.gpu_id", out)
    check(d["gpu"]["shader_cores"] == 4, "gpu.shader_cores", out)
    check(d["gpu"]["mmu"]["va_bits"] == 48 and d["gpu"]["mmu"]["pa_bits"] == 40, "gpu.mmu", out)
    check(d["csif"]["csg_slot_count"] == 8 and d["csif"]["cs_reg_count"] == 96, "csif", out)
    check(d["timestamp"]["frequency"] == 24000000, "timestamp.frequency", out)
    check(d["timestamp"]["cycle_count"] > 0, "timestamp.cycle_count", out)
    check(d["gpu"]["selected_coherency"] == 31, "gpu.selected_coherency (NONE on RK3588)", out)
    check(d["firmware"]["iface_version"] != 0, "firmware.iface_version", out)
    check("medium" in d["group_priorities"]["allowed"], "group_priorities", out)
    check(d["page_size_bitmap"] == 0x201000, "page_size_bitmap", out)


def case_info_g52(exe, work):
    """--gpu g52: panfrost on the mock Mali-G52 r1 (GPU_ID 0x74021000, 1 core, 3 job slots, 8 ASes)."""
    rc, out, err = run(exe, "info", "--gpu", "g52")
    check(rc == 0, f"info --gpu g52 exit {rc}", out, err)
    for needle in ("Driver: panfrost 1.6.0", "GPU: Mali-G52", "0x74021000: arch 7.4 rev 0, product 2, r1p0",
                   "shader cores      1", "35-bit VA, 40-bit PA", "address spaces    8 (as_present 0xff)",
                   "job slots         3 (js_present 0x7)", "JOBCHAIN_DISAMBIGUATION", "FLUSH_REDUCTION",
                   "hw issues         9435 (0x400)"):
        check(needle in out, f"info --gpu g52 output lacks {needle!r}", out, err)
    check("CSIF" not in out and "Firmware" not in out, "no CSF sections for a JM GPU", out, err)
    rc, out, err = run(exe, "info", "--gpu", "g52", "--json")
    check(rc == 0, f"info --gpu g52 --json exit {rc}", out, err)
    try:
        d = json.loads(out)
    except json.JSONDecodeError as e:
        check(False, f"info --gpu g52 --json is not JSON: {e}", out, err)
    check(d["driver"]["name"] == "panfrost" and d["driver"]["major"] == 1 and d["driver"]["minor"] == 6, "driver", out)
    g = d["gpu"]
    check(g["model"] == "Mali-G52" and g["gpu_id"] == 0x74021000, "gpu.model / gpu_id", out)
    check(g["shader_cores"] == 1 and g["job_slots"] == 3 and g["address_spaces"] == 8, "gpu counts", out)
    check(g["hw_features"] == 0xCF7 and "COHERENCY_REG" in g["hw_feature_names"], "gpu.hw_features", out)
    check(g["hw_issues"] == 0x400, "gpu.hw_issues", out)
    check(d["params"]["gpu_prod_id"] == 0x7402 and d["params"]["mmu_features"] == 0x2823, "params", out)
    rc, out, err = run(exe, "info", "--gpu", "g99")
    check(rc == 2 and "no such GPU model" in err, f"info --gpu g99 exit {rc}", out, err)


def case_disasm(exe, work):
    path = os.path.join(work, "upanthor_disasm_test.bin")
    code = [
        0x015C000000201000,  # MOVE d92, #0x201000
        0x025E000000000080,  # MOVE32 r94, #0x80
        0x03000000_00010000,  # WAIT wait=0x1
        0x20005C5E_00000000,  # CALL d92, r94
        0x33005C5E_00000001,  # SYNC_ADD64.system.propagate [d92], d94
        0x2F000000_00000000,  # ERROR_BARRIER
        0x0A00000000000000,  # opcode 10: not a v10 instruction
    ]
    with open(path, "wb") as f:
        f.write(struct.pack("<%dQ" % len(code), *code))
    rc, out, err = run(exe, "disasm", path, "--base", "0x10000")
    check(rc == 0, f"disasm exit {rc}", out, err)
    lines = out.splitlines()
    check(len(lines) == len(code), "one line per instruction", out, err)
    check(lines[0] == "0000000000010000: 015c000000201000  MOVE d92, #0x201000", "line 0", out)
    check(lines[3].endswith("CALL d92, r94"), "CALL line", out)
    check(lines[4].endswith("SYNC_ADD64.system.propagate [d92], d94 wait=0x0 signal=sb0"), "SYNC_ADD64 line", out)
    check(lines[6].startswith("0000000000010030: 0a00000000000000  UNKNOWN.0x0a"), "unknown opcode line", out)
    # A size that is not a multiple of 8 is refused.
    with open(path, "ab") as f:
        f.write(b"\x01\x02\x03")
    rc, out, err = run(exe, "disasm", path)
    check(rc == 1 and "not a multiple of 8" in err and out == "", f"odd-sized file: exit {rc}", out, err)
    os.remove(path)


def case_bad_usage(exe, work):
    for args, needle in ((["info", "--bogus"], "unknown option '--bogus'"),
                         (["frobnicate"], "unknown command 'frobnicate'"),
                         ([], "missing command"),
                         (["disasm"], "missing argument"),
                         (["disasm", "x.bin", "--base"], "needs a value"),
                         (["sweep", scenario("compute.toml")], "missing --seeds A..B"),
                         (["sweep", scenario("compute.toml"), "--seeds", "5..2"], "invalid --seeds '5..2'"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1-5"], "invalid --seeds '1-5'"),
                         (["sweep", scenario("compute.toml"), "--seeds", "-1..5"], "invalid --seeds"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1..x"], "invalid --seeds"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1..5", "--shard", "3/3"],
                          "invalid --shard '3/3': expected I/N with 0 <= I < N"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1..5", "--shard", "0/0"], "invalid --shard"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1..5", "--shard", "1"], "invalid --shard"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1..5", "--jobs", "two"],
                          "invalid --jobs 'two'"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1..5", "--jobs", "-1"], "invalid --jobs"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1..5", "--preempt", "2"],
                          "invalid --preempt"),
                         (["sweep", scenario("compute.toml"), "--seeds", "1..5", "--seed", "3"],
                          "unknown option '--seed'"),
                         (["sweep", scenario("compute.toml"), "--seeds", "0..0xFFFFFFFFFFFFFFFF"],
                          "split it with --shard"),
                         (["run", "scenarios/compute.toml", "--seed", "x"], "invalid --seed"),
                         (["run", scenario("compute.toml"), "--preempt", "1.5"], "invalid --preempt"),
                         (["run", scenario("compute.toml"), "--real", "--seed", "3"], "--seed has no meaning"),
                         (["run", scenario("compute.toml"), "--inject", "kind=Bogus,always=true"],
                          "unknown fault kind 'Bogus'"),
                         (["run", scenario("compute.toml"), "--inject", "kind=FwHang"], "has 0 triggers"),
                         (["run", scenario("compute.toml"), "--inject", "kind=FwHang,at_us=10,colour=red"],
                          "unknown key 'colour'"),
                         (["run", scenario("compute.toml"), "--inject", "nonsense"], "not a key=value pair")):
        rc, out, err = run(exe, *args)
        check(rc == 2, f"{args}: exit {rc}, expected 2", out, err)
        check(needle in err, f"{args}: stderr lacks {needle!r}", out, err)
    rc, out, err = run(exe, "--help")
    check(rc == 0 and "usage: upanthor" in out, "--help", out, err)


SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def scenario(name):
    return os.path.join(SRC, "scenarios", name)


def run_ok(exe, path, *extra):
    rc, out, err = run(exe, "run", path, *extra)
    check(rc == 0, f"run {path} {extra}: exit {rc}, expected 0", out, err)
    return out


def case_run_compute(exe, work):
    out = run_ok(exe, scenario("compute.toml"))
    for needle in ("scenario compute", "seed 1", "virtual time", "PASS", "compute"):
        check(needle in out, f"summary lacks {needle!r}", out)


def case_run_rotation(exe, work):
    out = run_ok(exe, scenario("rotation.toml"))
    check("PASS" in out and "compositor" in out, "rotation summary", out)


def case_run_json(exe, work):
    out = run_ok(exe, scenario("compute.toml"), "--json", "--seed", "5")
    doc = json.loads(out)
    check(doc["passed"] is True and doc["seed"] == 5 and doc["failures"] == [], "json verdict", out)
    g = {x["name"]: x for x in doc["groups"]}
    check(g["compute"]["submitted"] == 13 and g["compute"]["completed"] == 13, "json group counts", out)
    check(doc["virtual_time_us"] > 0 and doc["scheduler"]["csg_starts"] >= 1, "json times/stats", out)
    check(0 < doc["gpu"]["busy_us"] <= doc["virtual_time_us"] and doc["gpu"]["resets"] == 0, "json gpu busy time", out)
    check(doc["gpu"]["real_descriptor_jobs"] == 0, "a scenario's jobs are mock shader records, not real descriptors", out)
    # Same seed, same run: everything but the wall time replays.
    again = json.loads(run_ok(exe, scenario("compute.toml"), "--json", "--seed", "5"))
    for d in (doc, again):
        del d["wall_time_s"]
    check(doc == again, "a replay with the same seed differs", out)


def case_run_trace(exe, work):
    path = os.path.join(work, "upanthor_run_trace.json")
    if os.path.exists(path):
        os.remove(path)
    run_ok(exe, scenario("compute.toml"), "--trace", path)
    check(os.path.exists(path), f"no trace written at {path}")
    with open(path) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    check(len(events) > 0, "trace has no events")
    os.remove(path)


def load_trace(path):
    with open(path) as f:
        doc = json.load(f)
    os.remove(path)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def counter_values(events, name):
    return [e["args"]["value"] for e in events if e.get("ph") == "C" and e.get("name") == name]


def job_slices(events):
    """{track name: [(begin, end, name)]} of the per-CS job slices ("csg<i> cs<n>[ #k]" tracks)."""
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    open_, out = {}, {}
    for e in events:
        track = names.get(e.get("tid"), "")
        if e.get("ph") not in ("B", "E") or not (track.startswith("csg") and " cs" in track):
            continue
        if e["ph"] == "B":
            check(track not in open_, f"overlapping job slices on track {track!r}")
            open_[track] = (e["ts"], e["name"])
        else:
            check(track in open_, f"job slice end without a begin on {track!r}")
            ts, name = open_.pop(track)
            out.setdefault(track, []).append((ts, e["ts"], name))
    return out


def case_run_frame(exe, work):
    path = os.path.join(work, "upanthor_run_frame.json")
    out = run_ok(exe, scenario("frame.toml"), "--json", "--trace", path)
    doc = json.loads(out)
    check(doc["passed"] is True and doc["failures"] == [], "frame verdict", out)
    g = {x["name"]: x for x in doc["groups"]}
    # 600 frames: a compute pre-pass and a render pass on `game`, a present on `present`.
    check(g["game"]["submitted"] == 1200 and g["game"]["completed"] == 1200 and g["game"]["failed"] == 0,
          "every game job completed", out)
    check(g["present"]["completed"] == 600 and g["present"]["failed"] == 0, "every frame presented", out)
    check(doc["virtual_time_us"] >= 9_900_000, "10 s of virtual time", out)
    events = load_trace(path)
    # The heap starts with 2 chunks; a frame needs 6: the driver grew it, within max_chunks = 16.
    chunks = counter_values(events, "tiler heap chunks")
    check(chunks and chunks[0] == 1 and max(chunks) == 6 and chunks[-1] == 0,
          f"tiler heap chunks counter: first {chunks[:1]}, max {max(chunks, default=None)}, last {chunks[-1:]}")
    slices = job_slices(events)
    kinds = {name for s in slices.values() for (_, _, name) in s}
    check(kinds == {"compute job", "fragment job"}, f"job slice kinds {kinds}")
    # The 64-workgroup cull dispatch runs on all 4 cores at once: 4 tracks of one stream.
    check(any(t.endswith(" #4") for t in slices), f"no 4th parallel job track in {sorted(slices)}")


def case_run_trace_counters(exe, work):
    path = os.path.join(work, "upanthor_run_trace_counters.json")
    run_ok(exe, scenario("rotation.toml"), "--trace", path)
    events = load_trace(path)
    used = counter_values(events, "csg slots used")
    # 40 groups on 8 slots: the scheduler fills every slot.
    check(used and max(used) == 8 and min(used) >= 0, f"csg slots used counter: {sorted(set(used))}")
    slices = job_slices(events)
    check(len(slices) >= 8, f"job slices on {len(slices)} CS tracks, expected one per CSG slot at least")
    # 38 groups x 10 jobs x 4 parts + 2 x 60 compose jobs x 4 parts, each on a core once unless
    # preempted (then once more per resume).
    n = sum(len(s) for s in slices.values())
    check(n >= 38 * 10 * 4 + 2 * 60 * 4, f"{n} job slices")
    check(all(b <= e for s in slices.values() for (b, e, _) in s), "a job slice ends before it begins")


def case_run_faults(exe, work):
    path = os.path.join(SRC, "tests", "tools", "scenarios", "faults.toml")
    out = run_ok(exe, path, "--json")
    doc = json.loads(out)
    g = {x["name"]: x for x in doc["groups"]}
    check(g["bad"]["failed"] == 1 and g["oob"]["failed"] == 1, "failed jobs counted", out)
    check(g["good"]["completed"] == 8 and g["good"]["failed"] == 0, "healthy group unaffected", out)
    # The hang is only caught by the progress timeout: seconds of virtual time.
    check(doc["virtual_time_us"] >= 1_000_000, "run lasted until the timeout", out)


def case_run_tiler(exe, work):
    out = run_ok(exe, os.path.join(SRC, "tests", "tools", "scenarios", "tiler.toml"), "--json")
    g = {x["name"]: x for x in json.loads(out)["groups"]}
    check(g["g"]["completed"] == 5 and g["g"]["failed"] == 0, "every frame completed", out)


def case_run_fail(exe, work):
    path = os.path.join(SRC, "tests", "tools", "scenarios", "failing_expectation.toml")
    rc, out, err = run(exe, "run", path)
    check(rc == 1, f"failing scenario: exit {rc}, expected 1", out, err)
    check("expectation failed" in out and "FAIL" in out, "failing scenario summary", out, err)
    # The failed memory expectation points at its line in the file.
    check("failing_expectation.toml:" in out and "0x2a, expected 0x2b" in out, "failure names the value", out, err)
    rc, out, err = run(exe, "run", os.path.join(work, "no_such_scenario.toml"))
    check(rc == 2 and err != "", f"missing file: exit {rc}, expected 2", out, err)


def case_run_inject(exe, work):
    # The first RUN_COMPUTE retires with CS_FATAL: the group is terminated, its jobs fail, the
    # scenario's expectations (all signalled) do not hold.
    rc, out, err = run(exe, "run", scenario("compute.toml"), "--json", "--inject", "kind=CsFatal,after_count=1",
                       "--inject", "kind=GpuFault,at_us=5")
    check(rc == 1, f"run with an injected CS_FATAL: exit {rc}, expected 1", out, err)
    doc = json.loads(out)
    g = {x["name"]: x for x in doc["groups"]}
    check(g["compute"]["failed"] >= 1, "the injected fault failed jobs", out, err)
    check(any("expected signaled" in f["message"] for f in doc["failures"]), "fence expectation failed", out, err)
    check(doc["kernel_findings"] == [], "no leak or kernel report after a fault", out, err)
    # Without it the same run passes.
    run_ok(exe, scenario("compute.toml"))


def case_run_real(exe, work):
    out = run_ok(exe, scenario("compute.toml"), "--real", "--json")
    doc = json.loads(out)
    check(doc["passed"] is True, "compute on the real-thread runtime", out)
    g = {x["name"]: x for x in doc["groups"]}
    check(g["compute"]["completed"] == 13, "every job completed", out)


def case_run_timeout(exe, work):
    doc = json.loads(run_ok(exe, scenario("timeout.toml"), "--json"))
    g = {x["name"]: x for x in doc["groups"]}
    check(g["hung"]["failed"] == 1 and g["neighbour"]["completed"] == 100 and g["after"]["completed"] == 1,
          "hung job failed, the others completed", json.dumps(doc))
    check(doc["kernel_findings"] == [], "no kernel findings", json.dumps(doc))


def case_run_mmu_fault(exe, work):
    doc = json.loads(run_ok(exe, scenario("mmu-fault.toml"), "--json"))
    g = {x["name"]: x for x in doc["groups"]}
    check(g["culprit"]["failed"] == 1 and g["bystander"]["failed"] == 0, "only the culprit failed", json.dumps(doc))


def case_run_fw_hang(exe, work):
    doc = json.loads(run_ok(exe, scenario("fw-hang.toml"), "--json"))
    g = {x["name"]: x for x in doc["groups"]}
    check(g["busy"]["failed"] == 3 and g["later"]["completed"] == 1, "resident groups lost, queued work ran",
          json.dumps(doc))
    check(doc["gpu"]["faults_injected"] == 1 and doc["gpu"]["resets"] >= 1, "the hang fired and the GPU was reset",
          json.dumps(doc))
    # The same scenario passes under other interleavings too.
    for seed in ("2", "3"):
        run_ok(exe, scenario("fw-hang.toml"), "--seed", seed, "--preempt", "0.3")


def case_run_coredump(exe, work):
    # faults.toml: an MMU fault (and the CS_BUS_FAULT it causes) and a hung shader caught by the
    # progress timeout. Each dump is read, cleared and written; DIR is created with its parents.
    import shutil
    base = os.path.join(work, "coredump_test")
    shutil.rmtree(base, ignore_errors=True)
    d = os.path.join(base, "nested", "dir")
    path = os.path.join(SRC, "tests", "tools", "scenarios", "faults.toml")
    out = run_ok(exe, path, "--coredump", d)
    files = sorted(os.listdir(d))
    check(len(files) >= 2, f"at least two dumps written: {files}", out)
    check(f"coredumps: {len(files)} written to {d}" in out, "summary counts the dumps", out)
    check(files == [f"coredump-{n}.txt" for n in range(1, len(files) + 1)], f"dump file names {files}", out)
    dumps = [open(os.path.join(d, f)).read() for f in files]
    for t in dumps:
        for needle in ("# panthor devcoredump\nreason: ", "\n[registers]\nGPU_ID ", "GPU_STATUS ", "SHADER_READY ",
                       "L2_READY ", "MCU_STATUS ", "MMU_INT_RAWSTAT ", "\n[mmu]\nAS0 ", "# end of dump\n"):
            check(needle in t, f"dump lacks {needle!r}", t)
    by_reason = {t.split("\n")[1]: t for t in dumps}
    mmu = by_reason.get("reason: MMU_FAULT")
    check(mmu is not None, "an MMU_FAULT dump", "\n".join(dumps))
    check("FAULTADDRESS 0x0000007000000000" in mmu and "TRANSLATION_FAULT" in mmu, "the faulting AS", mmu)
    hang = by_reason.get("reason: PROGRESS_TIMEOUT")
    check(hang is not None, "a PROGRESS_TIMEOUT dump", "\n".join(dumps))
    for needle in ("[group on CSG slot ", "state ACTIVE", "timedout yes", "CS_FATAL 0x", "CS_FAULT_INFO 0x",
                   "ring instructions around EXTRACT:", "CALL d92, r94",
                   "stream instructions around CS_STATUS_CMD_PTR", "RUN_COMPUTE"):
        check(needle in hang, f"progress-timeout dump lacks {needle!r}", hang)
    # JSON says the same; a directory that cannot be created fails the run before it starts.
    doc = json.loads(run_ok(exe, path, "--json", "--coredump", os.path.join(base, "again")))
    check(doc["coredumps"]["written"] == len(os.listdir(os.path.join(base, "again"))) >= 2, "json coredumps", doc)
    blocker = os.path.join(base, "file")
    open(blocker, "w").close()
    rc, out, err = run(exe, "run", path, "--coredump", os.path.join(blocker, "sub"))
    check(rc == 1 and "cannot create the coredump directory" in err, f"uncreatable dir: exit {rc}", out, err)
    rc, out, err = run(exe, "run", path, "--coredump", "")
    check(rc == 2 and "needs a directory" in err, f"empty --coredump: exit {rc}", out, err)


def sweep(exe, path, *extra, env=None):
    p = subprocess.run([exe, "sweep", path, *extra], capture_output=True, text=True, timeout=300,
                       env=None if env is None else {**os.environ, **env})
    return p.returncode, p.stdout, p.stderr


def case_sweep_compute(exe, work):
    rc, out, err = sweep(exe, scenario("compute.toml"), "--seeds", "1..20", "--jobs", "2")
    check(rc == 0, f"sweep of compute.toml: exit {rc}, expected 0", out, err)
    for needle in ("sweep compute", "seeds 1..20", "preempt 0.3", "2 jobs", "20 seeds run: 20 passed, 0 failed",
                   "runs/s", "PASS"):
        check(needle in out, f"sweep summary lacks {needle!r}", out, err)
    # Not a terminal: no progress bar, and the workers' driver logs stay out of the way.
    check(err == "", "stderr of a sweep into a pipe is empty", out, err)
    # A terminal on stderr: the bar is drawn there, then erased; stdout is the same summary.
    master, slave = pty.openpty()
    p = subprocess.Popen([exe, "sweep", scenario("compute.toml"), "--seeds", "1..6", "--jobs", "2"],
                         stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    tty = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        tty += chunk
    os.close(master)
    out = p.communicate(timeout=120)[0].decode()
    check(p.returncode == 0 and "6 seeds run: 6 passed" in out and "\r" not in out, "summary with a tty", out,
          repr(tty))
    check(b"\r[" in tty and b"/6" in tty and b"runs/s" in tty and tty.endswith(b"\r\x1b[K"),
          "progress bar drawn and erased on the terminal", out, repr(tty))
    rc, out, err = sweep(exe, scenario("compute.toml"), "--seeds", "3..9", "--json", "--jobs", "auto",
                         "--preempt", "0.5")
    check(rc == 0, f"sweep --json: exit {rc}", out, err)
    doc = json.loads(out)
    check(doc["passed"] is True and doc["seeds_run"] == 7 and doc["seeds_passed"] == 7 and doc["seeds_failed"] == 0,
          "json counts", out)
    check(doc["seeds"] == list(range(3, 10)) and doc["failing"] == [] and doc["preempt"] == 0.5, "json seeds", out)
    check(doc["range"] == {"first": 3, "last": 9} and doc["jobs"] >= 1, "json range/jobs", out)


def case_sweep_shard(exe, work):
    seen = []
    for i in range(3):
        rc, out, err = sweep(exe, scenario("compute.toml"), "--seeds", "10..20", "--shard", f"{i}/3", "--json",
                             "--jobs", "2")
        check(rc == 0, f"shard {i}/3: exit {rc}", out, err)
        doc = json.loads(out)
        check(doc["shard"] == {"index": i, "count": 3}, "json shard", out)
        check(doc["seeds"] == [s for s in range(10, 21) if (s - 10) % 3 == i], f"shard {i}/3 seeds", out)
        check(doc["seeds_run"] == len(doc["seeds"]), "seeds_run matches the list", out)
        seen += doc["seeds"]
    check(sorted(seen) == list(range(10, 21)), f"the shards cover 10..20 exactly once: {sorted(seen)}")
    # A shard with no seed of the range is an empty, passing sweep.
    rc, out, err = sweep(exe, scenario("compute.toml"), "--seeds", "1..2", "--shard", "4/5")
    check(rc == 0 and "0 seeds run" in out, f"empty shard: exit {rc}", out, err)


def case_sweep_fail(exe, work):
    path = os.path.join(SRC, "tests", "tools", "scenarios", "failing_expectation.toml")
    rc, out, err = sweep(exe, path, "--seeds", "1..4", "--jobs", "2")
    check(rc == 1, f"failing sweep: exit {rc}, expected 1", out, err)
    check("4 seeds run: 0 passed, 4 failed" in out and "FAIL" in out, "failing sweep counts", out, err)
    check("0x2a, expected 0x2b" in out, "first failure line of a failing seed", out, err)
    replays = [l.strip() for l in out.splitlines() if l.strip().startswith("upanthor run ")]
    check(len(replays) == 4, "one replay command per failing seed", out, err)
    check(replays[1] == f"upanthor run {path} --seed 2 --preempt 0.3", f"replay command {replays[1]!r}", out, err)
    # The replay command, run as printed, fails the same way.
    rc2, out2, err2 = run(exe, *replays[1].split()[1:])
    check(rc2 == 1 and "0x2a, expected 0x2b" in out2, f"replay: exit {rc2}, expected 1", out2, err2)
    rc, out, err = sweep(exe, path, "--seeds", "1..3", "--json")
    doc = json.loads(out)
    check(rc == 1 and doc["passed"] is False and doc["seeds_failed"] == 3, "json of a failing sweep", out, err)
    check([f["seed"] for f in doc["failing"]] == [1, 2, 3], "json lists every failing seed", out, err)
    check(doc["failing"][0]["replay"].endswith("--seed 1 --preempt 0.3"), "json replay", out, err)
    # A malformed file: diagnostics, exit 2, nothing run.
    bad = os.path.join(work, "upanthor_sweep_bad.toml")
    with open(bad, "w") as f:
        f.write("[scenario]\nname = \"x\"\nbogus_key = 1\n")
    rc, out, err = sweep(exe, bad, "--seeds", "1..3")
    check(rc == 2 and "upanthor_sweep_bad.toml:" in err and out == "", f"malformed file: exit {rc}", out, err)
    os.remove(bad)


def case_sweep_crash(exe, work):
    # A worker that dies on a signal fails its seed; the sweep goes on with the others.
    rc, out, err = sweep(exe, scenario("compute.toml"), "--seeds", "1..6", "--jobs", "2",
                         env={"UPANTHOR_SWEEP_TEST_ABORT_SEED": "4"})
    check(rc == 1, f"sweep with a crashing seed: exit {rc}, expected 1", out, err)
    check("6 seeds run: 5 passed, 1 failed" in out, "crash counted as one failure", out, err)
    check("seed 4: crashed: signal 6" in out, "crash reported with its signal", out, err)
    check("upanthor run " + scenario("compute.toml") + " --seed 4 --preempt 0.3" in out, "crash replay", out, err)


def jm_jobs(doc):
    """The g52 summary's submissions by fence name."""
    return {x["fence"]: x for x in doc["jm_submissions"]}


def case_run_g52_frame(exe, work):
    out = run_ok(exe, scenario("g52-frame.toml"))
    for needle in ("gpu g52 (panfrost)", "geometry", "render", "signaled x60", "PASS"):
        check(needle in out, f"summary lacks {needle!r}", out)
    doc = json.loads(run_ok(exe, scenario("g52-frame.toml"), "--json"))
    j = jm_jobs(doc)
    check(doc["passed"] is True and doc["gpu_model"] == "g52", "g52-frame verdict", json.dumps(doc))
    check(j["geometry"]["slot"] == 1 and j["render"]["slot"] == 0, "vertex/tiler on slot 1, fragment on slot 0",
          json.dumps(doc))
    check(j["geometry"]["completed"] == 60 and j["render"]["completed"] == 60, "60 frames", json.dumps(doc))
    check(all(x["fence"] == "signaled" for x in j["render"]["jobs"]), "every fragment job signalled", json.dumps(doc))
    # A fragment job failing on slot 0 breaks the frame's expectation: exit 1, the fence is named.
    rc, out, err = run(exe, "run", scenario("g52-frame.toml"), "--inject", "kind=JobFault,after_count=3,js=0")
    check(rc == 1 and "fence 'render'" in out and "expectation failed" in out, f"injected JobFault: exit {rc}",
          out, err)
    # A CSF fault kind is not one of the G52's.
    rc, out, err = run(exe, "run", scenario("g52-frame.toml"), "--inject", "kind=FwHang,at_us=10")
    check(rc == 2 and "for GPU model g52" in err, f"--inject FwHang on g52: exit {rc}", out, err)


def case_run_g52_hang(exe, work):
    doc = json.loads(run_ok(exe, scenario("g52-hang.toml"), "--json"))
    j = jm_jobs(doc)
    check(j["stuck"]["jobs"][0]["fence"] == "ECANCELED", "the hung job's fence is cancelled", json.dumps(doc))
    check(j["next"]["jobs"][0]["fence"] == "signaled" and j["next"]["jobs"][0]["latency_us"] >= 500_000,
          "the innocent job queued behind it completed after the 500 ms timeout", json.dumps(doc))
    check(j["compose"]["completed"] == 60, "slot 0 kept running", json.dumps(doc))
    check(doc["gpu"]["resets"] == 1 and doc["gpu"]["faults_injected"] == 1, "one hang, one reset", json.dumps(doc))


def case_run_g52_heap(exe, work):
    doc = json.loads(run_ok(exe, scenario("g52-heap.toml"), "--json"))
    check(doc["heaps"] == [{"bo": "tiler_heap", "size": 16 << 20, "mapped": 8 << 20}],
          "four 2 MiB pieces of the heap mapped on faults", json.dumps(doc))
    check(jm_jobs(doc)["tiling"]["completed"] == 4 and doc["gpu"]["resets"] == 0, "jobs complete, no reset",
          json.dumps(doc))


def case_run_g52_fault(exe, work):
    doc = json.loads(run_ok(exe, scenario("g52-fault.toml"), "--json"))
    j = jm_jobs(doc)
    check(j["wild"]["failed"] == 1 and j["wild"]["jobs"][0]["fence"] == "EINVAL", "the faulting job failed",
          json.dumps(doc))
    check(j["good_compute"]["completed"] == 1 and j["good_frag"]["completed"] == 10 and j["fixed"]["completed"] == 1,
          "the other file's jobs and the next submission completed", json.dumps(doc))
    check(doc["gpu"]["resets"] == 0, "no reset", json.dumps(doc))


CASES = {"info": case_info, "info_json": case_info_json, "info_g52": case_info_g52, "disasm": case_disasm, "bad_usage": case_bad_usage,
         "run_compute": case_run_compute, "run_rotation": case_run_rotation, "run_json": case_run_json,
         "run_trace": case_run_trace, "run_faults": case_run_faults, "run_tiler": case_run_tiler, "run_fail": case_run_fail,
         "run_inject": case_run_inject, "run_real": case_run_real, "run_timeout": case_run_timeout,
         "run_mmu_fault": case_run_mmu_fault, "run_fw_hang": case_run_fw_hang}
CASES.update({"run_frame": case_run_frame, "run_trace_counters": case_run_trace_counters})
CASES.update({"run_coredump": case_run_coredump})
CASES.update({"run_g52_frame": case_run_g52_frame, "run_g52_hang": case_run_g52_hang,
              "run_g52_heap": case_run_g52_heap, "run_g52_fault": case_run_g52_fault})
CASES.update({"sweep_compute": case_sweep_compute, "sweep_shard": case_sweep_shard, "sweep_fail": case_sweep_fail,
              "sweep_crash": case_sweep_crash})

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        sys.exit(__doc__)
    CASES[sys.argv[1]](sys.argv[2], sys.argv[3])
