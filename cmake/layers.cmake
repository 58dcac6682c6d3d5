# Layers: one folder, one library, one include root.
#
# maskprior_layer(NAME SOURCES ... [HEADER_ONLY]) makes the library `maskprior_<NAME>` (alias
# `maskprior::<NAME>`, exported as `maskprior::<NAME>`) whose include root holds only its own
# folder: a symlink build/include/<NAME>/<NAME> -> <source>/<NAME>. A target sees
# `#include "NAME/x.h"` only when it links that layer, so a layer cannot include a layer it
# does not depend on; the build enforces the picture in docs/architecture.md.

set(MASKPRIOR_INCLUDE_ROOTS ${CMAKE_BINARY_DIR}/include)
set(MASKPRIOR_EXPORTED_TARGETS "" CACHE INTERNAL "")

function(maskprior_include_root name)
  set(root ${MASKPRIOR_INCLUDE_ROOTS}/${name})
  file(MAKE_DIRECTORY ${root})
  if(NOT EXISTS ${root}/${name})
    file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${name} ${root}/${name} SYMBOLIC)
  endif()
endfunction()

function(maskprior_layer name)
  cmake_parse_arguments(ARG "HEADER_ONLY" "" "SOURCES" ${ARGN})
  set(target maskprior_${name})
  maskprior_include_root(${name})
  if(ARG_HEADER_ONLY)
    add_library(${target} INTERFACE)
    set(scope INTERFACE)
  else()
    add_library(${target} STATIC ${ARG_SOURCES})
    set(scope PUBLIC)
    set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    target_compile_options(${target} PRIVATE ${MASKPRIOR_WARNINGS})
  endif()
  target_include_directories(${target} ${scope}
    $<BUILD_INTERFACE:${MASKPRIOR_INCLUDE_ROOTS}/${name}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/maskprior>)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${name})
  add_library(maskprior::${name} ALIAS ${target})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${name}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/maskprior/${name}
    FILES_MATCHING PATTERN "*.h" PATTERN "*.hpp")
  set(MASKPRIOR_EXPORTED_TARGETS ${MASKPRIOR_EXPORTED_TARGETS} ${target} CACHE INTERNAL "")
endfunction()
