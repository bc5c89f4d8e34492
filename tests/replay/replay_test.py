#!/usr/bin/env python3
"""Capture and replay tests (docs/capture.md).

usage: replay_test.py CASE UPANTHOR WORKDIR [--capture FILE] [--client PROGRAM] [--arg ARG]...
                      [--env KEY=VALUE]...

Cases:
  capture        run --client with UPANTHOR_CAPTURE (and the --env settings, the preload library
                 in LD_PRELOAD), check the file, replay it (exit 0), and replay it with a CS fatal
                 fault injected (exit 0, the group faulted, nothing leaked)
  committed      replay --capture (exit 0, no mismatch; --json agrees)
  truncated      the capture cut short: exit 2, "truncated"
  corrupt        bytes of the compressed stream flipped: exit 2
  not_capture    a text file: exit 2, "not an upanthor capture"
  version        the header's format version set to 2: exit 2, names both versions
  mismatch       one recorded output edited (VERSION's driver name): exit 1, the mismatch names the
                 record's line and the call
  inject         a CS fatal fault injected: exit 0, the group faulted, no kernel problem; without
                 it, no group faulted
  sweep          `upanthor sweep` over the capture: exit 0
  stuck          the sw_sync capture without its signalling calls and with a wait that never
                 times out: exit 1, the stuck call named, the threads unwound, nothing leaked
  restore        the recorded BO page (the command stream the client wrote through its mapping)
                 replaced by invalid instructions: the replayed job faults, so the page was written
                 back into the BO before the submission
  host_write     the pages recorded at the host's syncobj waits and signals dropped from the Mesa
                 sync capture (vkSetEvent releasing a vkCmdWaitEvents): the replay fails (exit 1)
  hang           a dispatch made to hang (ShaderHang): exit 0, a group timed out, divergences
                 listed, nothing leaked, no kernel problem (the live mesa_hang's device loss)
"""
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import capture_file as cf  # noqa: E402

DRM_IOCTL_VERSION = 0xC0406400
GROUP_SUBMIT = 0xC0186449
VM_BIND = 0xC0186445


def run(cmd, env=None, expect=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(cmd)}: exit {p.returncode}, expected {expect}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg, p=None):
    if not cond:
        if p is not None:
            msg += f"\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
        fail(msg)


def replay(up, path, *extra, expect=0):
    return run([up, "replay", path, *extra], expect=expect)


def check_inject(up, path):
    p = replay(up, path, "--inject", "kind=CsFatal,after_count=1,cs_event=instruction", expect=0)
    check("1 fatal fault" in p.stdout, "the injected CS fatal fault did not fault the group", p)
    check("kernel:" not in p.stdout and "leaked" not in p.stdout + p.stderr, "the faulted replay left problems", p)
    p = replay(up, path, expect=0)
    check("0 fatal fault" in p.stdout, "a group faulted without a fault injected", p)


def case_capture(up, work, client, envs, args=()):
    path = os.path.join(work, os.path.basename(client) + ".upc")
    if os.path.exists(path):
        os.remove(path)
    env = dict(os.environ)
    for kv in envs:
        k, v = kv.split("=", 1)
        env[k] = v
    env["UPANTHOR_CAPTURE"] = path
    p = run([client, *args], env=env, expect=0)
    check(os.path.exists(path), "no capture written", p)
    recs = cf.read(path)
    check(recs[0][0] == cf.HEADER and recs[-1][0] == cf.END, "the capture lacks its header or end record")
    ioctls = [r for r in recs if r[0] == cf.IOCTL]
    check(len(ioctls) > 5, f"only {len(ioctls)} ioctls recorded")
    check(any(r[0] == cf.OPEN for r in recs) and any(r[0] == cf.CLOSE for r in recs), "opens/closes not recorded")
    if "libdrm_client" in client:
        check(any(cf.ioctl_fields(r[1])[0] == GROUP_SUBMIT for r in ioctls), "no GROUP_SUBMIT recorded")
        check(any(r[0] == cf.PAGE for r in recs), "no BO page recorded before the submission")
        check(any(r[0] == cf.MMAP for r in recs), "no mmap recorded")
    p = replay(up, path, expect=0)
    check("0 mismatch" in p.stdout and "PASS" in p.stdout, "the replay of a fresh capture did not pass", p)
    if "libdrm_client" in client:
        check_inject(up, path)


