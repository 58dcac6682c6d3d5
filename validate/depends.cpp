#include "validate/depends.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "core/error.h"

namespace maskprior::validate {
namespace {

constexpr int64_t kMaxNumber = 1'000'000'000'000;  // far past any span, far from overflow

/// One declaration text and where messages place it: file `source`, line `flag`.
struct DependsText {
  const std::string& text;
  const std::string& source;
  int flag;
};

[[noreturn]] void fail_at(const DependsText& at, int column, const std::string& message) {
  throw SpecError(Diagnostic{Severity::kError, {at.source, at.flag, column}, message, at.text});
}

/// Recursive descent over one --depends text (the grammar in depends.h).
class DependsParser {
 public:
  explicit DependsParser(const DependsText& at) : at_(at), text_(at.text) {}

  std::vector<DependsDeclaration> parse() {
    std::vector<DependsDeclaration> declarations;
    skip_space();
    if (at_end()) {
      fail("no declaration: write OUTPUT: INPUTS, as in `c[i]: a[..i+1]`");
    }
    while (!at_end()) {
      declarations.push_back(declaration());
      skip_space();
      if (at_end()) break;
      if (!accept(';')) {
        fail(fmt::format("expected ',' or ';' after {}",
                         declarations.back().inputs.empty()
                             ? "the output's ':'"
                             : declarations.back().inputs.back().text));
      }
      skip_space();
    }
    return declarations;
  }

