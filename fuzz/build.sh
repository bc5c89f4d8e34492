#!/usr/bin/env bash
# OSS-Fuzz build script (projects/upanthor/build.sh would run this): builds every target with
# $CC/$CXX/$CFLAGS/$CXXFLAGS and links $LIB_FUZZING_ENGINE, then puts each executable, its
# .options file and its zipped seed corpus (<target>_seed_corpus.zip) in $OUT.
# Locally (no OSS-Fuzz environment) it falls back to clang++ with ASan+UBSan and libFuzzer.
set -euo pipefail
SRC_DIR=$(cd "$(dirname "$0")/.." && pwd)
: "${CC:=clang}"
: "${CXX:=clang++}"
: "${CXXFLAGS:=-O1 -g -fsanitize=address,undefined -fsanitize=fuzzer-no-link -fno-omit-frame-pointer}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}"
: "${OUT:=$SRC_DIR/build/oss-fuzz-out}"
: "${WORK:=$SRC_DIR/build/oss-fuzz-work}"
mkdir -p "$OUT" "$WORK"

# clang < 15 lacks __builtin_source_location, which libstdc++'s <source_location> needs.
compat=()
if ! echo '#include <source_location>
int main() { return std::source_location::current().line() == 0; }' |
    "$CXX" -std=c++20 -x c++ - -o /dev/null 2>/dev/null; then
  compat=(-include "$SRC_DIR/fuzz/compat/clang14_compat.h")
fi

cmake -S "$SRC_DIR" -B "$WORK" -G Ninja \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="" \
  -DCMAKE_CXX_FLAGS="${compat[*]} $CXXFLAGS" \
  -DCMAKE_EXE_LINKER_FLAGS="$CXXFLAGS" \
  -DKSHIM_DEBUG_CHECKS=ON -DUPANTHOR_FUZZ=ON \
  -DUPANTHOR_FUZZ_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$WORK" --target fuzz_targets upanthor_firmware -j"$(nproc)"

for t in fuzz_ioctl fuzz_fw_image fuzz_cs fuzz_gpuvm fuzz_panfrost_ioctl; do
  cp "$WORK/fuzz/$t" "$OUT/"
  cp "$SRC_DIR/fuzz/$t.options" "$OUT/"
  if [ -d "$SRC_DIR/fuzz/corpus/$t" ]; then
    (cd "$SRC_DIR/fuzz/corpus/$t" && zip -q -r "$OUT/${t}_seed_corpus.zip" .)
  fi
done
# request_firmware's default path is compiled in (<build>/firmware); on ClusterFuzz the runner
# only has $OUT, so the image travels with the targets and UPANTHOR_FIRMWARE_PATH points to it.
mkdir -p "$OUT/firmware"
cp -r "$WORK/firmware/." "$OUT/firmware/"
