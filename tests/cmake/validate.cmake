# Tests of validate: Walsh spectra, dependencies, reachability, the min-degree interpolator, reports,
# shipped specs against their tasks, and `maskc validate` end to end.
maskprior_test(validate_test
  SOURCES validate_test.cpp
  LIBS maskprior_validate maskprior_compiler nlohmann_json::nlohmann_json)
add_dependencies(validate_test maskc)
# Decoders end to end (tests/cli/validate_cli.sh, one CTest test per case): the running sum of
# examples/your-data under both feedback rules, from a table and from --depends.
find_package(Python3 REQUIRED COMPONENTS Interpreter)
foreach(_case running_sum_table running_sum_depends depends_mistakes decoder_default_readout)
  add_test(NAME validate_cli_${_case}
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/validate_cli.sh $<TARGET_FILE:maskc>
      ${PROJECT_SOURCE_DIR} ${_case} ${Python3_EXECUTABLE})
  set_tests_properties(validate_cli_${_case} PROPERTIES TIMEOUT 120)
endforeach()
