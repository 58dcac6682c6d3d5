#include "core/layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_map>

#include "core/error.h"

namespace maskprior {
namespace {

/// Parses a non-negative decimal integer that fills all of `text`.
std::optional<int64_t> parse_index(std::string_view text) {
  int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < 0) {
    return std::nullopt;
  }
  return value;
}

/// Token `index` of span `name`, if both exist.
std::optional<int64_t> span_token(const Layout& layout, const std::string& name, int64_t index) {
  const Span* span = layout.find(name);
  if (span == nullptr || index < 0 || index >= span->length) return std::nullopt;
  return span->offset + index;
}

}  // namespace

int64_t Layout::size() const {
  int64_t n = 0;
  for (const Span& s : spans) n += s.length;
  return n;
}

const Span* Layout::find(const std::string& name) const {
  for (const Span& s : spans) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string Layout::unknown_span(const std::string& name) const {
  return fmt::format("unknown span {} (spans: {})", quote_input(name), tokens_text(*this));
}

const Span& Layout::require(const std::string& name,
                            const std::function<void(const std::string& message)>& fail) const {
  if (const Span* span = find(name)) return *span;
  fail(unknown_span(name));
  throw InternalError("Layout::require: `fail` returned for span " + quote_input(name));
}

std::string Layout::token_label(int64_t t) const {
  for (const Span& s : spans) {
    if (t >= s.offset && t < s.offset + s.length) {
      if (s.length == 1) return s.name;
      return fmt::format("{}[{}]", s.name, t - s.offset);
    }
  }
  return fmt::format("#{}", t);
}

std::optional<int64_t> Layout::token_index(const std::string& label) const {
  constexpr std::string_view kBefore = "before ";
  if (label.starts_with(kBefore)) {
    const std::optional<int64_t> token = token_index(label.substr(kBefore.size()));
    if (!token || *token == 0) return std::nullopt;
    return *token - 1;
  }
  const size_t bracket = label.find('[');
  if (bracket != std::string::npos && label.back() == ']') {  // x[3]
    const auto index =
        parse_index(std::string_view(label).substr(bracket + 1, label.size() - bracket - 2));
    if (!index) return std::nullopt;
    return span_token(*this, label.substr(0, bracket), *index);
  }
  if (const Span* span = find(label)) {  // cls: a whole span of one token
    if (span->length == 1) return span->offset;
    return std::nullopt;
  }
  const size_t digits = label.find_last_not_of("0123456789") + 1;  // x3 → span x, index 3
  if (digits == 0 || digits == label.size()) return std::nullopt;
  const auto index = parse_index(std::string_view(label).substr(digits));
  if (!index) return std::nullopt;
  return span_token(*this, label.substr(0, digits), *index);
}

std::vector<int64_t> Layout::tokens_of(const std::string& label) const {
  if (const std::optional<int64_t> token = token_index(label)) return {*token};
  constexpr std::string_view kBefore = "before ";
  const bool before = label.starts_with(kBefore);
  const Span* span = find(before ? label.substr(kBefore.size()) : label);
  if (span == nullptr || (before && span->offset == 0)) return {};
  std::vector<int64_t> tokens;
  for (int64_t i = 0; i < span->length; ++i) tokens.push_back(span->offset + i - (before ? 1 : 0));
  return tokens;
}

std::vector<int64_t> bind_token_labels(
    const Layout& layout, const std::vector<std::string>& labels, const std::string& spec,
    const std::function<SpecError(size_t label, const std::string& message)>& error_at) {
  std::vector<int64_t> tokens;
  std::unordered_map<int64_t, size_t> column_of_token;  // linear in the columns, however many
  for (size_t i = 0; i < labels.size(); ++i) {
    const std::string& label = labels[i];
    const std::optional<int64_t> token = layout.token_index(label);
    if (!token) {
      const int64_t n = layout.size();
      throw error_at(
          i, fmt::format("column {} names no token of spec '{}' (tokens are named "
                         "like {})",
                         quote_input(label), spec, n > 1 ? layout.token_label(n - 1) : "x[0]"));
    }
    const auto [same, inserted] = column_of_token.emplace(*token, tokens.size());
    if (!inserted) {
      throw error_at(
          i, fmt::format("columns {} and {} both name token {}", quote_input(labels[same->second]),
                         quote_input(label), layout.token_label(*token)));
    }
    tokens.push_back(*token);
  }
  return tokens;
}

std::string tokens_text(const Layout& layout) {
  std::vector<std::string> parts;
  for (const Span& s : layout.spans) {
    parts.push_back(s.length == 1 ? s.name : fmt::format("{}[{}]", s.name, s.length));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string layout_text(const Layout& layout) {
  return fmt::format("`{}` (N = {})", tokens_text(layout), layout.size());
}

const char* digit_order_keyword(DigitOrder order) {
  return order == DigitOrder::kLsbFirst ? "lsb_first" : "msb_first";
}

std::optional<DigitOrder> parse_digit_order(std::string_view keyword) {
  if (keyword == "lsb_first") return DigitOrder::kLsbFirst;
  if (keyword == "msb_first") return DigitOrder::kMsbFirst;
  return std::nullopt;
}

bool same_spans(const Layout& a, const Layout& b) {
  if (a.spans.size() != b.spans.size()) return false;
  for (size_t i = 0; i < a.spans.size(); ++i) {
    if (a.spans[i].name != b.spans[i].name || a.spans[i].length != b.spans[i].length) return false;
  }
  return true;
}

Layout make_layout(const std::vector<std::pair<std::string, int64_t>>& spans) {
  Layout layout;
  int64_t offset = 0;
  for (const auto& [name, length] : spans) {
    layout.spans.push_back({name, offset, length, std::nullopt, std::nullopt});
    offset += length;
  }
  return layout;
}

}  // namespace maskprior
