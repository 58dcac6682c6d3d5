# The CMake package: install this build to a temporary prefix, build tests/consumer against it
# with find_package(maskprior), and check the consumer compiles parity2 as maskc does
# (N = 16 with the default n = 15; 20 open cells: the diagonal, cls -> x[0], x[1], the pair).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(_case consumer_builds_against_install public_headers_include_only_public)
  add_test(NAME package_${_case}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/package.sh ${CMAKE_COMMAND} ${CMAKE_BINARY_DIR}
      ${PROJECT_SOURCE_DIR} ${Python3_EXECUTABLE} ${_case})
endforeach()
set_tests_properties(package_consumer_builds_against_install PROPERTIES TIMEOUT 300)

# Public headers: see tests/cli/package.sh public_headers_include_only_public.
# The check itself fails on a tree where a header includes one that is not there.
add_test(NAME public_headers_check_finds_private_includes
  COMMAND ${Python3_EXECUTABLE} scripts/check_public_headers.py
    ${PROJECT_SOURCE_DIR}/tests/data/public_headers/bad
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(public_headers_check_finds_private_includes PROPERTIES
  PASS_REGULAR_EXPRESSION
  "a/public.h:7: includes \"a/internal.h\", which is not installed\na/public.h:8: includes \"b/detail.h\", which is not installed")
