#!/usr/bin/env python3
"""CTest checks of `upanthor merge` and `sweep --shard auto` (tools/upanthor/CMakeLists.txt, label sim).

usage: merge_test.py CASE UPANTHOR WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_test import check, run, scenario, sweep  # noqa: E402

# What a merge may report differently from the unsharded run: how long it took and where from.
TIMING = ("wall_time_s", "files", "shards")


def merged(exe, *files, partial=False):
    args = ["merge", *files, "--json"] + (["--partial"] if partial else [])
    rc, out, err = run(exe, *args)
    doc = json.loads(out) if out.strip() else None
    return rc, doc, out, err


def comparable(group):
    return {k: v for k, v in group.items() if k not in TIMING}


def write(work, name, doc):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def case_merge_parallel(exe, work):
    """A sweep as four shards through GNU parallel merges to what the unsharded sweep reports."""
    check(shutil.which("parallel") is not None, "GNU parallel is missing (scripts/setup.sh installs it)")
    d = os.path.join(work, "merge_parallel")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    # Seed 5 crashes (the sweep's test hook), so the merge has a failing seed to carry.
    env = {**os.environ, "UPANTHOR_SWEEP_TEST_ABORT_SEED": "5"}
    p = subprocess.run(["parallel", "--will-cite", "--halt", "never", exe, "sweep", scenario("compute.toml"),
                        "--seeds", "1..12", "--shard", "{}/4", "--json", ">", os.path.join(d, "shard{}.json"),
                        ":::", "0", "1", "2", "3"], capture_output=True, text=True, timeout=300, env=env)
    # Each shard's sweep exits 1 when it has the crashing seed; parallel's status counts them.
    check(p.returncode == 1, f"parallel: exit {p.returncode}, expected 1 (one shard failed)", p.stdout, p.stderr)
    shards = [os.path.join(d, f"shard{i}.json") for i in range(4)]
    rc, sharded, out, err = merged(exe, *shards)
    check(rc == 1, f"merge of the shards: exit {rc}, expected 1", out, err)
    rc, out, err = sweep(exe, scenario("compute.toml"), "--seeds", "1..12", "--json",
                         env={"UPANTHOR_SWEEP_TEST_ABORT_SEED": "5"})
    check(rc == 1, f"unsharded sweep: exit {rc}", out, err)
    whole = write(d, "whole.json", json.loads(out))
    rc, unsharded, out2, err2 = merged(exe, whole)
    check(rc == 1, f"merge of the unsharded sweep: exit {rc}", out2, err2)
    a, b = sharded["groups"], unsharded["groups"]
    check(len(a) == 1 and len(b) == 1, "one group each", out, out2)
    check(comparable(a[0]) == comparable(b[0]), "the merged shards equal the unsharded sweep", out, out2)
    check(a[0]["seeds"] == list(range(1, 13)) and a[0]["seeds_failed"] == 1, "seeds and failures", out)
    check(a[0]["failing"][0]["seed"] == 5 and "--seed 5 --preempt 0.3" in a[0]["failing"][0]["replay"],
          "the failing seed keeps its replay command", out)
    check(a[0]["shards"] == {"count": 4, "missing": 0, "repeated": []} and sharded["totals"]["runs"] == 12,
          "shard bookkeeping and totals", out)
    # The text form: one section, the failing seed with its replay, the totals.
    rc, text, err = run(exe, "merge", *shards)
    for needle in ("merged 4 files into 1 result", "12 seeds run: 11 passed, 1 failed", "seed 5: crashed",
                   "total: 12 runs", "FAIL"):
        check(needle in text, f"text merge lacks {needle!r}", text, err)


def case_merge_incomplete(exe, work):
    """A missing or repeated shard is refused (exit 2) unless --partial; bad files are named."""
    d = os.path.join(work, "merge_incomplete")
    os.makedirs(d, exist_ok=True)
    paths = []
    for i in range(3):
        rc, out, err = sweep(exe, scenario("compute.toml"), "--seeds", "1..8", "--shard", f"{i}/4", "--json")
        check(rc == 0, f"shard {i}: exit {rc}", out, err)
        paths.append(write(d, f"s{i}.json", json.loads(out)))
    rc, text, err = run(exe, "merge", *paths)
    check(rc == 2 and "INCOMPLETE: 1 of 4 shards missing (index 3)" in text and "--partial" in err,
          f"a missing shard: exit {rc}, expected 2", text, err)
    rc, doc, out, err = merged(exe, *paths, partial=True)
    check(rc == 0 and doc["complete"] is False and doc["passed"] is False, f"--partial: exit {rc}", out, err)
    check(doc["groups"][0]["seeds_run"] == 6, "--partial counts what is there", out)
    rc, text, err = run(exe, "merge", *paths, paths[0])
    check(rc == 2 and "more than once (index 0)" in text, f"a repeated shard: exit {rc}", text, err)
    # Files that are not results: each is named, nothing is merged.
    junk = os.path.join(d, "junk.json")
    with open(junk, "w") as f:
        f.write("not json")
    rc, out, err = run(exe, "merge", paths[0], junk)
    check(rc == 2 and "junk.json: not a valid result file" in err and out == "", f"junk: exit {rc}", out, err)
    other = write(d, "other.json", {"kind": "coverage", "format": 1})
    rc, out, err = run(exe, "merge", other)
    check(rc == 2 and "unknown result kind 'coverage'" in err, f"unknown kind: exit {rc}", out, err)
    future = write(d, "future.json", {**json.load(open(paths[0])), "format": 2})
    rc, out, err = run(exe, "merge", future)
    check(rc == 2 and "result format 2" in err, f"another format: exit {rc}", out, err)
    rc, out, err = run(exe, "merge", os.path.join(d, "absent.json"))
    check(rc == 2 and "cannot open" in err, f"absent file: exit {rc}", out, err)
    rc, out, err = run(exe, "merge")
    check(rc == 2 and "missing argument" in err, f"no file: exit {rc}", out, err)


def campaign_shard(index, count, cells, failing=()):
    return {"kind": "campaign", "format": 1, "name": "panthor-recovery", "seeds_per_cell": 2,
            "shard": {"index": index, "count": count},
            "cells": [{"class": c, "trigger": t, "runs": r, "violations": v, "first_failing_seed": s}
                      for c, t, r, v, s in cells],
            "failing": [{"cell": c, "seed": s, "replay": f"KSHIM_SEED={s} bin --gtest_filter='X'",
                         "failures": ["fence not signalled"]} for c, s in failing]}


def case_merge_mixed(exe, work):
    """Campaign shards add up per cell; fuzz campaigns of a target add up; each kind is its own group."""
    d = os.path.join(work, "merge_mixed")
    os.makedirs(d, exist_ok=True)
    c0 = write(d, "c0.json", campaign_shard(0, 2, [("mmu_fault", "before_submit", 1, 0, 0),
                                                    ("cs_fault", "while_running", 1, 1, 77)],
                                            failing=[("cs_fault x while_running", 77)]))
    c1 = write(d, "c1.json", campaign_shard(1, 2, [("mmu_fault", "before_submit", 1, 0, 0),
                                                    ("cs_fault", "while_running", 1, 1, 12)],
                                            failing=[("cs_fault x while_running", 12)]))
    f0 = write(d, "f0.json", {"kind": "fuzz", "format": 1, "target": "fuzz_ioctl", "executions": 1000,
                              "seconds": 10, "workers": 2, "findings": []})
    f1 = write(d, "f1.json", {"kind": "fuzz", "format": 1, "target": "fuzz_ioctl", "executions": 500,
                              "seconds": 5, "workers": 2,
                              "findings": [{"replay": "build/fuzz/fuzz/fuzz_ioctl crash-1", "failures": ["crash-1"]}]})
    rc, doc, out, err = merged(exe, c0, f0, c1, f1)
    check(rc == 1 and doc["totals"] == {"files": 4, "groups": 2, "runs": 4, "failed": 3},
          f"mixed merge: exit {rc}", out, err)
    camp, fuzz = doc["groups"]
    cells = {(c["class"], c["trigger"]): c for c in camp["cells"]}
    check(cells[("cs_fault", "while_running")]["runs"] == 2 and cells[("cs_fault", "while_running")]["violations"] == 2
          and cells[("cs_fault", "while_running")]["first_failing_seed"] == 12, "cells add up, first seed is the least", out)
    check([f["seed"] for f in camp["failing"]] == [12, 77], "every failing run, by seed", out)
    check(fuzz["executions"] == 1500 and fuzz["workers"] == 4 and len(fuzz["findings"]) == 1, "fuzz adds up", out)
    rc, text, err = run(exe, "merge", c0, f0, c1, f1)
    for needle in ("campaign panthor-recovery: 2 seeds per cell, 2 files, 2 shards", "KSHIM_SEED=12 bin",
                   "fuzz fuzz_ioctl: 2 files, 4 workers, 1500 executions", "build/fuzz/fuzz/fuzz_ioctl crash-1",
                   "total: 4 runs (sweeps and campaigns), 3 failed", "FAIL"):
        check(needle in text, f"text merge lacks {needle!r}", text, err)
    # Shards of different grids (another seeds_per_cell) are different runs, each incomplete.
    other = campaign_shard(1, 2, [("mmu_fault", "before_submit", 1, 0, 0)])
    other["seeds_per_cell"] = 3
    rc, text, err = run(exe, "merge", c0, write(d, "c1b.json", other))
    check(rc == 2 and text.count("INCOMPLETE:") == 2, f"two grids: exit {rc}", text, err)


def case_sweep_shard_auto(exe, work):
    """--shard auto reads the shard from a job engine's environment."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("SLURM_", "UPANTHOR_SHARD", "JOB_COMPLETION_INDEX"))}

    def auto(env):
        p = subprocess.run([exe, "sweep", scenario("compute.toml"), "--seeds", "1..8", "--shard", "auto", "--json"],
                           capture_output=True, text=True, timeout=300, env={**base, **env})
        return p.returncode, p.stdout, p.stderr

    for env, want in (({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "4"}, 2),
                      ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_STEP": "2",
                        "SLURM_ARRAY_TASK_COUNT": "4"}, 2),
                      ({"JOB_COMPLETION_INDEX": "1", "UPANTHOR_SHARD_COUNT": "4"}, 1),
                      ({"UPANTHOR_SHARD_INDEX": "0", "UPANTHOR_SHARD_COUNT": "4"}, 0)):
        rc, out, err = auto(env)
        check(rc == 0, f"--shard auto with {env}: exit {rc}", out, err)
        doc = json.loads(out)
        check(doc["shard"] == {"index": want, "count": 4}, f"--shard auto with {env}: shard {doc['shard']}", out)
        check(doc["seeds"] == [s for s in range(1, 9) if (s - 1) % 4 == want], "the shard's seeds", out)
    for env, needle in (({}, "no shard in the environment"),
                        ({"JOB_COMPLETION_INDEX": "1"}, "UPANTHOR_SHARD_COUNT"),
                        ({"SLURM_ARRAY_TASK_ID": "9", "SLURM_ARRAY_TASK_COUNT": "4"}, "SLURM_ARRAY_TASK_ID")):
        rc, out, err = auto(env)
        check(rc == 2 and needle in err and out == "", f"--shard auto with {env}: exit {rc}", out, err)


CASES = {"merge_parallel": case_merge_parallel, "merge_incomplete": case_merge_incomplete,
         "merge_mixed": case_merge_mixed, "sweep_shard_auto": case_sweep_shard_auto}

if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in CASES:
        sys.exit(__doc__)
    CASES[sys.argv[1]](sys.argv[2], sys.argv[3])
