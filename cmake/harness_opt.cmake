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
