# End-to-end tests of `maskc compile` / `maskc show`: they run the built maskc (MASKC_PATH).
maskprior_test(cli_test
  SOURCES cli_test.cpp
  LIBS maskprior_io nlohmann_json::nlohmann_json)
add_dependencies(cli_test maskc)
