# Tests of training on your own data (docs/your-data.md): data files (tasks layer, no
# LibTorch), --data and --truth-table runs, and `maskc train` with bad data end to end.
maskprior_test(sequence_file_test
  SOURCES sequence_file_test.cpp
  LIBS maskprior_tasks)
if(MASKPRIOR_WITH_TORCH)
  maskprior_test(own_data_training_test
    SOURCES own_data_training_test.cpp
    LIBS maskprior_train maskprior_compiler maskprior_io maskprior_tasks fmt::fmt)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  add_test(NAME your_data_cli
    COMMAND sh ${PROJECT_SOURCE_DIR}/tests/cli/your_data_cli.sh $<TARGET_FILE:maskc>
      ${PROJECT_SOURCE_DIR} ${Python3_EXECUTABLE})
  set_tests_properties(your_data_cli PROPERTIES TIMEOUT 300)
endif()
