#!/usr/bin/env python3
"""Writes clang-tidy's unity translation units (scripts/tidy.sh).

clang-tidy spends most of a file's time on what the file includes (the standard library, Boost,
our own headers): its matchers walk the whole AST. Checking the files of one folder that share a
compile command as one translation unit walks those headers once per batch instead of once per
file.

    tidy_units.py DB OUT_DIR BATCH FILE...

Groups FILE... (paths relative to the repository) by their compile command in DB's
compile_commands.json, cuts each group into batches of at most BATCH files, writes each batch as
OUT_DIR/unit-N.cpp (one #include per file), and writes OUT_DIR/compile_commands.json with the
batch's command. Prints one line per batch: the unit's path, a tab, its files separated by
spaces. A file missing from DB is printed alone with no unit (checked on its own).
"""
import json
import os
import shlex
import sys


def main() -> int:
    db_dir, out_dir, batch, files = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
    root = os.getcwd()
    with open(os.path.join(db_dir, "compile_commands.json"), encoding="utf-8") as f:
        entries = {os.path.realpath(e["file"]): e for e in json.load(f)}

    groups: dict[tuple[str, str], list[str]] = {}
    alone: list[str] = []
    for rel in files:
        entry = entries.get(os.path.realpath(os.path.join(root, rel)))
        if entry is None:
            alone.append(rel)
            continue
        args = shlex.split(entry["command"])
        # The command without its output and input: what decides how the file is parsed.
        key_args = []
        skip = False
        for a in args:
            if skip:
                skip = False
                continue
            if a in ("-o", "-c"):
                skip = True
                continue
            key_args.append(a)
        key = (entry["directory"], shlex.join(key_args))
        groups.setdefault(key, []).append(rel)

    os.makedirs(out_dir, exist_ok=True)
    db = []
    n = 0
    for (directory, command), members in sorted(groups.items(), key=lambda kv: kv[1][0]):
        for i in range(0, len(members), batch):
            chunk = members[i : i + batch]
            unit = os.path.join(os.path.realpath(out_dir), f"unit-{n}.cpp")
            n += 1
            with open(unit, "w", encoding="utf-8") as f:
                for rel in chunk:
                    f.write(f'#include "{os.path.join(root, rel)}"\n')
            db.append({"directory": directory, "command": f"{command} -c {unit}", "file": unit})
            print(f"{unit}\t{' '.join(chunk)}")
    for rel in alone:
        print(f"\t{rel}")
    with open(os.path.join(out_dir, "compile_commands.json"), "w", encoding="utf-8") as f:
        json.dump(db, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
