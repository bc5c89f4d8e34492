#!/usr/bin/env bash
# clang-tidy (.clang-tidy: bugprone, performance, the override/virtual checks) over the sources of
# the library layers (hw, kernel_shim, drm, panthor, panfrost, mock_hw, mock_jm, umd, host), in parallel; exits 1 on
# any finding. Uses the compile commands of the clang `fuzz` preset (configured here if needed).
#   bash scripts/tidy.sh [FILE...]    only those files
set -euo pipefail
cd "$(dirname "$0")/.."

jobs=${UPANTHOR_JOBS:-$(nproc)}
db=build/fuzz
if [ ! -f "$db/compile_commands.json" ]; then
    cmake --preset fuzz >/dev/null
fi
if [ $# -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(git ls-files 'hw/*.cpp' 'kernel_shim/*.cpp' 'drm/*.cpp' 'panthor/*.cpp' 'panfrost/*.cpp' 'mock_hw/*.cpp' 'mock_jm/*.cpp' 'umd/*.cpp' 'host/*.cpp')
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
status=0
printf '%s\0' "${files[@]}" | xargs -0 -n 4 -P "$jobs" clang-tidy -p "$db" --quiet >"$out" 2>/dev/null || status=1
if [ $status -ne 0 ] || grep -q 'error:\|warning:' "$out"; then
    grep -E 'error:|warning:' "$out" | sort -u >&2 || true
    echo "tidy: findings above ($(grep -cE 'error:|warning:' "$out" || true) lines)" >&2
    exit 1
fi
echo "tidy: ${#files[@]} files, no findings"
