#!/usr/bin/env bash
# The test command: installs what is missing, checks the formatting (.clang-format), builds Mesa's
# panvk (scripts/mesa.sh) for the live Vulkan tests, builds the
# `asan` preset and runs every CTest test under ASan+UBSan (the `layout` test among them), runs
# clang-tidy (.clang-tidy) over the driver-side layers, builds the libFuzzer targets with clang
# and runs each for a short budget (UPANTHOR_FUZZ_SECONDS, default 45), then builds the
# real-thread-mode tests (label `real`) with `tsan` and runs them.
# Exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh

jobs=${UPANTHOR_JOBS:-$(nproc)}
status=0

# Each stage's wall time, printed as it ends and as a table at the end (issue #35: where the
# minutes go).
stage_name="setup" stage_start=$SECONDS stage_table=""
stage() {
    local took=$((SECONDS - stage_start))
    printf '== %s: %d s\n' "$stage_name" "$took"
    stage_table+=$(printf '%-28s %5d s' "$stage_name" "$took")$'\n'
    stage_name=$1 stage_start=$SECONDS
}

stage "format"
echo "== format: .clang-format"
bash scripts/format.sh --check || status=1

# Mesa's panvk for the live Vulkan tests (label mesa, docs/mesa.md): built before the asan
# configure so the tests find its ICD; cached in build/mesa (a few minutes cold, ~1 s after).
# The captures under tests/mesa/ replay Mesa's sessions without it (label replay).
stage "mesa"
echo "== mesa: build Mesa's panvk (scripts/mesa.sh)"
bash scripts/mesa.sh || { echo "mesa: scripts/mesa.sh failed: the live Mesa tests will be skipped"; status=1; }

stage "asan build"
echo "== asan: configure + build"
cmake --preset asan -DUPANTHOR_UNITY_TESTS=ON >/dev/null
cmake --build --preset asan -j "$jobs"
stage "asan tests"
echo "== asan: all tests"
ctest --preset asan -j "$jobs" --timeout 300 || status=1

# The fuzz targets (docs/fuzzing.md): built with clang, each run on its seed corpus for
# a short fixed budget, so that a change that breaks a target fails here. A finding
# is minimised and saved under fuzz/crashes/.
fuzz_seconds=${UPANTHOR_FUZZ_SECONDS:-45}
echo "== fuzz: build (clang, libFuzzer + ASan + UBSan) and ${fuzz_seconds} s per target"
cmake --preset fuzz >/dev/null
# clang-tidy reads the clang build's compile commands. The layers a driver change touches (the
# drivers, the mocks, the DRM core, the host, userspace, the contract); scripts/tidy.sh with no
# argument adds kernel_shim (a few more minutes).
stage "tidy"
echo "== tidy: .clang-tidy over hw, drm, panthor, panfrost, mock_hw, mock_jm, umd, host"
mapfile -t tidy_files < <(git ls-files 'hw/*.cpp' 'drm/*.cpp' 'panthor/*.cpp' 'panfrost/*.cpp' 'mock_hw/*.cpp' 'mock_jm/*.cpp' 'umd/*.cpp' 'host/*.cpp')
bash scripts/tidy.sh "${tidy_files[@]}" || status=1
stage "fuzz build"
fuzz_targets=(fuzz_ioctl fuzz_panfrost_ioctl fuzz_cs fuzz_fw_image fuzz_gpuvm)
cmake --build --preset fuzz -j "$jobs" --target "${fuzz_targets[@]}" upanthor_firmware
# Every target for the same budget, as many at a time as there are cores.
stage "fuzz runs"
printf '%s\n' "${fuzz_targets[@]}" |
    UPANTHOR_FUZZ_NO_BUILD=1 xargs -P "$jobs" -I{} bash scripts/fuzz.sh {} "$fuzz_seconds" || status=1

stage "tsan build"
echo "== tsan: configure + build (the real-thread test binaries only)"
cmake --preset tsan -DUPANTHOR_UNITY_TESTS=ON >/dev/null
cmake --build --preset tsan -j "$jobs" --target real_tests
stage "tsan tests"
echo "== tsan: real-thread-mode tests"
ctest --preset tsan -j "$jobs" --timeout 300 -L real || status=1

stage "end"
printf '== stage times (total %d s)\n%s' "$SECONDS" "$stage_table"
exit $status
