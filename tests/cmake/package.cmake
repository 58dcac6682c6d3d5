# The CMake package: install this build to a temporary prefix, build tests/consumer against it
# with find_package(maskprior), and check the consumer compiles parity2 as maskc does
# (N = 16 with the default n = 15; 20 open cells: the diagonal, cls -> x[0], x[1], the pair).
add_test(NAME package_consumer_builds_against_install COMMAND sh -c
  "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; \
   ${CMAKE_COMMAND} --install ${CMAKE_BINARY_DIR} --prefix $d/prefix >/dev/null; \
   ${CMAKE_COMMAND} -S ${PROJECT_SOURCE_DIR}/tests/consumer -B $d/build \
     -DCMAKE_PREFIX_PATH=$d/prefix -DCMAKE_BUILD_TYPE=Release >/dev/null; \
   ${CMAKE_COMMAND} --build $d/build >/dev/null; \
   $d/build/consumer ${PROJECT_SOURCE_DIR}/specs/gotu/parity2.mask | tee $d/out; \
   grep -q 'parity2: N = 16, 20 open cells' $d/out")
set_tests_properties(package_consumer_builds_against_install PROPERTIES TIMEOUT 300)

# Public headers: install the headers alone (component maskprior_headers) and check that each
# includes only installed headers (scripts/check_public_headers.py), and that the internals of a
# layer stay out (the compiler's passes, the supervisor, the IDX reader, train's loop pieces).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
add_test(NAME public_headers_include_only_public COMMAND sh -c
  "set -e; d=$(mktemp -d); trap 'rm -rf $d' EXIT; \
   ${CMAKE_COMMAND} --install ${CMAKE_BINARY_DIR} --prefix $d --component maskprior_headers \
     >/dev/null; \
   ${Python3_EXECUTABLE} scripts/check_public_headers.py $d/include/maskprior; \
   test -f $d/include/maskprior/compiler/compile.h; test -f $d/include/maskprior/core/layout.h; \
   for h in compiler/ast.h compiler/work.h compiler/shapes.h compiler/parse.h core/supervisor.h \
            tasks/idx_file.h report/stats.h train/jobs.h runtime/attention.h; do \
     if test -e $d/include/maskprior/$h; then echo \"$h is internal but installed\"; exit 1; fi; \
   done"
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
# The check itself fails on a tree where a header includes one that is not there.
add_test(NAME public_headers_check_finds_private_includes
  COMMAND ${Python3_EXECUTABLE} scripts/check_public_headers.py
    ${PROJECT_SOURCE_DIR}/tests/data/public_headers/bad
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(public_headers_check_finds_private_includes PROPERTIES
  PASS_REGULAR_EXPRESSION
  "a/public.h:7: includes \"a/internal.h\", which is not installed\na/public.h:8: includes \"b/detail.h\", which is not installed")
