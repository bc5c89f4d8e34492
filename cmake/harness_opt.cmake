# upanthor_harness_without_optimisation(): the programs that drive the code under test (tests,
# benchmarks, the command-line tools and the preload library's own files) build without
# optimisation in the sanitizer presets (Debug), while the libraries they test keep the preset's
# -O1. Their compile time at -O1 under ASan+UBSan is about three times that at -O0 (nlohmann/json
# and GoogleTest expand into large bodies) and they run for little of a test's time (issue #35: CI
# time). Not in the fuzz presets, whose harness runs on every input.
macro(upanthor_harness_without_optimisation)
  if(CMAKE_BUILD_TYPE STREQUAL "Debug" AND NOT UPANTHOR_FUZZ)
    add_compile_options(-O0)
  endif()
endmacro()

# upanthor_harness_without_ubsan(): the test programs and benchmarks compile without UBSan's
# instrumentation in the sanitizer presets; the code they test (every library, testkit's rigs
# included) keeps it, ASan stays on everywhere, and the programs still link UBSan's runtime. On a
# test program UBSan's checks cost a third of the compile (umd_test: 14.9 s, 9.7 s without; issue
# #35: CI time) and would look only at the harness's own arithmetic and GoogleTest's expansions.
macro(upanthor_harness_without_ubsan)
  if(CMAKE_BUILD_TYPE STREQUAL "Debug" AND NOT UPANTHOR_FUZZ AND CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*undefined")
    add_compile_options(-fno-sanitize=undefined)
  endif()
endmacro()

# upanthor_simulated_machine(target): the simulated machine (kshim's runtime, the mock GPUs) is
# where a sanitized test spends most of its CPU (about half of the fault campaign's, against an
# eighth in the drivers, drm and io-pgtable it drives). In the asan preset it builds at -O2 and
# without three UBSan checks that look mostly at its own plumbing: vptr (a check on every member
# access of a polymorphic class, i.e. of every mock block and of the runtime backend), alignment
# and pointer-overflow. ASan and every other UBSan check stay, the code under test keeps the
# preset's flags, and the fuzz preset keeps everything (the mock's decoders meet random input
# there). Together about 14% of the sanitized fault campaign's CPU (issue #35; docs/kshim.md,
# "Sanitizers and the checkers"). -DUPANTHOR_SIMULATED_MACHINE_LEAN=OFF builds it as the rest.
option(UPANTHOR_SIMULATED_MACHINE_LEAN "asan preset: the simulated machine at -O2 without UBSan's vptr, alignment and pointer-overflow checks" ON)
function(upanthor_simulated_machine target)
  if(UPANTHOR_SIMULATED_MACHINE_LEAN AND CMAKE_BUILD_TYPE STREQUAL "Debug" AND NOT UPANTHOR_FUZZ
     AND CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*address")
    target_compile_options(${target} PRIVATE -O2)
    if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*undefined")
      target_compile_options(${target} PRIVATE -fno-sanitize=vptr,alignment,pointer-overflow)
    endif()
  endif()
endfunction()
