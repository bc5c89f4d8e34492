# Include roots: a target sees the headers of the folders it owns and of the targets it links,
# and nothing else, so an include in the wrong direction fails to compile (the `layout` test
# names it; docs/conventions.md, Layers).
#
# Every source includes by repository path ("kernel_shim/mutex.h"). The build makes one root per
# folder, <build>/include_roots/<name>/<folder> as a link to <source>/<folder>; a target adds the
# roots of its folders with upanthor_include_root() and passes them on to whoever links it.
# Compiler messages, __FILE__ and debug info name the source path, not the link.
set(UPANTHOR_INCLUDE_ROOTS ${CMAKE_BINARY_DIR}/include_roots)
set(UPANTHOR_FOLDERS hw uapi kernel_shim drm panthor panfrost mock_hw mock_jm umd host testkit tools fuzz bench tests)

foreach(folder IN LISTS UPANTHOR_FOLDERS)
  string(REPLACE "/" "_" name "${folder}")
  set(link ${UPANTHOR_INCLUDE_ROOTS}/${name}/${folder})
  if(NOT IS_SYMLINK ${link})
    get_filename_component(parent ${link} DIRECTORY)
    file(MAKE_DIRECTORY ${parent})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${link} SYMBOLIC)
  endif()
  add_compile_options(-ffile-prefix-map=${UPANTHOR_INCLUDE_ROOTS}/${name}/=${PROJECT_SOURCE_DIR}/)
endforeach()

# upanthor_include_root(<target> <folder>...): <target> owns <folder>: its sources and every
# target that links it may include "<folder>/...".
function(upanthor_include_root target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)
  elseif(type STREQUAL "EXECUTABLE")
    set(scope PRIVATE)
  else()
    set(scope PUBLIC)
  endif()
  foreach(folder IN LISTS ARGN)
    if(NOT folder IN_LIST UPANTHOR_FOLDERS)
      message(FATAL_ERROR "upanthor_include_root: ${folder} is not in UPANTHOR_FOLDERS")
    endif()
    string(REPLACE "/" "_" name "${folder}")
    target_include_directories(${target} ${scope} ${UPANTHOR_INCLUDE_ROOTS}/${name})
  endforeach()
endfunction()
