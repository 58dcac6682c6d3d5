// fuzz_npy: arbitrary bytes as a .npy file -> read_mask_file, and read_npy_f32_header +
// read_npy_f32_data, with a 1 MiB cap. Expected: a result, or InputError (SpecError is tolerated
// too). Anything else is a finding.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "io/mask_file.h"
#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maskprior;
  const std::string& path = fuzz::scratch_path("fuzz_npy", ".npy");
  fuzz::write_scratch(path, data, size);
  fuzz::expect_only_input_errors("read_mask_file",
                                 [&] { (void)read_mask_file(path, fuzz::kFuzzMaxBytes); });
  fuzz::expect_only_input_errors("read_npy_f32", [&] {
    InputFile file(path);
    if (!is_npy(file)) return;
    const NpyHeader header = read_npy_f32_header(file);
    (void)read_npy_f32_data(file, header.shape, header.data_start, fuzz::kFuzzMaxBytes);
  });
  return 0;
}
