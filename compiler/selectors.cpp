#include "compiler/selectors.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

namespace maskprior {
namespace {

// An index or range bound; a negative literal (`-1`) counts from the end of the span.
int64_t bound(const ast::Expr& e, const Span& span, const Scope& scope, const SourceText& source) {
  const int64_t v = evaluate_integer(e, scope, source, "an index");
  return is_negative_literal(e) ? span.length + v : v;
}

void check_bound(int64_t v, const ast::Expr& e, bool is_end, const Span& span,
                 const SourceText& source) {
  if (v >= 0 && v <= span.length) return;
  if (!is_end) {
    source.fail(e.pos, fmt::format("range start {} is outside span {} of length {}", v, span.name,
                                   span.length));
  }
  source.fail(e.pos, fmt::format("range end {} is outside span {} of length {} "
                                 "(ranges are half-open: the end may be {})",
                                 v, span.name, span.length, span.length));
}

// [begin, end) of a range item of `span`; throws SpecError for bounds outside 0..len or reversed.
std::pair<int64_t, int64_t> range_of(const ast::Index& index, const Span& span, const Scope& scope,
                                     const SourceText& source) {
  const int64_t begin = index.begin ? bound(*index.begin, span, scope, source) : 0;
  const int64_t end = index.end ? bound(*index.end, span, scope, source) : span.length;
  if (index.begin) check_bound(begin, *index.begin, false, span, source);
  if (index.end) check_bound(end, *index.end, true, span, source);
  if (begin > end) {
    source.fail(index.pos,
                fmt::format("range {}[{}..{}] ends before it starts", span.name, begin, end));
  }
  return {begin, end};
}

// The place in `span` of single index `index`; throws SpecError outside the span.
int64_t index_of(const ast::Index& index, const Span& span, const Scope& scope,
                 const SourceText& source) {
  const int64_t raw = evaluate_integer(*index.begin, scope, source, "an index");
  const int64_t i = is_negative_literal(*index.begin) ? span.length + raw : raw;
  if (i < 0 || i >= span.length) {
    source.fail(index.begin->pos, fmt::format("index {}[{}] is outside span {} of length {}",
                                              span.name, raw, span.name, span.length));
  }
  return i;
}

[[noreturn]] void fail_before_first(const ast::SelectorItem& item, const Declarations& decls,
                                    const SourceText& source) {
  source.fail(item.pos, fmt::format("`before {}`: {} is the first token of the layout; "
                                    "expected a token with one before it",
                                    decls.layout.token_label(0), decls.layout.token_label(0)));
}

void append_item(const ast::SelectorItem& item, const Scope& scope, const Declarations& decls,
                 const SourceText& source, WorkBudget& budget, std::vector<int64_t>& out) {
  switch (item.kind) {
    case ast::SelectorKind::kGroup:
      for (const ast::SelectorItem& inner : item.items)
        append_item(inner, scope, decls, source, budget, out);
      return;
    case ast::SelectorKind::kBefore: {
      std::vector<int64_t> operand;
      append_item(item.items.at(0), scope, decls, source, budget, operand);
      budget.add_listed(operand.size(), item.pos);
      for (int64_t t : operand) {
        if (t == 0) fail_before_first(item, decls, source);
        out.push_back(t - 1);
      }
      return;
    }
    case ast::SelectorKind::kSpan:
      break;
  }
  const Span& span = find_span(item.span, item.pos, decls, source);
  if (!item.index) {
    budget.add_listed(static_cast<uint64_t>(span.length), item.pos);
    for (int64_t i = 0; i < span.length; ++i) out.push_back(span.offset + i);
    return;
  }
  const ast::Index& index = *item.index;
  if (!index.is_range) {
    const int64_t i = index_of(index, span, scope, source);
    budget.add_listed(1, item.pos);
    out.push_back(span.offset + i);
    return;
  }
  const auto [begin, end] = range_of(index, span, scope, source);
  budget.add_listed(static_cast<uint64_t>(end - begin), item.pos);
  for (int64_t i = begin; i < end; ++i) out.push_back(span.offset + i);
}

// The smallest token `item` names (nullopt when it names none), with every check append_item
// makes, without listing the tokens.
std::optional<int64_t> first_token(const ast::SelectorItem& item, const Scope& scope,
                                   const Declarations& decls, const SourceText& source) {
  switch (item.kind) {
    case ast::SelectorKind::kGroup: {
      std::optional<int64_t> lowest;
      for (const ast::SelectorItem& inner : item.items) {
        const std::optional<int64_t> t = first_token(inner, scope, decls, source);
        if (t && (!lowest || *t < *lowest)) lowest = t;
      }
      return lowest;
    }
    case ast::SelectorKind::kBefore: {
      const std::optional<int64_t> t = first_token(item.items.at(0), scope, decls, source);
      if (!t) return std::nullopt;
      if (*t == 0) fail_before_first(item, decls, source);
      return *t - 1;
    }
    case ast::SelectorKind::kSpan:
      break;
  }
  const Span& span = find_span(item.span, item.pos, decls, source);
  if (!item.index) return span.offset;
  if (!item.index->is_range) return span.offset + index_of(*item.index, span, scope, source);
  const auto [begin, end] = range_of(*item.index, span, scope, source);
  if (begin == end) return std::nullopt;
  return span.offset + begin;
}

}  // namespace

const Span& find_span(const std::string& name, ast::Pos pos, const Declarations& decls,
                      const SourceText& source) {
  const auto it = decls.span_index.find(name);
  if (it != decls.span_index.end()) return decls.layout.spans[it->second];
  std::string known;
  for (const Span& s : decls.layout.spans) known += (known.empty() ? "" : ", ") + s.name;
  source.fail(pos, fmt::format("unknown span {}; expected one of: {}", name, known));
}

int64_t range_bound(const ast::Expr& e, bool is_end, const Span& span, const Scope& scope,
                    const SourceText& source) {
  const int64_t v = bound(e, span, scope, source);
  check_bound(v, e, is_end, span, source);
  return v;
}

void check_selector_item(const ast::SelectorItem& item, const Scope& scope,
                         const Declarations& decls, const SourceText& source) {
  first_token(item, scope, decls, source);
}

std::vector<int64_t> resolve_selector(const ast::Selector& selector, const Scope& scope,
                                      const Declarations& decls, const SourceText& source,
                                      WorkBudget& budget) {
  std::vector<int64_t> out;
  for (const ast::SelectorItem& item : selector.items) {
    append_item(item, scope, decls, source, budget, out);
  }
  return out;
}

SpanOperand resolve_span_operand(const ast::Selector& selector, const Declarations& decls,
                                 const SourceText& source, const std::string& role) {
  SpanOperand operand;
  const ast::SelectorItem* item = selector.items.size() == 1 ? &selector.items[0] : nullptr;
  while (item != nullptr && item->kind == ast::SelectorKind::kBefore && operand.shift == 0) {
    operand.shift = 1;
    item = &item->items.at(0);
  }
  if (item == nullptr || item->kind != ast::SelectorKind::kSpan || item->index) {
    source.fail(selector.pos, fmt::format("expected {} to be a whole span name (like `x`{})", role,
                                          operand.shift ? "" : " or `before x`"));
  }
  operand.span = &find_span(item->span, item->pos, decls, source);
  if (operand.shift == 1 && operand.span->offset == 0) {
    source.fail(selector.pos, fmt::format("`before {}`: {} is the first token of the layout; "
                                          "expected a token with one before it",
                                          operand.span->name, decls.layout.token_label(0)));
  }
  return operand;
}

}  // namespace maskprior
