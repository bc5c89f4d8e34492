# The environment a test gives a program that runs on the driver through the preload library
# (tests/preload, tests/mesa, tests/serve): the sanitizer runtime first in LD_PRELOAD for a sanitizer build of
# the library (a distribution program is not built with it), the sanitizer's options for a client
# we do not audit (LeakSanitizer off: the driver's own leak accounting reports at exit), then the
# library. UPANTHOR_PRELOAD_FAIL: what the kernel side reports that fails such a run (leaks at
# exit, lockdep, might_sleep, WARN).
set(UPANTHOR_PRELOAD_FAIL "leaked at exit|mappings left|WARNING|BUG:|lockdep|possible circular|CHECK failed")

# upanthor_preload_env(OUT [VAR NAME]): NAME is the variable that carries the preload list
# (LD_PRELOAD; the serve tests hand it to their client through another).
function(upanthor_preload_env out)
  cmake_parse_arguments(arg "" "VAR" "" ${ARGN})
  if(NOT arg_VAR)
    set(arg_VAR LD_PRELOAD)
  endif()
  set(env "")
  set(san_rt "")
  if(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*address")
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libasan.so OUTPUT_VARIABLE san_rt
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:detect_stack_use_after_return=0")
  elseif(CMAKE_CXX_FLAGS MATCHES "-fsanitize=[^ ]*thread")
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libtsan.so OUTPUT_VARIABLE san_rt
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    list(APPEND env "TSAN_OPTIONS=halt_on_error=1:report_signal_unsafe=0")
  endif()
  if(san_rt)
    list(APPEND env "${arg_VAR}=${san_rt} $<TARGET_FILE:upanthor_preload>")
  else()
    list(APPEND env "${arg_VAR}=$<TARGET_FILE:upanthor_preload>")
  endif()
  set(${out} "${env}" PARENT_SCOPE)
endfunction()
