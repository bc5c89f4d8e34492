#!/usr/bin/env python3
"""CTest checks of the built `upanthor` program (tools/upanthor/CMakeLists.txt, label sim).

usage: cli_test.py CASE UPANTHOR WORKDIR
"""
import json
import os
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
                   "Timestamp: 24000000 Hz", "Group priorities: low medium"):
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
    check(d["firmware"]["iface_version"] != 0, "firmware.iface_version", out)
    check("medium" in d["group_priorities"]["allowed"], "group_priorities", out)


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
                         (["sweep", "scenarios/frame.toml"], "not implemented yet (issue #17)"),
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
    # The same scenario passes under other interleavings too.
    for seed in ("2", "3"):
        run_ok(exe, scenario("fw-hang.toml"), "--seed", seed, "--preempt", "0.3")


CASES = {"info": case_info, "info_json": case_info_json, "disasm": case_disasm, "bad_usage": case_bad_usage,
         "run_compute": case_run_compute, "run_rotation": case_run_rotation, "run_json": case_run_json,
         "run_trace": case_run_trace, "run_faults": case_run_faults, "run_tiler": case_run_tiler, "run_fail": case_run_fail,
         "run_inject": case_run_inject, "run_real": case_run_real, "run_timeout": case_run_timeout,
         "run_mmu_fault": case_run_mmu_fault, "run_fw_hang": case_run_fw_hang}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        sys.exit(__doc__)
    CASES[sys.argv[1]](sys.argv[2], sys.argv[3])
