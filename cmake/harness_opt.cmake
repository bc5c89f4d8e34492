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
