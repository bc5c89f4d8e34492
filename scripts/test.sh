#!/usr/bin/env bash
# The test command: installs what is missing, builds the `asan` preset and runs every CTest
# test under ASan+UBSan, then builds the real-thread-mode tests (label `real`) with `tsan` and
# runs them.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

jobs=${UPANTHOR_JOBS:-$(nproc)}
status=0

echo "== asan: configure + build"
cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
echo "== asan: all tests"
ctest --preset asan -j "$jobs" --timeout 300 || status=1

echo "== tsan: configure + build (the real-thread test binaries only)"
cmake --preset tsan >/dev/null
cmake --build --preset tsan -j "$jobs" --target real_tests
echo "== tsan: real-thread-mode tests"
ctest --preset tsan -j "$jobs" --timeout 300 -L real || status=1

exit $status
