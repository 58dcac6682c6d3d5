# Tests of report: REPORT.md tables and plots from hand-written run folders, errors, `maskc report`.
maskprior_test(report_test
  SOURCES report_test.cpp
  LIBS maskprior_report maskprior_render maskprior_io nlohmann_json::nlohmann_json fmt::fmt)
add_dependencies(report_test maskc)
