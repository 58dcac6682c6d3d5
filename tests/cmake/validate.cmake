# Tests of validate: Walsh spectra, dependencies, reachability, the min-degree interpolator, reports,
# shipped specs against their tasks, and `maskc validate` end to end.
maskprior_test(validate_test
  SOURCES validate_test.cpp
  LIBS maskprior_validate maskprior_compiler nlohmann_json::nlohmann_json)
add_dependencies(validate_test maskc)
