#!/usr/bin/env bash
# A fuzzing campaign of a fixed number of executions (docs/fuzzing.md, "The campaign").
#
#   scripts/fuzz-campaign.sh TARGET EXECUTIONS [WORKERS]
#
# Runs WORKERS (default: the number of cores) libFuzzer processes of TARGET on one shared corpus
# until they have executed EXECUTIONS inputs between them. A worker that stops on a finding has
# its input saved and is started again for what is left of its share, so one finding does not end
# the campaign. The fast build (`fuzz-fast`) does the executions; at the end every input of the
# corpus is replayed once through the sanitized build (`fuzz`), so that what the fast build cannot
# see (memory errors, undefined behaviour) is checked on everything the campaign found.
#
#   UPANTHOR_FUZZ_PRESET   the build that does the executions (default fuzz-fast)
#   CAMPAIGN_DIR           where the corpus, logs and findings go (default build/campaign/TARGET)
#   UPANTHOR_FUZZ_NO_BUILD=1   the targets are built already
#
# Prints the executions and findings per worker run, writes CAMPAIGN_DIR/result.json for
# `upanthor merge` (docs/upanthor.md, "Beyond one machine"), and exits 1 if anything was found (the
# findings are in CAMPAIGN_DIR/findings; replay one with `build/fuzz/fuzz/TARGET FILE`, and
# fuzz_ioctl's `<run>-history-<pid>` beside it the same way).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

target=${1:-}
total=${2:-}
workers=${3:-$(nproc)}
if [ -z "$target" ] || [ -z "$total" ] || ! [ -f "fuzz/$target.options" ]; then
  echo "usage: scripts/fuzz-campaign.sh TARGET EXECUTIONS [WORKERS]" >&2
  exit 2
fi
preset=${UPANTHOR_FUZZ_PRESET:-fuzz-fast}
dir=${CAMPAIGN_DIR:-$ROOT/build/campaign/$target}
mkdir -p "$dir/corpus" "$dir/findings" "$dir/logs"

if [ -z "${UPANTHOR_FUZZ_NO_BUILD:-}" ]; then
  bash scripts/setup.sh
  for p in "$preset" fuzz; do
    cmake --preset "$p" >/dev/null
    cmake --build --preset "$p" --target "$target" upanthor_firmware -j"$(nproc)"
  done
fi
bin="$ROOT/build/$preset/fuzz/$target"
check_bin="$ROOT/build/fuzz/fuzz/$target"

# The options file's flags, as scripts/fuzz.sh passes them; the campaign's own -runs, -seed and
# -artifact_prefix come after. Its [asan] options go to the sanitized replay.
source "$ROOT/scripts/fuzz-options.sh"
source "$ROOT/scripts/fuzz-history.sh"
read_fuzz_options "$ROOT/fuzz/$target.options"
opts=("${fuzz_opts[@]}")

# One worker: runs until its share is executed, restarting after each finding.
worker() {
  local id=$1 left=$2 run=0 done_now rc
  while [ "$left" -gt 0 ]; do
    run=$((run + 1))
    local log="$dir/logs/w$id.$run.log"
    set +e
    "$bin" "${opts[@]}" -runs="$left" -print_final_stats=1 -seed="$((id * 1000 + run))" \
      -artifact_prefix="$dir/findings/w$id.$run-" "$dir/corpus" "$ROOT/fuzz/corpus/$target" >"$log" 2>&1
    rc=$?
    set -e
    done_now=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ -z "$done_now" ]; then
      # Stopped by a finding before the final stats: the last status line has the count.
      done_now=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    fi
    done_now=${done_now:-0}
    echo "worker $id run $run: $done_now executions, exit $rc" | tee -a "$dir/logs/summary.txt"
    # fuzz_ioctl's device history (docs/fuzzing.md, "Findings that need earlier inputs") matters
    # only beside a finding; an interrupted run leaves its file too.
    for h in "$dir/findings/w$id.$run-history-"*; do
      [ -f "$h" ] || continue
      if [ "$rc" -ne 0 ]; then trim_world_history "$h" "$h.tmp" && mv "$h.tmp" "$h"; else rm -f "$h"; fi
    done
    if [ "$done_now" -eq 0 ] && [ "$rc" -ne 0 ]; then
      echo "worker $id: the target fails at start-up, see $log" >&2
      return 1
    fi
    left=$((left - done_now))
  done
}

: >"$dir/logs/summary.txt"
start=$(date +%s)
pids=()
share=$(( (total + workers - 1) / workers ))
for i in $(seq 1 "$workers"); do
  worker "$i" "$share" &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done

executed=$(awk '/executions/ {s += $5} END {print s + 0}' "$dir/logs/summary.txt")
echo "campaign: $executed executions of $target in $(( $(date +%s) - start )) s, $workers workers ($preset)"

# Everything the campaign kept, once through ASan + UBSan.
if [ -x "$check_bin" ]; then
  echo "campaign: replaying the corpus ($(ls "$dir/corpus" | wc -l) inputs) through the sanitized build"
  set +e
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}$fuzz_asan_opts" \
    "$check_bin" "${opts[@]}" -runs=0 -artifact_prefix="$dir/findings/asan-" "$dir/corpus" >"$dir/logs/asan-replay.log" 2>&1
  rc=$?
  set -e
  [ "$rc" -eq 0 ] || { echo "campaign: the sanitized replay failed, see $dir/logs/asan-replay.log"; status=1; }
  if grep -q 'False positive error reports may follow' "$dir/logs/asan-replay.log"; then
    echo "campaign: ASan lost track of the stack in the replay (fiber switches not annotated?)"
    status=1
  fi
fi

findings=$(find "$dir/findings" -maxdepth 1 -type f ! -name '*history-*' | wc -l)

# The campaign's result file for `upanthor merge` (tools/upanthor/results.h, kind "fuzz"): the
# campaigns of one target on several machines add up to one line of executions and findings.
find "$dir/findings" -maxdepth 1 -type f ! -name '*history-*' | sort |
  python3 -c '
import json, sys
target, execs, secs, workers, check_bin, out = sys.argv[1:]
files = [l.strip() for l in sys.stdin if l.strip()]
doc = {"kind": "fuzz", "format": 1, "target": target, "executions": int(execs),
       "seconds": float(secs), "workers": int(workers),
       "findings": [{"replay": check_bin + " " + f, "failures": [f]} for f in files]}
open(out, "w").write(json.dumps(doc, indent=2) + "\n")
' "$target" "$executed" "$(( $(date +%s) - start ))" "$workers" "$check_bin" "$dir/result.json"
echo "campaign: result file $dir/result.json (upanthor merge adds campaigns up)"
echo "campaign: $findings finding(s) in $dir/findings"
if [ "$findings" -ne 0 ] && compgen -G "$dir/findings/*history-*" >/dev/null; then
  echo "campaign: a finding that does not fail alone replays from its run's history file: $check_bin FILE"
fi
[ "$findings" -eq 0 ] || status=1
exit $status
