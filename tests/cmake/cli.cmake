# End-to-end tests of `maskc compile` / `maskc show`: they run the built maskc (MASKC_PATH).
maskprior_test(cli_test
  SOURCES cli_test.cpp
  LIBS maskprior_io nlohmann_json::nlohmann_json)
add_dependencies(cli_test maskc)
target_compile_definitions(cli_test PRIVATE MASKPRIOR_HAS_RUNTIME=$<BOOL:${MASKPRIOR_WITH_TORCH}>)

# The light maskc: compile/show/validate never load LibTorch (the executable does not link it).
add_test(NAME maskc_does_not_link_libtorch
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/light_maskc.sh $<TARGET_FILE:maskc>
    does_not_link_libtorch)
if(NOT MASKPRIOR_WITH_TORCH)
  # Without the runtime, `maskc train` says why and exits 2 (usage), writing nothing.
  add_test(NAME maskc_train_without_runtime_says_why
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/light_maskc.sh $<TARGET_FILE:maskc>
      train_without_runtime_says_why)
endif()
