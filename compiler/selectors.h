// Selectors: `x`, `x[i]`, `x[a..b]`, `before X`, lists -> token indices of the layout.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ast.h"
#include "compiler/declarations.h"
#include "compiler/work.h"

namespace maskprior {

/// The tokens a selector names, in the order written, each counted as cell work by `budget`.
/// Throws SpecError for an unknown span, an index or range outside its span, `before` the first
/// token of the layout, and work past the limit.
std::vector<int64_t> resolve_selector(const ast::Selector& selector, const Scope& scope,
                                      const Declarations& decls, const SourceText& source,
                                      WorkBudget& budget);

/// Every check `resolve_selector` makes of one selector item (but the work limit), without
/// listing its tokens: time and memory proportional to the item's text.
void check_selector_item(const ast::SelectorItem& item, const Scope& scope,
                         const Declarations& decls, const SourceText& source);

/// The span called `name`; throws SpecError at `pos` naming the declared spans if there is none.
const Span& find_span(const std::string& name, ast::Pos pos, const Declarations& decls,
                      const SourceText& source);

/// Range bound `e` of `span` (the start, or the end when `is_end`), a negative literal counting
/// from the end; throws SpecError unless it lies in 0..len.
int64_t range_bound(const ast::Expr& e, bool is_end, const Span& span, const Scope& scope,
                    const SourceText& source);

/// A whole span used as an operand (`x`, or `before x`: the tokens just before x's).
struct SpanOperand {
  const Span* span = nullptr;
  int64_t shift = 0;  // 1 for `before x`: token t of the span is read as t - 1
};

/// The whole-span operand of align, product, local and shift; `role` names it in errors.
SpanOperand resolve_span_operand(const ast::Selector& selector, const Declarations& decls,
                                 const SourceText& source, const std::string& role);

}  // namespace maskprior
