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
  add_library(upanthor_scenario STATIC ${CMAKE_CURRENT_LIST_DIR}/scenario.cpp)
  upanthor_include_root(upanthor_scenario tools)
  target_link_libraries(upanthor_scenario PUBLIC mock_hw drm_uapi)
  if(TARGET tomlplusplus::tomlplusplus)
    target_link_libraries(upanthor_scenario PRIVATE tomlplusplus::tomlplusplus)
  else()
    find_path(TOMLPLUSPLUS_INCLUDE_DIR NAMES toml++/toml.hpp toml++/toml.h REQUIRED)
    target_include_directories(upanthor_scenario PRIVATE ${TOMLPLUSPLUS_INCLUDE_DIR})
    target_compile_definitions(upanthor_scenario PRIVATE TOML_HEADER_ONLY=1)
  endif()
endif()
