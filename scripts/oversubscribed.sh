#!/usr/bin/env bash
# Runs the real-thread-mode tests on an oversubscribed host: busy loops on every core, FACTOR
# times over (default 3), while the preload clients and the `real` tests run RUNS times (default
# 50). The mock GPU's timing must not depend on how the host schedules its threads
# (docs/mock_hw.md "Real mode"), so a loaded host must never make the driver time out: any
# failure is reported with its output. Uses the preset's build (default asan; build it first).
#   scripts/oversubscribed.sh [--preset NAME] [--runs N] [--factor F] [-L LABEL]
set -uo pipefail
cd "$(dirname "$0")/.."

preset=asan runs=50 factor=3 label=preload
while [ $# -gt 0 ]; do
    case $1 in
    --preset) preset=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --factor) factor=$2; shift 2 ;;
    -L) label=$2; shift 2 ;;
    *) echo "usage: $0 [--preset NAME] [--runs N] [--factor F] [-L LABEL]" >&2; exit 2 ;;
    esac
done
[ -d "build/$preset" ] || { echo "build/$preset does not exist: cmake --preset $preset && cmake --build --preset $preset" >&2; exit 2; }

hogs=$(( $(nproc) * factor ))
pids=()
for _ in $(seq "$hogs"); do
    ( while :; do :; done ) &
    pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
echo "== $hogs busy loops on $(nproc) cores; ctest -L $label, $runs runs"

failed=0 start=$(date +%s)
for i in $(seq "$runs"); do
    if ! out=$(ctest --test-dir "build/$preset" -L "$label" --timeout 300 -j 1 2>&1); then
        failed=$((failed + 1))
        echo "-- run $i failed:"
        echo "$out" | grep -E "Failed|Timeout|\*\*\*" | head -20
    fi
done
echo "== $((runs - failed)) of $runs runs passed under ${factor}x oversubscription ($(( $(date +%s) - start )) s)"
[ "$failed" -eq 0 ]
