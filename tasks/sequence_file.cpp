#include "tasks/sequence_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/interrupt.h"
#include "core/regular_file.h"
#include "tasks/random.h"
#include "tasks/text_file.h"

namespace maskprior::tasks {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r';  // other controls are refused (check_text_line)
}

/// The symbols of one line with their 0-based byte offsets, at most `limit` of them: a line with
/// more is wrong whatever the rest holds, so a 100 MB line costs no 100 MB vector.
std::vector<std::pair<std::string_view, size_t>> split_symbols(std::string_view line,
                                                               size_t limit) {
  std::vector<std::pair<std::string_view, size_t>> symbols;
  size_t i = 0;
  while (i < line.size() && symbols.size() < limit) {
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) symbols.emplace_back(line.substr(start, i - start), start);
  }
  return symbols;
}

/// Reads one line (1-based `number`, starting at byte `start`) into `file`.
void add_line(SequenceFile& file, std::unordered_map<std::string, int32_t>& index,
              std::string_view line, int number, size_t start, const Layout& layout,
              bool other_lengths_skipped) {
  check_text_line(file.path, number, line, "data file");
  // One more than a line should hold is enough to tell that it holds too many.
  const auto symbols = split_symbols(line, static_cast<size_t>(file.length) + 1);
  if (symbols.empty()) return;  // a blank line
  if (other_lengths_skipped && static_cast<int64_t>(symbols.size()) != file.length) return;
  if (static_cast<int64_t>(symbols.size()) != file.length) {
    const bool too_many = static_cast<int64_t>(symbols.size()) > file.length;
    const size_t at = too_many ? symbols[static_cast<size_t>(file.length)].second
                               : line.find_last_not_of(" \t\r") + 1;
    throw text_error(file.path, number, static_cast<int>(at) + 1,
                     fmt::format("found {} symbols; expected {}, one per token of the spec's "
                                 "layout {} (lines of several lengths need a spec with a size "
                                 "parameter, `param n`: docs/your-data.md)",
                                 too_many ? fmt::format("more than {}", file.length)
                                          : std::to_string(symbols.size()),
                                 file.length, layout_text(layout)),
                     line);
  }
  for (const auto& [symbol, offset] : symbols) {
    const auto [it, inserted] =
        index.emplace(std::string(symbol), static_cast<int32_t>(file.symbols.size()));
    if (inserted) file.symbols.emplace_back(symbol);
    file.codes.push_back(it->second);
    file.columns.push_back(static_cast<int32_t>(offset) + 1);
  }
  file.lines.push_back(number);
  file.line_starts.push_back(start);
}

std::string_view line_at(const std::string& text, size_t start) {
  const size_t end = text.find('\n', start);
  return std::string_view(text).substr(start, end == std::string::npos ? end : end - start);
}

}  // namespace

SpecError SequenceFile::error_at(int64_t example, int64_t position,
                                 const std::string& message) const {
  const auto e = static_cast<size_t>(example);
  return text_error(path, lines[e],
                    columns[e * static_cast<size_t>(length) + static_cast<size_t>(position)],
                    message, line_at(text, line_starts[e]));
}

SequenceFile parse_sequence_file(std::string text, const std::string& path, const Layout& layout,
                                 bool other_lengths_skipped) {
  SequenceFile file;
  file.path = path;
  file.text = std::move(text);
  file.length = layout.size();
  blank_byte_order_mark(file.text);
  std::unordered_map<std::string, int32_t> index;
  const std::string_view all = file.text;
  int number = 0;
  for (size_t start = 0; start < all.size();) {
    const size_t end = std::min(all.find('\n', start), all.size());
    if (const int signal = stop_requested(); signal != 0) {
      throw Interrupted(signal, fmt::format("reading data file '{}'", path));
    }
    add_line(file, index, all.substr(start, end - start), ++number, start, layout,
             other_lengths_skipped);
    start = end + 1;
  }
  if (file.lines.empty() && !other_lengths_skipped) {
    throw text_error(path, std::max(number, 1), 1,
                     fmt::format("no examples: the file is {}; write one example per line, "
                                 "one symbol per token of {}",
                                 all.empty() ? "empty" : "blank", layout_text(layout)),
                     {});
  }
  return file;
}

SequenceFile read_sequence_file(const std::string& path, const Layout& layout, uint64_t max_bytes,
                                bool other_lengths_skipped) {
  return parse_sequence_file(read_regular_file(path, max_bytes, "data file"), path, layout,
                             other_lengths_skipped);
}

std::map<int64_t, int> sequence_lengths(const std::string& path, uint64_t max_bytes) {
  std::string text = read_regular_file(path, max_bytes, "data file");
  blank_byte_order_mark(text);
  std::map<int64_t, int> lengths;
  const std::string_view all = text;
  int number = 0;
  for (size_t start = 0; start < all.size();) {
    const size_t end = std::min(all.find('\n', start), all.size());
    const auto line = all.substr(start, end - start);
    check_text_line(path, ++number, line, "data file");
    int64_t count = 0;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && is_space(line[i])) ++i;
      if (i < line.size()) ++count;
      while (i < line.size() && !is_space(line[i])) ++i;
    }
    if (count > 0) lengths.emplace(count, number);
    start = end + 1;
  }
  if (lengths.empty()) {
    throw text_error(path, std::max(number, 1), 1,
                     fmt::format("no examples: the file is {}", all.empty() ? "empty" : "blank"),
                     {});
  }
  return lengths;
}

