// The token layout of a spec or a task: named spans in sequence order. One span type serves the
// compiler, the tasks, the validator and the runtime.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/error.h"

namespace maskprior {

enum class DigitOrder { kLsbFirst, kMsbFirst };

/// `lsb_first` or `msb_first`: how `digits SPAN ORDER` spells an order.
const char* digit_order_keyword(DigitOrder order);
/// The order `keyword` spells (`lsb_first`, `msb_first`); nullopt for anything else.
std::optional<DigitOrder> parse_digit_order(std::string_view keyword);

/// A named run of tokens in the sequence layout (`cls` is a span of length 1).
struct Span {
  std::string name;
  int64_t offset = 0;  // index of the span's first token in the sequence
  int64_t length = 0;
  std::optional<std::pair<int64_t, int64_t>> grid;  // (H, W), row-major, from `grid SPAN H x W`
  std::optional<DigitOrder> digits;                 // from `digits SPAN lsb_first|msb_first`
};

/// The sequence layout, spans in order; N = sum of lengths.
struct Layout {
  std::vector<Span> spans;

  int64_t size() const;
  /// The span called `name`, or nullptr.
  const Span* find(const std::string& name) const;
  /// The one message for a name that is no span, "unknown span 'z' (spans: a[4], eq, c[4])", which
  /// every caller puts after where it found the name (a spec's line, a flag, a task).
  std::string unknown_span(const std::string& name) const;
  /// The span called `name`; otherwise calls `fail` with unknown_span(name), which must throw.
  const Span& require(const std::string& name,
                      const std::function<void(const std::string& message)>& fail) const;
  /// Label of token t for display: `cls`, `x[3]` (a length-1 span prints bare).
  std::string token_label(int64_t t) const;
  /// The token a label names, the inverse of token_label: `cls` (a span of one token), `x[3]`,
  /// `x3` (token 3 of span x), `before c[0]` (the token before the one named); nullopt for a
  /// label that names no token.
  std::optional<int64_t> token_index(const std::string& label) const;
  /// The tokens a label names, in order: one token (token_index), every token of a span (`c`),
  /// or the token before each of a span's (`before c`); empty for a label that names none.
  std::vector<int64_t> tokens_of(const std::string& label) const;
};

/// `cls, x[15]` — a layout as a spec's `tokens` line writes its spans (a length-1 span bare),
/// with the backticks and "(N = 16)" after.
std::string layout_text(const Layout& layout);
/// cls, x[15] — the spans alone, as the `tokens` line of a spec writes them.
std::string tokens_text(const Layout& layout);
/// True when both layouts have the same span names and lengths in the same order.
bool same_spans(const Layout& a, const Layout& b);
/// The tokens that `labels` (a table's column names, as `maskc validate --truth-table` and
/// `maskc train --truth-table` read them from its header line) name in the layout of spec `spec`,
/// one per label. A label that names no token, or a token an earlier label names, is the error
/// `error_at(i, message)` makes for label i (a truth table's: at that name in its header).
std::vector<int64_t> bind_token_labels(
    const Layout& layout, const std::vector<std::string>& labels, const std::string& spec,
    const std::function<SpecError(size_t label, const std::string& message)>& error_at);
/// A layout of `spans` (name, length) placed one after another from offset 0.
Layout make_layout(const std::vector<std::pair<std::string, int64_t>>& spans);

}  // namespace maskprior
