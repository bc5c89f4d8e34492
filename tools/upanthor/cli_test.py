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
                         (["run", "scenarios/frame.toml"], "not implemented yet (issue #17)")):
        rc, out, err = run(exe, *args)
        check(rc == 2, f"{args}: exit {rc}, expected 2", out, err)
        check(needle in err, f"{args}: stderr lacks {needle!r}", out, err)
    rc, out, err = run(exe, "--help")
    check(rc == 0 and "usage: upanthor" in out, "--help", out, err)


CASES = {"info": case_info, "info_json": case_info_json, "disasm": case_disasm, "bad_usage": case_bad_usage}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        sys.exit(__doc__)
    CASES[sys.argv[1]](sys.argv[2], sys.argv[3])
