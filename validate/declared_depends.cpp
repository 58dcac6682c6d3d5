#include "validate/declared_depends.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <string_view>
#include <utility>

#include <tao/pegtl.hpp>

#include "core/error.h"
#include "grammar/depends_grammar.hpp"

namespace maskprior::validate {
namespace {

namespace pegtl = tao::pegtl;
namespace dg = grammar::depends;

constexpr int64_t kMaxNumber = 1'000'000'000'000;  // far past any span, far from overflow
// How far an index's terms may add up: with terms of at most kMaxNumber, short of overflow.
constexpr int64_t kMaxSum = 1'000'000'000'000'000'000;

/// One declaration text and where messages place it: file `source`, line `flag`.
struct DependsText {
  const std::string& text;
  const std::string& source;
  int flag;
};

[[noreturn]] void fail_at(const DependsText& at, int column, const std::string& message) {
  throw SpecError(Diagnostic{Severity::kError, {at.source, at.flag, column}, message, at.text});
}

/// What the grammar's actions have read of one --depends text so far.
struct Reader {
  DependsText at;
  std::vector<DependsDeclaration> declarations;
  DependsSelector selector;  // the selector being read
  DependsIndex index;        // the index being read
  int sign = 1;              // of the index's next term

  int column(const char* p) const { return static_cast<int>(p - at.text.data()) + 1; }
  [[noreturn]] void fail(const char* p, const std::string& message) const {
    fail_at(at, column(p), message);
  }
  DependsDeclaration& declaration() { return declarations.back(); }

  /// An integer as written (digits only); SpecError past kMaxNumber.
  int64_t number(std::string_view digits, const char* p) const {
    int64_t value = 0;
    for (char c : digits) {
      value = value * 10 + (c - '0');
      if (value > kMaxNumber) fail(p, "number too large for an index");
    }
    return value;
  }

  /// Adds sign·term to the index: `constant` a number, `per_variable` 1 for the output's index.
  void add_term(int64_t constant, int64_t per_variable, const char* p) {
    index.constant += sign * constant;
    index.per_variable += sign * per_variable;
    sign = 1;
    if (std::max(std::abs(index.constant), std::abs(index.per_variable)) > kMaxSum) {
      fail(p, fmt::format("index too large: its terms add up past {}", kMaxSum));
    }
  }

  /// A message of grammar/depends_grammar.hpp with the names it quotes filled in.
  template <typename ParseInput>
  std::string message(const char* format, const ParseInput& in) const {
    const std::string found =
        in.empty() ? std::string("the end") : quote_input(std::string_view(in.current(), 1));
    const DependsDeclaration* d = declarations.empty() ? nullptr : &declarations.back();
    const std::string output = d == nullptr ? std::string() : d->output.text;
    const std::string after =
        d == nullptr || d->inputs.empty() ? std::string("the output's ':'") : d->inputs.back().text;
    return fmt::format(fmt::runtime(format), fmt::arg("found", found), fmt::arg("output", output),
                       fmt::arg("span", selector.span), fmt::arg("after", after));
  }
};

/// `text` without the blanks after it (which the grammar's tokens eat).
std::string trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return std::string(text);
}

// The actions: each builds a piece of the declarations from what its rule matched.
template <typename Rule>
struct Action : pegtl::nothing<Rule> {};

template <>
struct Action<dg::output_span> {
  static void apply(const auto& in, Reader& r) {
    DependsDeclaration& d = r.declarations.emplace_back();
    d.output.span = in.string();
    d.output.column = r.column(in.begin());
  }
};

template <>
struct Action<dg::output_variable> {
  static void apply(const auto& in, Reader& r) {
    DependsDeclaration& d = r.declaration();
    d.output.kind = DependsSelector::Kind::kIndex;
    d.output.first.per_variable = 1;
    d.variable = in.string();
  }
};

template <>
struct Action<dg::output_integer> {
  static void apply(const auto& in, Reader& r) {
    DependsDeclaration& d = r.declaration();
    d.output.kind = DependsSelector::Kind::kIndex;
    d.output.first.constant = r.number(in.string_view(), in.begin());
  }
};

template <>
struct Action<dg::output> {
  static void apply(const auto& in, Reader& r) {
    r.declaration().output.text = trimmed(in.string_view());
  }
};

template <>
struct Action<dg::selector_span> {
  static void apply(const auto& in, Reader& r) {
    r.selector = DependsSelector{};
    r.selector.span = in.string();
    r.selector.column = r.column(in.begin());
  }
};

template <>
struct Action<dg::selector_open> {
  static void apply0(Reader& r) { r.selector.kind = DependsSelector::Kind::kIndex; }
};

template <>
struct Action<dg::open_range> {
  static void apply0(Reader& r) {
    r.selector.kind = DependsSelector::Kind::kRange;
    r.selector.has_first = false;
  }
};

template <>
struct Action<dg::range_dots> {
  static void apply0(Reader& r) { r.selector.kind = DependsSelector::Kind::kRange; }
};

template <>
struct Action<dg::minus_tok> {
  static void apply0(Reader& r) { r.sign = -1; }
};

template <>
struct Action<dg::term_integer> {
  static void apply(const auto& in, Reader& r) {
    r.add_term(r.number(in.string_view(), in.begin()), 0, in.begin());
  }
};

template <>
struct Action<dg::term_name> {
  static void apply(const auto& in, Reader& r) {
    const DependsDeclaration& d = r.declaration();
    const std::string name = in.string();
    if (name != d.variable) {
      r.fail(in.begin(),
             d.variable.empty()
                 ? fmt::format("unknown name '{}': the output {} has no index to name; write "
                               "{}[{}] to run {} over the tokens of {}",
                               name, d.output.text, d.output.span, name, name, d.output.span)
                 : fmt::format("unknown name '{}': an index may name only the output's index, "
                               "{} (from {})",
                               name, d.variable, d.output.text));
    }
    r.add_term(0, 1, in.begin());
  }
};

template <>
struct Action<dg::first_index> {
  static void apply0(Reader& r) { r.selector.first = std::exchange(r.index, DependsIndex{}); }
};

template <>
struct Action<dg::last_index> {
  static void apply0(Reader& r) { r.selector.end = std::exchange(r.index, DependsIndex{}); }
};

template <>
struct Action<dg::selector> {
  static void apply(const auto& in, Reader& r) {
    r.selector.text = trimmed(in.string_view());
    r.declaration().inputs.push_back(std::move(r.selector));
  }
};

/// Raises the message of a rule under `must<>` (grammar/depends_grammar.hpp) as a SpecError at
/// the character where the rule failed; a `must<>` of a rule without a message does not compile.
template <typename Rule>
struct Control : pegtl::normal<Rule> {
  template <typename ParseInput>
  [[noreturn]] static void raise(const ParseInput& in, Reader& r) {
    static_assert(dg::error_message<Rule> != nullptr, "a rule under must<> needs a message");
    r.fail(in.current(), r.message(dg::error_message<Rule>, in));
  }
};

const Span& find_span(const Layout& layout, const DependsSelector& s, const DependsText& at,
                      const std::string& spec) {
  return layout.require(s.span, [&](const std::string& message) {
    fail_at(at, s.column, fmt::format("spec '{}': {}", spec, message));
  });
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
  Reader reader{DependsText{text, source, flag}, {}, {}, {}};
  pegtl::memory_input in(text.data(), text.size(), source);
  const bool parsed = pegtl::parse<dg::text, Action, Control>(in, reader);
  internal_check(parsed, "a --depends text read without declarations or an error");
  return std::move(reader.declarations);
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
