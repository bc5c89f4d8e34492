# upanthor_scenario: the scenario file model and its TOML parser/validator (tools/upanthor/scenario.h).
# Included from tools/upanthor/CMakeLists.txt, or from tests/tools/ when that is not there yet.
if(NOT TARGET upanthor_scenario)
  # Debian's libtomlplusplus-dev ships a CMake package with a compiled library; without it, fall back
  # to toml++ header-only.
  find_package(tomlplusplus CONFIG QUIET)
  # Global: the static library's consumers in other directories link it too.
  if(TARGET tomlplusplus::tomlplusplus)
    get_target_property(_toml_global tomlplusplus::tomlplusplus IMPORTED_GLOBAL)
    if(NOT _toml_global)
      set_target_properties(tomlplusplus::tomlplusplus PROPERTIES IMPORTED_GLOBAL TRUE)
    endif()
  endif()
  # scenario.cpp: entry points and references; toml_access.cpp: checked key access with file:line:col
  # diagnostics; scenario_parse_*.cpp: one file per group of sections (scenario_parser.h). An `asm`
  # job's text goes through umd_core's assembler (umd/cs_asm.h).
  set(_scenario_dir ${CMAKE_CURRENT_LIST_DIR})
  add_library(upanthor_scenario STATIC ${_scenario_dir}/scenario.cpp ${_scenario_dir}/toml_access.cpp
    ${_scenario_dir}/scenario_parse_setup.cpp ${_scenario_dir}/scenario_parse_jobs.cpp
    ${_scenario_dir}/scenario_parse_fault.cpp ${_scenario_dir}/scenario_parse_expect.cpp
    ${_scenario_dir}/scenario_parse_jm.cpp)
  upanthor_include_root(upanthor_scenario tools)
  target_link_libraries(upanthor_scenario PUBLIC mock_hw umd_core uapi)
  if(TARGET tomlplusplus::tomlplusplus)
    target_link_libraries(upanthor_scenario PRIVATE tomlplusplus::tomlplusplus)
  else()
    find_path(TOMLPLUSPLUS_INCLUDE_DIR NAMES toml++/toml.hpp toml++/toml.h REQUIRED)
    target_include_directories(upanthor_scenario PRIVATE ${TOMLPLUSPLUS_INCLUDE_DIR})
    target_compile_definitions(upanthor_scenario PRIVATE TOML_HEADER_ONLY=1)
  endif()
endif()