def case_committed(up, path):
    p = replay(up, path, expect=0)
    check("0 mismatch" in p.stdout, "the committed capture does not replay cleanly", p)
    p = replay(up, path, "--json", "--seed", "7", expect=0)
    doc = json.loads(p.stdout)
    check(doc["passed"] is True and doc["mismatches"] == [] and doc["kernel"] == [] and doc["seed"] == 7,
          "--json does not agree", p)
    check(doc["ioctls"] > 5 and doc["calls"] >= doc["ioctls"], "--json counts are wrong", p)
    # Mesa's dispatch, two barrier-separated dispatches, fill, copy and update: six RUN_COMPUTEs on
    # real descriptors, which the mock completes without running their shaders (and says so).
    real = 6 if os.path.basename(path) == "vk_client_work.upc" else 0
    check(doc["real_descriptor_jobs"] == real, "real-descriptor jobs: %d, expected %d" % (doc["real_descriptor_jobs"], real), p)


def case_truncated(up, work, path):
    data = open(path, "rb").read()
    bad = os.path.join(work, "truncated.upc")
    open(bad, "wb").write(data[: len(data) // 2])
    p = replay(up, bad, expect=2)
    check("truncated" in p.stderr, "no 'truncated' in the error", p)
    # A complete gzip stream whose last records (the end record among them) are missing.
    recs = cf.read(path)
    bad2 = os.path.join(work, "no_end.upc")
    cf.write(bad2, recs[:-3])
    p = replay(up, bad2, expect=2)
    check("truncated" in p.stderr and "no end record" in p.stderr, "a capture without its end record is accepted", p)


def case_corrupt(up, work, path):
    data = bytearray(open(path, "rb").read())
    for k in range(len(data) // 3, len(data) // 3 + 16):
        data[k] ^= 0x5A
    bad = os.path.join(work, "corrupt.upc")
    open(bad, "wb").write(bytes(data))
    p = replay(up, bad, expect=2)
    check(p.stderr.startswith("upanthor replay: " + bad), "the error does not name the file", p)


def case_not_capture(up, work):
    bad = os.path.join(work, "text.upc")
    open(bad, "w").write("[gpu]\nname = 'not a capture'\n")
    p = replay(up, bad, expect=2)
    check("not an upanthor capture" in p.stderr, "a text file is not refused clearly", p)
    p = replay(up, os.path.join(work, "missing.upc"), expect=2)
    check("cannot open" in p.stderr, "a missing file is not reported", p)


def case_version(up, work, path):
    recs = cf.read(path)
    hdr = recs[0][1]
    (version,) = struct.unpack_from("<I", hdr, 8)
    check(version == 1, f"the committed capture has format version {version}")
    struct.pack_into("<I", hdr, 8, 2)
    bad = os.path.join(work, "version2.upc")
    cf.write(bad, recs)
    p = replay(up, bad, expect=2)
    check("format version 2" in p.stderr and "reads version 1" in p.stderr, "the version is not checked", p)


def case_mismatch(up, work, path):
    recs = cf.read(path)
    for i, (t, payload) in enumerate(recs):
        if t != cf.IOCTL or cf.ioctl_fields(payload)[0] != DRM_IOCTL_VERSION:
            continue
        # The first buffer is the driver's name: make its recorded output say "panthoR".
        _, _, _, out_off, arg_out = cf.ioctl_fields(payload)
        off = out_off + len(arg_out)
        (nbufs,) = struct.unpack_from("<I", payload, off)
        off += 4
        if nbufs == 0:
            continue
        _ptr, size, _flags = struct.unpack_from("<QIB", payload, off)
        off += 13
        (n_in,) = struct.unpack_from("<I", payload, off)
        off += 4 + n_in
        (n_out,) = struct.unpack_from("<I", payload, off)
        off += 4
        check(bytes(payload[off:off + 7]) == b"panthor", "the recorded VERSION name is not panthor")
        payload[off + 6] = ord("R")
        line = i + 1
        break
    else:
        fail("no VERSION call with a name buffer in the capture")
    bad = os.path.join(work, "mismatch.upc")
    cf.write(bad, recs)
    p = replay(up, bad, expect=1)
    check(f"line {line}: VERSION" in p.stdout, f"the mismatch does not name line {line} and VERSION", p)
    check("buffer 0" in p.stdout and "byte 6" in p.stdout, "the mismatch does not say what differed", p)
    check("FAIL" in p.stdout, "no FAIL", p)


def case_restore(up, work, path):
    recs = cf.read(path)
    pages = [r for r in recs if r[0] == cf.PAGE]
    check(len(pages) >= 1, "the capture holds no BO page")
    for r in pages:
        r[1] = r[1][:8] + b"\xff" * 4096
    bad = os.path.join(work, "invalid_stream.upc")
    cf.write(bad, recs)
    p = replay(up, bad, expect=0)
    check("1 fatal fault" in p.stdout, "the restored (invalid) command stream did not reach the GPU", p)
    p = replay(up, path, expect=0)
    check("0 fatal fault" in p.stdout, "the recorded command stream faulted", p)


def case_stuck(up, work, path):
    recs = cf.read(path)
    out = []
    for r in recs:
        if r[0] == cf.IOCTL:
            req, in_off, _, _, _ = cf.ioctl_fields(r[1])
            if req == 0xC02864CA:  # SYNCOBJ_TIMELINE_WAIT (40-byte struct): no timeout
                struct.pack_into("<q", r[1], in_off + 16, 2**63 - 1)
            if req in (0x40045701, 0xC02064CC):  # SW_SYNC_IOC_INC, SYNCOBJ_TRANSFER: dropped
                continue
        out.append(r)
    bad = os.path.join(work, "stuck.upc")
    cf.write(bad, out)
    p = replay(up, bad, expect=1)
    check("did not finish" in p.stdout and "stuck at line" in p.stdout and "SYNCOBJ_TIMELINE_WAIT" in p.stdout,
          "the stuck replay is not reported", p)
    check("kernel:" not in p.stdout and "LeakSanitizer" not in p.stderr, "the stuck replay did not unwind cleanly", p)


def case_host_write(up, work, path):
    """The pages recorded at the host's syncobj waits and signals are what releases a GPU wait on
    memory the host wrote (Mesa's vkSetEvent for a vkCmdWaitEvents): without them the replay of
    the committed sync capture must not pass."""
    recs = cf.read(path)
    dropped = 0
    for t, payload in recs:
        if t == cf.IOCTL and cf.ioctl_fields(payload)[0] not in (GROUP_SUBMIT, VM_BIND):
            dropped += cf.drop_pages(payload)
    check(dropped > 0, "the capture records no BO page at a host wait or signal")
    edited = os.path.join(work, "no_wait_pages.upc")
    cf.write(edited, recs)
    p = replay(up, edited, expect=1)
    check("mismatch" in p.stdout or "stuck" in p.stdout + p.stderr, "the replay without the pages failed silently", p)


def case_hang(up, path):
    """A dispatch made to hang in the replay of a normal run (the live mesa_hang's fault): the
    group ends timed out, as the live run's device is lost, nothing leaks, the kernel reports
    nothing; the calls after the fault diverge (expected with --inject, listed, not failures)."""
    p = replay(up, path, "--inject", "kind=ShaderHang,after_count=1", "--json", expect=0)
    doc = json.loads(p.stdout)
    groups = doc.get("groups", {})
    check(groups.get("timedout", 0) + groups.get("fatal_fault", 0) >= 1, "no group timed out or faulted", p)
    check(doc["kernel"] == [] and doc["passed"] is True, "the hung replay left kernel problems or leaks", p)
    check(len(doc.get("divergences", [])) > 0, "nothing diverged after the hang", p)


def case_sweep(up, path):
    p = run([up, "sweep", path, "--seeds", "1..4", "--jobs", "2"], expect=0)
    check("4 passed" in p.stdout, "the sweep over the capture did not pass", p)


def main():
    args = sys.argv[1:]
    case, up, work = args[0], args[1], args[2]
    rest = args[3:]
    opts = {"--capture": None, "--client": None}
    envs, client_args = [], []
    k = 0
    while k < len(rest):
        if rest[k] == "--env":
            envs.append(rest[k + 1])
        elif rest[k] == "--arg":
            client_args.append(rest[k + 1])
        else:
            opts[rest[k]] = rest[k + 1]
        k += 2
    os.makedirs(work, exist_ok=True)
    cap = opts["--capture"]
    if case == "capture":
        case_capture(up, work, opts["--client"], envs, client_args)
    elif case == "committed":
        case_committed(up, cap)
    elif case == "truncated":
        case_truncated(up, work, cap)
    elif case == "corrupt":
        case_corrupt(up, work, cap)
    elif case == "not_capture":
        case_not_capture(up, work)
    elif case == "version":
        case_version(up, work, cap)
    elif case == "mismatch":
        case_mismatch(up, work, cap)
    elif case == "inject":
        check_inject(up, cap)
    elif case == "stuck":
        case_stuck(up, work, cap)
    elif case == "restore":
        case_restore(up, work, cap)
    elif case == "host_write":
        case_host_write(up, work, cap)
    elif case == "hang":
        case_hang(up, cap)
    elif case == "sweep":
        case_sweep(up, cap)
    else:
        fail("unknown case " + case)
    print("PASS")


if __name__ == "__main__":
    main()
