# End-to-end tests of `maskc compile` / `maskc show`: they run the built maskc (MASKC_PATH).
maskprior_test(cli_test
  SOURCES cli_test.cpp
  LIBS maskprior_io nlohmann_json::nlohmann_json)
add_dependencies(cli_test maskc)
target_compile_definitions(cli_test PRIVATE MASKPRIOR_HAS_RUNTIME=$<BOOL:${MASKPRIOR_WITH_TORCH}>)

# The light maskc: compile/show/validate never load LibTorch (the executable does not link it).
add_test(NAME maskc_does_not_link_libtorch COMMAND sh -c
  "ldd $<TARGET_FILE:maskc> > /dev/null && ! ldd $<TARGET_FILE:maskc> | grep -i torch")
if(NOT MASKPRIOR_WITH_TORCH)
  # Without the runtime, `maskc train` says why and exits 2 (usage), writing nothing.
  add_test(NAME maskc_train_without_runtime_says_why COMMAND sh -c
    "$<TARGET_FILE:maskc> train --task parity2 2>&1 | grep -q MASKPRIOR_WITH_TORCH=OFF; \
     $<TARGET_FILE:maskc> train --task parity2; test $? -eq 2")
endif()