 private:
  const DependsText& at_;
  const std::string& text_;
  size_t pos_ = 0;

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  int column() const { return static_cast<int>(pos_) + 1; }
  void skip_space() {
    while (!at_end() && std::isspace(static_cast<unsigned char>(peek()))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  bool accept_dots() {
    skip_space();
    if (text_.compare(pos_, 2, "..") != 0) return false;
    pos_ += 2;
    return true;
  }
  [[noreturn]] void fail(const std::string& message) const { fail_at(at_, column(), message); }
  /// What stands at the cursor, for messages: `'x'`, or "the end".
  std::string found() const {
    return at_end() ? std::string("the end") : quote_input(text_.substr(pos_, 1));
  }

  static bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
  static bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

  std::string name() {
    const size_t start = pos_;
    while (!at_end() && name_char(peek())) ++pos_;
    return text_.substr(start, pos_ - start);
  }

  int64_t number() {
    int64_t value = 0;
    const int start = column();
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) {
      value = value * 10 + (peek() - '0');
      ++pos_;
      if (value > kMaxNumber) fail_at(at_, start, "number too large for an index");
    }
    return value;
  }

  DependsDeclaration declaration() {
    DependsDeclaration d;
    skip_space();
    d.output.column = column();
    const size_t start = pos_;
    if (!name_start(peek())) {
      fail(fmt::format("expected an output, a span of the spec as in `c[i]`, found {}", found()));
    }
    d.output.span = name();
    if (accept('[')) {
      skip_space();
      d.output.kind = DependsSelector::Kind::kIndex;
      if (name_start(peek())) {
        d.variable = name();
        d.output.first.per_variable = 1;
      } else if (std::isdigit(static_cast<unsigned char>(peek()))) {
        d.output.first.constant = number();
      } else {
        fail(fmt::format(
            "expected a name (c[i]: every token of c) or a number (c[2]) in the output's "
            "brackets, found {}",
            found()));
      }
      if (!accept(']')) {
        fail(fmt::format("expected ']' after the output's index, found {}", found()));
      }
    }
    d.output.text = trimmed(start);
    if (!accept(':')) {
      fail(fmt::format("expected ':' after the output {}, found {}", d.output.text, found()));
    }
    skip_space();
    if (at_end() || peek() == ';') return d;  // a constant: it needs no input
    do {
      d.inputs.push_back(selector(d));
    } while (accept(','));
    return d;
  }

  DependsSelector selector(const DependsDeclaration& d) {
    skip_space();
    DependsSelector s;
    s.column = column();
    const size_t start = pos_;
    if (!name_start(peek())) {
      fail(fmt::format("expected an input, a span of the spec as in `a[i]`, found {}", found()));
    }
    s.span = name();
    if (accept('[')) {
      s.kind = DependsSelector::Kind::kIndex;
      if (accept_dots()) {
        s.kind = DependsSelector::Kind::kRange;
        s.has_first = false;
      } else {
        s.first = index(d);
        if (accept_dots()) s.kind = DependsSelector::Kind::kRange;
      }
      if (s.kind == DependsSelector::Kind::kRange) {
        skip_space();
        if (peek() != ']') s.end = index(d);
      }
      if (!accept(']')) fail(fmt::format("expected ']' to close {}[, found {}", s.span, found()));
    }
    s.text = trimmed(start);
    return s;
  }

  DependsIndex index(const DependsDeclaration& d) {
    DependsIndex value;
    int sign = 1;
    for (;;) {
      skip_space();
      if (std::isdigit(static_cast<unsigned char>(peek()))) {
        value.constant += sign * number();
      } else if (name_start(peek())) {
        const int at = column();
        const std::string variable = name();
        if (variable != d.variable) {
          fail_at(at_, at,
                  d.variable.empty()
                      ? fmt::format("unknown name '{}': the output {} has no index to name; write "
                                    "{}[{}] to run {} over the tokens of {}",
                                    variable, d.output.text, d.output.span, variable, variable,
                                    d.output.span)
                      : fmt::format("unknown name '{}': an index may name only the output's "
                                    "index, {} (from {})",
                                    variable, d.variable, d.output.text));
        }
        value.per_variable += sign;
      } else {
        fail(fmt::format("expected a number or the output's index in an index, found {}", found()));
      }
      if (accept('+')) {
        sign = 1;
      } else if (accept('-')) {
        sign = -1;
      } else {
        return value;
      }
    }
  }

  /// The text from `start` to the cursor, without trailing blanks.
  std::string trimmed(size_t start) const {
    size_t end = pos_;
    while (end > start && std::isspace(static_cast<unsigned char>(text_[end - 1]))) --end;
    return text_.substr(start, end - start);
  }
};

const Span& find_span(const Layout& layout, const DependsSelector& s, const DependsText& at,
                      const std::string& spec) {
  const Span* span = layout.find(s.span);
  if (span == nullptr) {
    std::vector<std::string> names;
    for (const Span& each : layout.spans) names.push_back(each.name);
    fail_at(at, s.column,
            fmt::format("`{}` names no span of spec '{}' (its spans: {})", s.span, spec,
                        fmt::join(names, ", ")));
  }
  return *span;
}

/// The tokens `s` selects when the output's index is i (`where` says so in messages).
std::vector<int64_t> selected_tokens(const Span& span, const DependsSelector& s, int64_t i,
                                     const std::string& where, const DependsText& at) {
  const std::string bounds = span.length == 0
                                 ? fmt::format("span {} is empty", span.name)
                                 : fmt::format("span {} has {}[0] to {}[{}]", span.name, span.name,
                                               span.name, span.length - 1);
  std::vector<int64_t> tokens;
  switch (s.kind) {
    case DependsSelector::Kind::kSpan:
      for (int64_t t = 0; t < span.length; ++t) tokens.push_back(span.offset + t);
      break;
    case DependsSelector::Kind::kIndex: {
      const int64_t t = s.first.at(i);
      if (t < 0 || t >= span.length) {
        fail_at(at, s.column,
                fmt::format("{} is {}[{}]{}, outside it: {}", s.text, span.name, t, where, bounds));
      }
      tokens.push_back(span.offset + t);
      break;
    }
    case DependsSelector::Kind::kRange: {
      const int64_t first = s.has_first ? s.first.at(i) : 0;
      const int64_t end = s.end ? s.end->at(i) : span.length;
      if (first < 0 || end > span.length || first > end) {
        fail_at(
            at, s.column,
            fmt::format("{} is {}[{}..{}]{}, {}: {} (a range x..y is x up to y - 1)", s.text,
                        span.name, first, end, where,
                        first > end ? "which ends before it starts" : "outside the span", bounds));
      }
      for (int64_t t = first; t < end; ++t) tokens.push_back(span.offset + t);
      break;
    }
  }
  return tokens;
}

}  // namespace

std::vector<DependsDeclaration> parse_depends(const std::string& text, int flag,
                                              const std::string& source) {
  return DependsParser(DependsText{text, source, flag}).parse();
}

DeclaredDependencies bind_depends(const Layout& layout, const std::vector<std::string>& depends,
                                  const std::string& spec, const std::string& source) {
  DeclaredDependencies declared;
  std::set<int64_t> seen;
  for (size_t f = 0; f < depends.size(); ++f) {
    const std::string& text = depends[f];
    const int flag = static_cast<int>(f) + 1;
    const DependsText at{text, source, flag};
    for (const DependsDeclaration& d : parse_depends(text, flag, source)) {
      const Span& span = find_span(layout, d.output, at, spec);
      // The output's index values: every token of its span for `c` and `c[i]`, else one.
      std::vector<int64_t> indices;
      if (d.output.kind == DependsSelector::Kind::kIndex && d.variable.empty()) {
        const int64_t t = d.output.first.constant;
        if (t >= span.length) {
          fail_at(at, d.output.column,
                  fmt::format("output {} is outside span {} ({} token{})", d.output.text, span.name,
                              span.length, span.length == 1 ? "" : "s"));
        }
        indices.push_back(t);
      } else {
        for (int64_t i = 0; i < span.length; ++i) indices.push_back(i);
      }
      for (int64_t i : indices) {
        const int64_t output = span.offset + i;
        if (!seen.insert(output).second) {
          fail_at(at, d.output.column,
                  fmt::format("output {} is declared twice", layout.token_label(output)));
        }
        const std::string where =
            d.variable.empty()
                ? std::string()
                : fmt::format(" at {} = {} (output {})", d.variable, i, layout.token_label(output));
        std::vector<int64_t> inputs;
        for (const DependsSelector& s : d.inputs) {
          const Span& from = find_span(layout, s, at, spec);
          for (int64_t t : selected_tokens(from, s, i, where, at)) inputs.push_back(t);
        }
        std::sort(inputs.begin(), inputs.end());
        inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
        declared.outputs.push_back(output);
        declared.inputs.push_back(std::move(inputs));
      }
    }
  }
  return declared;
}

}  // namespace maskprior::validate
