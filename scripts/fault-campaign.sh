#!/usr/bin/env bash
# The error-recovery fault campaign: every fault class x trigger point with N seeds per
# cell (default 1000), checked against the recovery invariants (tests/panthor/recovery_campaign_test.cpp).
#
#   bash scripts/fault-campaign.sh [N]
#
# Installs what is missing, builds the test with the `asan` preset (ASan+UBSan, lockdep-lite, leak
# and fence checks on), runs it in one shard per core and prints the merged table: class x trigger
# -> runs, invariant violations, first failing seed. Exits non-zero on any violation. A failing
# seed replays with the KSHIM_SEED the failure message prints.
#
# To spread a campaign over machines, give each one a shard of the same binary:
#   GTEST_TOTAL_SHARDS=M GTEST_SHARD_INDEX=i UPANTHOR_CAMPAIGN_SEEDS=N build/asan/tests/panthor/panthor_recovery_campaign_test
# (UPANTHOR_CAMPAIGN_PRESET=release builds the faster release preset instead, without sanitizers.)
set -euo pipefail
cd "$(dirname "$0")/.."

seeds=${1:-1000}
preset=${UPANTHOR_CAMPAIGN_PRESET:-asan}
shards=${UPANTHOR_JOBS:-$(nproc)}

bash scripts/setup.sh
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$shards" --target panthor_recovery_campaign_test
bin="build/$preset/tests/panthor/panthor_recovery_campaign_test"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== fault campaign: $seeds seed(s) per cell, $shards shard(s), preset $preset"
start=$SECONDS
pids=()
for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i UPANTHOR_CAMPAIGN_SEEDS=$seeds \
        "$bin" --gtest_brief=1 >"$out/shard$i.log" 2>&1 &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done

# Merge the shards' CAMPAIGN lines (class trigger runs violations first_failing_seed); plain POSIX
# awk (Debian's default is mawk).
grep -h '^CAMPAIGN ' "$out"/shard*.log | sort -k2,3 | awk '
    function flush() {
        if (key == "") return
        printf "%-18s %-18s %8d %10d %12s\n", c, t, runs, viol, viol ? first : "-"
        total += runs; bad += viol
    }
    BEGIN { printf "%-18s %-18s %8s %10s %12s\n", "class", "trigger", "runs", "violations", "first_seed" }
    {
        k = $2 " " $3
        if (k != key) { flush(); key = k; c = $2; t = $3; runs = 0; viol = 0; first = "" }
        runs += $4; viol += $5
        if ($5 > 0 && (first == "" || $6 < first)) first = $6
    }
    END { flush(); printf "total: %d runs, %d violations\n", total, bad; exit bad > 0 }' || status=1
if [ $status -ne 0 ]; then
    echo "== failures (first 40 lines of each shard's failure messages):"
    for f in "$out"/shard*.log; do grep -E "^\[campaign\]|Failure|FAILED" "$f" | head -40 || true; done
fi
echo "== wall time: $((SECONDS - start)) s"
exit $status
