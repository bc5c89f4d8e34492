#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of fuzz/ (docs/fuzzing.md).
#
#   scripts/fuzz.sh TARGET [SECONDS]     fuzz_ioctl | fuzz_fw_image | fuzz_cs | fuzz_gpuvm |
#                                        fuzz_panfrost_ioctl | all
#
# Installs what is missing (scripts/setup.sh), configures and builds the `fuzz` preset target,
# then runs it on its seed corpus for SECONDS (default 60) of wall time. New inputs go to a
# working corpus under build/fuzz/corpus/<target> (the checked-in seeds stay untouched). A crash
# is minimised (-minimize_crash) and saved under fuzz/crashes/<target>/; the script then exits
# non-zero. `all` runs every target for SECONDS each and fails if any of them found something.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

TARGETS=(fuzz_ioctl fuzz_fw_image fuzz_cs fuzz_gpuvm fuzz_panfrost_ioctl)
target=${1:-}
seconds=${2:-60}
if [ -z "$target" ]; then
  echo "usage: scripts/fuzz.sh TARGET|all [SECONDS]   (targets: ${TARGETS[*]})" >&2
  exit 2
fi
if [ "$target" = all ]; then
  status=0
  for t in "${TARGETS[@]}"; do
    "$0" "$t" "$seconds" || status=1
  done
  exit $status
fi
case " ${TARGETS[*]} " in
  *" $target "*) ;;
  *) echo "fuzz.sh: unknown target '$target' (targets: ${TARGETS[*]})" >&2; exit 2 ;;
esac

# UPANTHOR_FUZZ_PRESET=fuzz-fast: the build without ASan/UBSan (about 5x the executions per
# second; lockdep, the leak accounting and every other check of the targets stay).
preset=${UPANTHOR_FUZZ_PRESET:-fuzz}
# UPANTHOR_FUZZ_NO_BUILD=1: the targets are built already (scripts/test.sh builds them once, then
# runs several at a time). UPANTHOR_BUILD_LOCK=FILE serialises the build with others (flock).
if [ -z "${UPANTHOR_FUZZ_NO_BUILD:-}" ]; then
  bash scripts/setup.sh
  cmake --preset "$preset" >/dev/null
  lock=()
  if [ -n "${UPANTHOR_BUILD_LOCK:-}" ]; then lock=(flock "$UPANTHOR_BUILD_LOCK"); fi
  "${lock[@]}" cmake --build --preset "$preset" --target "$target" upanthor_firmware -j"${FUZZ_JOBS:-2}"
fi

bin="$ROOT/build/$preset/fuzz/$target"
work="$ROOT/build/fuzz/corpus/$target"
crashes="$ROOT/fuzz/crashes/$target"
artifacts="$ROOT/build/$preset/artifacts/$target"
mkdir -p "$work" "$artifacts"
rm -f "$artifacts"/*

# The options file holds what OSS-Fuzz passes too: [libfuzzer] flags and [asan] options.
source "$ROOT/scripts/fuzz-options.sh"
source "$ROOT/scripts/fuzz-history.sh"
read_fuzz_options "$ROOT/fuzz/$target.options"
opts=("${fuzz_opts[@]}")
[ -n "$fuzz_asan_opts" ] && export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$fuzz_asan_opts"

echo "fuzz.sh: $target for ${seconds}s (${opts[*]})"
set +e
"$bin" "${opts[@]}" -max_total_time="$seconds" -print_final_stats=1 \
  -artifact_prefix="$artifacts/" "$work" "$ROOT/fuzz/corpus/$target" 2>&1 |
  tee "$artifacts/log.txt" | grep -E --line-buffered '^#[0-9]+.*(pulse|DONE)|^stat::|FINDING|ERROR|SUMMARY|^Done'
rc=${PIPESTATUS[0]}
set -e

# ASan says so when a stack switch it was not told of (a fiber) keeps it from unpoisoning a stack:
# what it reports after that cannot be trusted, so the run fails whatever it found.
if grep -q 'False positive error reports may follow' "$artifacts/log.txt"; then
  echo "fuzz.sh: $target: ASan lost track of the stack (fiber switches not annotated?); see $artifacts/log.txt" >&2
  exit 1
fi
found=$(find "$artifacts" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | head -1)
if [ -n "$found" ]; then
  mkdir -p "$crashes"
  name=$(basename "$found")
  # fuzz_ioctl keeps the inputs its device ran since it booted (docs/fuzzing.md, "Findings that
  # need earlier inputs"). When the input does not fail on a fresh device, that history is the
  # reproducer: it is saved instead, unminimised.
  history=$(find "$artifacts" -maxdepth 1 -type f -name 'history-*' | head -1)
  if [ -n "$history" ] && "$bin" "${opts[@]}" "$found" >"$artifacts/alone.txt" 2>&1; then
    trim_world_history "$history" "$crashes/$name.history"
    echo "fuzz.sh: $target found a problem that needs earlier inputs; the device's history is saved as fuzz/crashes/$target/$name.history" >&2
    echo "fuzz.sh: replay: $bin fuzz/crashes/$target/$name.history   (UPANTHOR_FUZZ_TRACE=1 lists the programs)" >&2
    echo "fuzz.sh: log: $artifacts/log.txt" >&2
    exit 1
  fi
  min="$artifacts/min-$name"
  # -minimize_crash keeps the input failing while it shrinks it.
  "$bin" "${opts[@]}" -minimize_crash=1 -max_total_time=60 -exact_artifact_path="$min" "$found" \
    >"$artifacts/minimize.txt" 2>&1 || true
  if [ -s "$min" ]; then cp "$min" "$crashes/$name"; else cp "$found" "$crashes/$name"; fi
  echo "fuzz.sh: $target found a problem; input saved as fuzz/crashes/$target/$name" >&2
  echo "fuzz.sh: replay: $bin fuzz/crashes/$target/$name   (UPANTHOR_FUZZ_TRACE=1 lists fuzz_ioctl and fuzz_panfrost_ioctl programs)" >&2
  echo "fuzz.sh: log: $artifacts/log.txt" >&2
  exit 1
fi
if [ "$rc" -ne 0 ]; then
  echo "fuzz.sh: $target exited with $rc without an artifact (see $artifacts/log.txt)" >&2
  exit "$rc"
fi
echo "fuzz.sh: $target: no findings in ${seconds}s"
