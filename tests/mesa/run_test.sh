#!/bin/sh
# Runs one Mesa test (tests/mesa/CMakeLists.txt): skips it (exit 77, CTest's SKIP_RETURN_CODE)
# with a one-line reason when Mesa's panvk is not built; else runs
# the command with VK_ICD_FILENAMES naming panvk's ICD (LD_PRELOAD comes from the test's
# environment).
#   run_test.sh ICD COMMAND [ARG...]
icd=$1
shift
if [ ! -f "$icd" ]; then
  echo "SKIP: Mesa's panvk is not built (no ICD at $icd): run scripts/mesa.sh, or set UPANTHOR_MESA_ICD"
  exit 77
fi
export VK_ICD_FILENAMES="$icd"
exec "$@"
