// fuzz_safetensors: arbitrary bytes as a safetensors file -> read_mask_file and read_safetensors,
// each with a 1 MiB cap. Expected: a result, or InputError (SpecError is tolerated too).
// Anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "io/mask_file.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maskprior;
  const std::string& path = fuzz::scratch_path("fuzz_safetensors", ".safetensors");
  fuzz::write_scratch(path, data, size);
  fuzz::expect_only_input_errors("read_mask_file",
                                 [&] { (void)read_mask_file(path, fuzz::kFuzzMaxBytes); });
  fuzz::expect_only_input_errors("read_safetensors",
                                 [&] { (void)read_safetensors(path, fuzz::kFuzzMaxBytes); });
  return 0;
}
