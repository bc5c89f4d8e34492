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
# To spread a campaign over machines, give each one a shard of the same binary, with a result file:
#   GTEST_TOTAL_SHARDS=M GTEST_SHARD_INDEX=i UPANTHOR_CAMPAIGN_SEEDS=N UPANTHOR_RESULTS_JSON=shard-i.json \
#     build/asan/tests/panthor/panthor_recovery_campaign_test
# and merge the files: `upanthor merge shard-*.json` (docs/upanthor.md, "Beyond one machine").
# UPANTHOR_CAMPAIGN_DRIVER=panfrost runs panfrost's campaign (tests/panfrost) instead.
# (UPANTHOR_CAMPAIGN_PRESET=release builds the faster release preset instead, without sanitizers.)
set -euo pipefail
cd "$(dirname "$0")/.."

seeds=${1:-1000}
preset=${UPANTHOR_CAMPAIGN_PRESET:-asan}
shards=${UPANTHOR_JOBS:-$(nproc)}

bash scripts/setup.sh
cmake --preset "$preset" >/dev/null
driver=${UPANTHOR_CAMPAIGN_DRIVER:-panthor}
case "$driver" in
  panthor | panfrost) ;;
  *) echo "fault-campaign.sh: UPANTHOR_CAMPAIGN_DRIVER is panthor or panfrost, not '$driver'" >&2; exit 2 ;;
esac
cmake --build --preset "$preset" -j "$shards" --target "${driver}_recovery_campaign_test" upanthor
bin="build/$preset/tests/$driver/${driver}_recovery_campaign_test"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== fault campaign: $seeds seed(s) per cell, $shards shard(s), preset $preset"
start=$SECONDS
pids=()
for ((i = 0; i < shards; i++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i UPANTHOR_CAMPAIGN_SEEDS=$seeds \
        UPANTHOR_RESULTS_JSON="$out/shard$i.json" \
        "$bin" --gtest_brief=1 >"$out/shard$i.log" 2>&1 &
    pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done

# One table of the shards' result files (tools/upanthor/results.h): upanthor merge refuses a
# set with a shard missing, so a shard that crashed before writing its file fails the campaign.
"build/$preset/tools/upanthor/upanthor" merge "$out"/shard*.json || status=1
if [ $status -ne 0 ]; then
    echo "== failures (first 40 lines of each shard's failure messages):"
    for f in "$out"/shard*.log; do grep -E "^\[campaign\]|Failure|FAILED" "$f" | head -40 || true; done
fi
echo "== wall time: $((SECONDS - start)) s"
exit $status
