// Selectors: `x`, `x[i]`, `x[a..b]`, `before X`, lists -> token indices of the layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/declarations.h"

namespace maskprior {

/// The tokens a selector names, in the order written. Throws SpecError for an unknown span, an
/// index or range outside its span, and `before` the first token of the layout.
std::vector<int64_t> resolve_selector(const ast::Selector& selector, const Scope& scope,
                                      const Declarations& decls, const SourceText& source);

/// A whole span used as an operand (`x`, or `before x`: the tokens just before x's).
struct SpanOperand {
  const Span* span = nullptr;
  int64_t shift = 0;  // 1 for `before x`: token t of the span is read as t - 1
};

/// The whole-span operand of align, product, local and shift; `role` names it in errors.
SpanOperand resolve_span_operand(const ast::Selector& selector, const Declarations& decls,
                                 const SourceText& source, const std::string& role);

}  // namespace maskprior
