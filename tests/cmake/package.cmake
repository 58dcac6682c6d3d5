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
