// fuzz_truth_table: arbitrary bytes as a truth-table CSV file -> read_truth_table_csv, with a
// 1 MiB cap. Expected: a table, or InputError (SpecError is tolerated too). Anything else is a
// finding.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "tasks/truth_table.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maskprior;
  const std::string& path = fuzz::scratch_path("fuzz_truth_table", ".csv");
  fuzz::write_scratch(path, data, size);
  fuzz::expect_only_input_errors("read_truth_table_csv", [&] {
    (void)tasks::read_truth_table_csv(path, fuzz::kFuzzMaxBytes);
  });
  return 0;
}
