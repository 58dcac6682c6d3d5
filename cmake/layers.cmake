# Layers: one folder, one library, one include root.
#
# maskprior_layer(NAME SOURCES ... PUBLIC_HEADERS ... [HEADER_ONLY]) makes the library
# `maskprior_<NAME>` (alias `maskprior::<NAME>`, exported as `maskprior::<NAME>`) whose include
# root holds only its own folder: a symlink build/include/<NAME>/<NAME> -> <source>/<NAME>. A
# target sees `#include "NAME/x.h"` only when it links that layer, so a layer cannot include a
# layer it does not depend on; the build enforces the picture in docs/architecture.md.
#
# PUBLIC_HEADERS names the layer's face, file names in its folder: what a program outside
# maskprior includes to use it, and every header of the layer that those include. Only they are
# installed (include/maskprior/<NAME>/, install component maskprior_headers); the others are the
# layer's internals, seen only inside this build. The test public_headers_include_only_public
# (tests/cmake/package.cmake) checks that an installed header includes only installed ones.

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
  cmake_parse_arguments(ARG "HEADER_ONLY" "" "SOURCES;PUBLIC_HEADERS" ${ARGN})
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
  maskprior_install_public_headers(${name} ${ARG_PUBLIC_HEADERS})
  set(MASKPRIOR_EXPORTED_TARGETS ${MASKPRIOR_EXPORTED_TARGETS} ${target} CACHE INTERNAL "")
endfunction()

# Installs the public headers of layer `name` (file names in its folder), after checking that
# each exists, so a list that names a moved or misspelt header fails at configure time.
function(maskprior_install_public_headers name)
  if(NOT ARGN)
    message(FATAL_ERROR "maskprior_layer(${name}): list the layer's PUBLIC_HEADERS")
  endif()
  set(paths "")
  foreach(header IN LISTS ARGN)
    set(path ${PROJECT_SOURCE_DIR}/${name}/${header})
    if(header MATCHES "/" OR NOT EXISTS ${path})
      message(FATAL_ERROR "maskprior_layer(${name}): no public header ${name}/${header}")
    endif()
    list(APPEND paths ${path})
  endforeach()
  install(FILES ${paths} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/maskprior/${name}
    COMPONENT maskprior_headers)
endfunction()

# maskprior_torch_pch(TARGET): one precompiled <torch/torch.h> (instead of ~25 s per translation
# unit) for the sources of TARGET that use LibTorch; the others compile without it. A source uses
# LibTorch when it, or a header of this project it includes (followed from header to header, with
# a work list rather than recursion), includes <torch/…>, <ATen/…> or <c10/…>; <torch/version.h>,
# a few #defines, does not count. Read when CMake configures: a source that gains or loses
# LibTorch later still compiles right, only without or with a needless header until CMake runs
# again. A source that does not exist yet (a generated one) is taken as free of LibTorch. A source
# with compile definitions of its own (set before this call) compiles without the header too: the
# header is built with the target's definitions, and its own may change what LibTorch declares.
function(maskprior_torch_pch target)
  target_precompile_headers(${target} PRIVATE <torch/torch.h>)
  get_target_property(sources ${target} SOURCES)
  get_target_property(dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    get_filename_component(path ${source} ABSOLUTE BASE_DIR ${dir})
    set(uses OFF)
    set(queue "")
    get_source_file_property(own ${source} COMPILE_DEFINITIONS)
    if(EXISTS ${path} AND NOT own)
      set(queue ${path})
    endif()
    set(seen "")
    while(queue AND NOT uses)
      list(POP_FRONT queue file)
      list(APPEND seen ${file})
      file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include")
      foreach(line IN LISTS includes)
        if(line MATCHES "<(torch|ATen|c10)/" AND NOT line MATCHES "<torch/version\\.h>")
          set(uses ON)
          break()
        endif()
        if(line MATCHES "\"([a-z_]+/[a-z_0-9]+\\.h)\"")
          set(header ${PROJECT_SOURCE_DIR}/${CMAKE_MATCH_1})
          if(EXISTS ${header} AND NOT header IN_LIST seen AND NOT header IN_LIST queue)
            list(APPEND queue ${header})
          endif()
        endif()
      endforeach()
    endwhile()
    if(NOT uses)
      set_source_files_properties(${source} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
      list(APPEND light ${source})
    endif()
  endforeach()
  set_property(TARGET ${target} PROPERTY MASKPRIOR_WITHOUT_PCH ${light})
endfunction()