std::unordered_set<std::string> predicted_symbols(const SequenceFile& train,
                                                  const Span& predicted) {
  std::unordered_set<std::string> written;
  for (int64_t e = 0; e < train.examples(); ++e) {
    for (int64_t p = predicted.offset; p < predicted.offset + predicted.length; ++p) {
      written.insert(train.symbols[static_cast<size_t>(
          train.codes[static_cast<size_t>(e * train.length + p)])]);
    }
  }
  return written;
}

std::vector<std::string> sequence_vocabulary(const SequenceFile& train) {
  std::vector<std::string> vocabulary = train.symbols;
  std::sort(vocabulary.begin(), vocabulary.end());
  return vocabulary;
}

std::vector<int64_t> encode_sequences(const SequenceFile& file,
                                      const std::vector<std::string>& vocabulary,
                                      const std::string& vocabulary_source, const Layout& layout,
                                      const Span& predicted) {
  std::vector<int64_t> id_of(file.symbols.size(), -1);  // local symbol → vocabulary id
  for (size_t s = 0; s < file.symbols.size(); ++s) {
    const auto it = std::lower_bound(vocabulary.begin(), vocabulary.end(), file.symbols[s]);
    if (it != vocabulary.end() && *it == file.symbols[s]) id_of[s] = it - vocabulary.begin();
  }
  std::vector<int64_t> ids(file.codes.size());
  for (size_t k = 0; k < file.codes.size(); ++k) {
    ids[k] = id_of[static_cast<size_t>(file.codes[k])];
    if (ids[k] >= 0) continue;
    const auto example = static_cast<int64_t>(k) / file.length;
    const auto position = static_cast<int64_t>(k) % file.length;
    const bool is_predicted =
        position >= predicted.offset && position < predicted.offset + predicted.length;
    throw file.error_at(
        example, position,
        fmt::format("symbol {} (token {}{}) never occurs in {}, so the model has no token for "
                    "it; every symbol must occur in the training data",
                    quote_input(file.symbols[static_cast<size_t>(file.codes[k])]),
                    layout.token_label(position), is_predicted ? ", which the model predicts" : "",
                    vocabulary_source));
  }
  return ids;
}

void check_predicted_symbols(const SequenceFile& test, const SequenceFile& train,
                             const Span& predicted) {
  check_predicted_symbols(test, predicted_symbols(train, predicted), train.path, predicted);
}

void check_predicted_symbols(const SequenceFile& test,
                             const std::unordered_set<std::string>& written,
                             const std::string& train_path, const Span& predicted) {
  for (int64_t e = 0; e < test.examples(); ++e) {
    for (int64_t p = predicted.offset; p < predicted.offset + predicted.length; ++p) {
      const std::string& symbol =
          test.symbols[static_cast<size_t>(test.codes[static_cast<size_t>(e * test.length + p)])];
      if (written.contains(symbol)) continue;
      throw test.error_at(
          e, p,
          fmt::format("symbol {} (token {}, which the model predicts) never occurs in span {} of "
                      "{}, so the model is never trained to write it",
                      quote_input(symbol),
                      fmt::format("{}[{}]", predicted.name, p - predicted.offset), predicted.name,
                      train_path));
    }
  }
}

const Span& predicted_span(const Layout& layout, const std::string& name, const std::string& spec) {
  const Span* span = &layout.require(name, [&](const std::string& message) {
    throw file_error(spec, fmt::format("--predict {}: {}", quote_input(name), message));
  });
  if (span->offset == 0) {
    throw file_error(spec, fmt::format("--predict {}: span `{}` starts the sequence, so no token "
                                       "comes before it to predict its first symbol",
                                       name, name));
  }
  return *span;
}

HeldOutSplit hold_out(int64_t examples, uint64_t seed, const std::string& path) {
  if (examples < 2) {
    throw file_error(path, fmt::format("{} example: holding out a test set needs at least 2 "
                                       "(or give --test-data)",
                                       examples));
  }
  const auto test_count = std::clamp<int64_t>(
      std::llround(kHeldOutShare * static_cast<double>(examples)), 1, examples - 1);
  std::vector<int64_t> order(static_cast<size_t>(examples));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 rng(seed);
  shuffle_prefix(order, static_cast<size_t>(test_count), rng);
  HeldOutSplit split;
  split.test.assign(order.begin(), order.begin() + test_count);
  split.train.assign(order.begin() + test_count, order.end());
  std::sort(split.test.begin(), split.test.end());
  std::sort(split.train.begin(), split.train.end());
  return split;
}

}  // namespace maskprior::tasks
