// fuzz_sequence_file: arbitrary bytes as a `maskc train --data` file against a fixed layout
// (`a[3] = c[2]`, N = 6) -> parse_sequence_file, then the vocabulary, the encoding, the held-out
// split and the TEST checks with the same bytes as both files. Expected: examples, or SpecError /
// InputError. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "tasks/sequence_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace maskprior;
  if (size > fuzz::kFuzzMaxBytes) return 0;
  static const Layout layout = make_layout({{"a", 3}, {"eq", 1}, {"c", 2}});
  fuzz::expect_only_input_errors("parse_sequence_file", [&] {
    const std::string text(reinterpret_cast<const char*>(data), size);
    const tasks::SequenceFile train = tasks::parse_sequence_file(text, "train.txt", layout);
    const std::vector<std::string> vocabulary = tasks::sequence_vocabulary(train);
    const Span& predicted = tasks::predicted_span(layout, "c", "fuzz.mask");
    (void)tasks::encode_sequences(train, vocabulary, "train.txt", layout, predicted);
    tasks::check_predicted_symbols(train, train, predicted);
    (void)tasks::hold_out(train.examples(), /*seed=*/size, train.path);
  });
  return 0;
}
