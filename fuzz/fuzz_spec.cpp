// fuzz_spec: arbitrary bytes as .mask spec text -> compile_source, with a 1 MiB output cap.
// Expected: a CompiledMask, or SpecError / InputError. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "compiler/compile.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string source(reinterpret_cast<const char*>(data), size);
  maskprior::CompileOptions options;
  options.max_bytes = maskprior::fuzz::kFuzzMaxBytes;
  maskprior::fuzz::expect_only_input_errors("compile_source", [&] {
    const maskprior::CompiledMask mask = maskprior::compile_source(source, "fuzz.mask", options);
    // Touch the result so that an inconsistent size shows up under ASan.
    if (!mask.mask.empty()) {
      volatile float last = mask.mask.back();
      (void)last;
    }
  });
  return 0;
}
