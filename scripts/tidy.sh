#!/usr/bin/env bash
# clang-tidy (.clang-tidy: bugprone, performance, the override/virtual checks) over the sources of
# the library layers (hw, kernel_shim, drm, panthor, panfrost, mock_hw, mock_jm, umd, host), in parallel; exits 1 on
# any finding. Uses the compile commands of the clang `fuzz` preset (configured here if needed).
#   bash scripts/tidy.sh [FILE...]    only those files
# The files are checked in batches of up to 8 that share a compile command, each batch as one
# translation unit (scripts/tidy_units.py: the headers are walked once per batch, not once per
# file). A batch that does not compile as one unit (two files define the same name) is checked
# file by file, and says so.
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
units=build/tidy-units
trap 'rm -f "$out"' EXIT
rm -rf "$units"
mkdir -p "$units"
python3 scripts/tidy_units.py "$db" "$units" 8 "${files[@]}" >"$units/list"
# In a unit the checked files are included files: the header filter must take them in too.
filter=$(sed -n "s/^HeaderFilterRegex: *'\(.*\)'.*/\1/p" .clang-tidy)
export TIDY_DB=$db TIDY_UNITS=$units TIDY_FILTER="${filter}|.*\.cpp"
# One line of the list: a unit, a tab, its files (no unit: a file checked on its own).
check_batch() {
    local unit=${1%%$'\t'*} batch=${1#*$'\t'} res=0 text
    # shellcheck disable=SC2086 # the batch's files, split on spaces
    if [ -z "$unit" ]; then
        clang-tidy -p "$TIDY_DB" --quiet $batch 2>/dev/null
        return
    fi
    text=$(clang-tidy -p "$TIDY_UNITS" --quiet --header-filter="$TIDY_FILTER" "$unit" 2>/dev/null) || res=$?
    if grep -q 'clang-diagnostic-error' <<<"$text"; then
        echo "tidy: $batch do not compile as one unit; checked one by one" >&2
        # shellcheck disable=SC2086
        clang-tidy -p "$TIDY_DB" --quiet $batch 2>/dev/null
        return
    fi
    printf '%s\n' "$text"
    return $res
}
export -f check_batch
status=0
tr '\n' '\0' <"$units/list" | xargs -0 -n 1 -P "$jobs" bash -c 'check_batch "$1"' _ >"$out" || status=1
if [ $status -ne 0 ] || grep -q 'error:\|warning:' "$out"; then
    grep -E 'error:|warning:' "$out" | sort -u >&2 || true
    echo "tidy: findings above ($(grep -cE 'error:|warning:' "$out" || true) lines)" >&2
    exit 1
fi
echo "tidy: ${#files[@]} files in $(wc -l <"$units/list") batches, no findings"
