# Checks, in the asan preset's compile commands, which flags the simulated machine and the code
# under test build with (cmake/harness_opt.cmake, docs/kshim.md "Sanitizers and the checkers"):
# the machine (kshim, mock_hw, mock_jm) at -O2 without UBSan's vptr, alignment and pointer-overflow
# checks but with ASan and the rest of UBSan; the code under test (panthor, drm, io-pgtable) with
# every check at the preset's level; lockdep without either sanitizer.
#   cmake -DCOMMANDS=build/asan/compile_commands.json -DSOURCE_DIR=. -P sanitizer_flags_check.cmake
# Exits 0 when they are as described; says "nothing to check" (CTest: skipped) when the build is
# not the lean asan one.
cmake_minimum_required(VERSION 3.25)  # script mode: IN_LIST and the other current policies

set(machine_files kernel_shim/sim_backend.cpp kernel_shim/workqueue.cpp mock_hw/cs_exec.cpp mock_hw/mmu.cpp
                  mock_jm/job_chain.cpp)
set(under_test_files panthor/panthor_sched.cpp panthor/panthor_mmu.cpp drm/drm_gpuvm.cpp
                     kernel_shim/iommu/io_pgtable_arm.cpp)

# One pass over the compile commands, keeping those of the files looked at here.
file(READ "${COMMANDS}" json)
string(JSON count LENGTH "${json}")
math(EXPR last "${count} - 1")
foreach(i RANGE ${last})
  string(JSON file GET "${json}" ${i} file)
  string(REPLACE "${SOURCE_DIR}/" "" rel "${file}")
  if(rel IN_LIST machine_files OR rel IN_LIST under_test_files OR rel STREQUAL "kernel_shim/lockdep.cpp")
    string(JSON "command_${rel}" GET "${json}" ${i} command)
  endif()
endforeach()

# The compile command of `rel` (a path under the source tree), in `out`.
function(command_of rel out)
  if(NOT DEFINED "command_${rel}")
    message(FATAL_ERROR "${rel}: not in ${COMMANDS}")
  endif()
  set(${out} "${command_${rel}}" PARENT_SCOPE)
endfunction()

# The optimisation level the command ends up with: the last -O flag wins.
function(opt_level cmd out)
  string(REGEX MATCHALL " -O[0-3s]" levels "${cmd}")
  list(GET levels -1 level)
  string(STRIP "${level}" level)
  set(${out} "${level}" PARENT_SCOPE)
endfunction()

set(lean_flag "-fno-sanitize=vptr,alignment,pointer-overflow")
command_of(kernel_shim/sim_backend.cpp machine)
if(NOT machine MATCHES "-fsanitize=address,undefined" OR NOT machine MATCHES "${lean_flag}")
  message(STATUS "not the asan preset with the lean machine: nothing to check")
  return()
endif()

set(failures "")
foreach(rel IN LISTS machine_files)
  command_of(${rel} cmd)
  opt_level("${cmd}" level)
  if(NOT level STREQUAL "-O2")
    list(APPEND failures "${rel}: built at ${level}, not -O2")
  endif()
  if(NOT cmd MATCHES "${lean_flag}")
    list(APPEND failures "${rel}: UBSan's vptr, alignment and pointer-overflow checks are still on")
  endif()
  if(cmd MATCHES "-fno-sanitize=undefined" OR cmd MATCHES "-fno-sanitize=address")
    list(APPEND failures "${rel}: lost ASan or all of UBSan")
  endif()
endforeach()

foreach(rel IN LISTS under_test_files)
  command_of(${rel} cmd)
  opt_level("${cmd}" level)
  if(NOT level STREQUAL "-O1")
    list(APPEND failures "${rel} (code under test): built at ${level}, not the preset's -O1")
  endif()
  if(cmd MATCHES "-fno-sanitize=")
    list(APPEND failures "${rel} (code under test): a sanitizer check is off")
  endif()
endforeach()

command_of(kernel_shim/lockdep.cpp lockdep)
if(NOT lockdep MATCHES "-fno-sanitize=address,undefined")
  list(APPEND failures "kernel_shim/lockdep.cpp: still instrumented")
endif()

if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "sanitizer flags not as docs/kshim.md says:\n  ${text}")
endif()
message(STATUS "the machine is lean, the code under test keeps every check")
