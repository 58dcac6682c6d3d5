// fuzz_idx: arbitrary bytes as an IDX file, plain (parse_idx) and as a gzip stream (gunzip with
// a 1 MiB cap, then parse_idx). Expected: an array whose size matches its dimensions, or
// InputError. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "fuzz_util.h"
#include "tasks/idx_file.h"

namespace {

void check_sizes(const maskprior::tasks::IdxArray& array) {
  uint64_t elements = 1;
  for (int64_t d : array.dims) elements *= static_cast<uint64_t>(d);
  if (elements != array.data.size()) std::abort();  // a size the header does not promise
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maskprior;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  fuzz::expect_only_input_errors("parse_idx", [&] { check_sizes(tasks::parse_idx(bytes, "x")); });
  fuzz::expect_only_input_errors("gunzip + parse_idx", [&] {
    check_sizes(tasks::parse_idx(tasks::gunzip(bytes, fuzz::kFuzzMaxBytes, "x.gz"), "x"));
  });
  return 0;
}
