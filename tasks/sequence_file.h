// Sequence data files for `maskc train --data TRAIN.txt [--test-data TEST.txt] --predict SPAN`
// (docs/your-data.md): one example per line, exactly N whitespace-separated symbols, N being the
// spec's token count. Symbols are any UTF-8 text without whitespace or control characters (`3`,
// `=`, `héllo`, `<eos>`); lines holding only whitespace are skipped. The vocabulary is the set of
// symbols of TRAIN, sorted by their bytes, token id = index. No LibTorch here.
//
// Mistakes in a data file are reported like a spec's: a Diagnostic printed as
// `FILE:LINE:COLUMN: error: MESSAGE`, the line and a caret (thrown as SpecError, which carries a
// position; exit 1).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/error.h"
#include "core/layout.h"

namespace maskprior::tasks {

/// The largest data file read_sequence_file reads by default.
inline constexpr uint64_t kMaxSequenceFileBytes = uint64_t{1} << 30;
/// The share of TRAIN held out as the test set when no TEST file is given.
inline constexpr double kHeldOutShare = 0.1;

/// The examples of one data file.
struct SequenceFile {
  std::string path;
  std::string text;                  // the file's bytes (for diagnostics)
  int64_t length = 0;                // symbols per example (the spec's N)
  std::vector<std::string> symbols;  // distinct symbols, in order of first appearance
  std::vector<int32_t> codes;        // examples × length: index into `symbols`
  std::vector<int32_t> columns;      // examples × length: 1-based byte column of each symbol
  std::vector<int32_t> lines;        // per example: its 1-based line number
  std::vector<size_t> line_starts;   // per example: byte offset of its line in `text`

  int64_t examples() const { return static_cast<int64_t>(lines.size()); }
  /// The diagnostic "PATH:LINE:COLUMN: error: MESSAGE" at symbol `position` of `example`, with
  /// the line and a caret.
  SpecError error_at(int64_t example, int64_t position, const std::string& message) const;
};

/// Parses data text: each non-blank line must hold exactly `layout.size()` symbols. Throws
/// SpecError for bytes that are not UTF-8, control characters (NUL, ESC, ...: whitespace is spaces
/// and tabs, and a line may end in `\r\n`), a line with the wrong number of symbols, or a file
/// without examples.
/// With `other_lengths_skipped` (a file of several lengths read once per length, docs/your-data.md
/// "Lines of different lengths"), lines of another symbol count are skipped instead, and a file
/// without such lines gives no examples.
SequenceFile parse_sequence_file(std::string text, const std::string& path, const Layout& layout,
                                 bool other_lengths_skipped = false);
/// Reads and parses a data file. Throws InputError if it is not a regular file or is larger than
/// `max_bytes`, SpecError as parse_sequence_file.
SequenceFile read_sequence_file(const std::string& path, const Layout& layout,
                                uint64_t max_bytes = kMaxSequenceFileBytes,
                                bool other_lengths_skipped = false);
/// The symbol counts of a data file's non-blank lines, each with the first line that has it.
/// SpecError as parse_sequence_file for bytes it refuses and for a file without examples.
std::map<int64_t, int> sequence_lengths(const std::string& path,
                                        uint64_t max_bytes = kMaxSequenceFileBytes);

/// The vocabulary of TRAIN: its distinct symbols sorted by their bytes (token id = index).
std::vector<std::string> sequence_vocabulary(const SequenceFile& train);

/// Token ids, examples × length, row-major, of `file` under `vocabulary`. A symbol outside the
/// vocabulary is a SpecError at its first occurrence in `file`, naming `vocabulary_source` and,
/// when it sits in `predicted` (the span the model predicts), the token it would be.
std::vector<int64_t> encode_sequences(const SequenceFile& file,
                                      const std::vector<std::string>& vocabulary,
                                      const std::string& vocabulary_source, const Layout& layout,
                                      const Span& predicted);

/// Every symbol `test` has in the span `predicted` must occur in that span of `train` too (the
/// model is never trained to write anything else): SpecError at the first that does not.
void check_predicted_symbols(const SequenceFile& test, const SequenceFile& train,
                             const Span& predicted);
/// The symbols `train` has in its span `predicted`.
std::unordered_set<std::string> predicted_symbols(const SequenceFile& train, const Span& predicted);
/// The same check against `written` (symbols training files have in the span, e.g. over several
/// lengths), naming `train_path`.
void check_predicted_symbols(const SequenceFile& test,
                             const std::unordered_set<std::string>& written,
                             const std::string& train_path, const Span& predicted);

/// The span `name` of `layout`, the one the model predicts: it must exist and have a token before
/// it (the row that predicts its first symbol). InputError naming `spec` and the spans otherwise.
const Span& predicted_span(const Layout& layout, const std::string& name, const std::string& spec);

/// Example indices of a TRAIN file split in two when no TEST file is given: a seeded
/// kHeldOutShare of the examples (at least one) is the test set, the rest trains; both sorted.
struct HeldOutSplit {
  std::vector<int64_t> train;
  std::vector<int64_t> test;
};
/// Throws InputError (naming `path`) for fewer than 2 examples.
HeldOutSplit hold_out(int64_t examples, uint64_t seed, const std::string& path);

}  // namespace maskprior::tasks
