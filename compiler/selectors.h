// Selectors: `x`, `x[i]`, `x[a..b]`, `before X`, lists -> runs of token indices of the layout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/binding.h"
#include "compiler/declarations.h"

namespace maskprior {

/// Consecutive tokens [begin, end) of the layout.
struct TokenRun {
  int64_t begin = 0;
  int64_t end = 0;
};

/// The tokens a selector names, in the order written, as runs: a span or range is one run, so
/// binding takes time and memory proportional to the selector's text, not to its tokens.
using BoundSelector = std::vector<TokenRun>;

/// Binds `selector` in `binding`, item by item: resolving, first the item's span names and the
/// names in its indices; then its indices and ranges, whose tokens count as listed work when
/// expanding. Returns nullopt when an index depends on a value the pass does not know (the parts
/// of the item that do not are still checked). Throws SpecError for an unknown span, an index or
/// range outside its span, `before` the first token of the layout, and work past the limit.
std::optional<BoundSelector> bind_selector(const ast::Selector& selector, const Binding& binding);

/// How many tokens `tokens` names (a token named twice counts twice).
uint64_t token_count(const BoundSelector& tokens);

/// The tokens of `tokens`, one by one, in order.
std::vector<int64_t> list_tokens(const BoundSelector& tokens);

/// The smallest token that `tokens` names more than once, if any.
std::optional<int64_t> repeated_token(const BoundSelector& tokens);

/// A whole span used as an operand (`x`, or `before x`: the tokens just before x's).
struct SpanOperand {
  const Span* span = nullptr;
  int64_t shift = 0;  // 1 for `before x`: token t of the span is read as t - 1
};

/// The whole-span operand of align, product, local and shift; `role` names it in errors.
SpanOperand resolve_span_operand(const ast::Selector& selector, const Declarations& decls,
                                 const SourceText& source, const std::string& role);

}  // namespace maskprior
