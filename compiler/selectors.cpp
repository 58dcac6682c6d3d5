#include "compiler/selectors.h"

#include <fmt/format.h>

#include <algorithm>

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

// The tokens of range item `index` of `span`; nullopt when a bound's value is unknown to the pass
// (the other bound is still checked). Throws SpecError for bounds outside 0..len or reversed.
std::optional<TokenRun> range_of(const ast::Index& index, const Span& span, const Binding& b) {
  const bool begin_known = !index.begin || b.known(*index.begin);
  const bool end_known = !index.end || b.known(*index.end);
  const int64_t begin =
      index.begin && begin_known ? bound(*index.begin, span, b.scope, b.source) : 0;
  const int64_t end = !index.end  ? span.length
                      : end_known ? bound(*index.end, span, b.scope, b.source)
                                  : 0;
  if (index.begin && begin_known) check_bound(begin, *index.begin, false, span, b.source);
  if (index.end && end_known) check_bound(end, *index.end, true, span, b.source);
  if (!begin_known || !end_known) return std::nullopt;
  if (begin > end) {
    b.source.fail(index.pos,
                  fmt::format("range {}[{}..{}] ends before it starts", span.name, begin, end));
  }
  return TokenRun{span.offset + begin, span.offset + end};
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

// Span names and the names in indices, in the order binding meets them.
void check_item_names(const ast::SelectorItem& item, const Binding& b) {
  if (item.kind != ast::SelectorKind::kSpan) {
    for (const ast::SelectorItem& inner : item.items) check_item_names(inner, b);
    return;
  }
  find_span(item.span, item.pos, b.decls, b.source);
  if (!item.index) return;
  if (item.index->begin) b.check_names(*item.index->begin);
  if (item.index->end) b.check_names(*item.index->end);
}

// Appends the runs of `item` to `out`; false when the pass does not know them all (every part
// it knows is checked all the same).
bool bind_item(const ast::SelectorItem& item, const Binding& b, BoundSelector& out) {
  switch (item.kind) {
    case ast::SelectorKind::kGroup: {
      bool known = true;
      for (const ast::SelectorItem& inner : item.items) known = bind_item(inner, b, out) && known;
      return known;
    }
    case ast::SelectorKind::kBefore: {
      BoundSelector operand;
      if (!bind_item(item.items.at(0), b, operand)) return false;
      b.count_listed(token_count(operand), item.pos);
      for (const TokenRun& run : operand) {
        if (run.begin == run.end) continue;
        if (run.begin == 0) fail_before_first(item, b.decls, b.source);
        out.push_back(TokenRun{run.begin - 1, run.end - 1});
      }
      return true;
    }
    case ast::SelectorKind::kSpan:
      break;
  }
  const Span& span = find_span(item.span, item.pos, b.decls, b.source);
  std::optional<TokenRun> run = TokenRun{span.offset, span.offset + span.length};
  if (item.index && !item.index->is_range) {
    if (!b.known(*item.index->begin)) return false;
    const int64_t i = span.offset + index_of(*item.index, span, b.scope, b.source);
    run = TokenRun{i, i + 1};
  } else if (item.index) {
    run = range_of(*item.index, span, b);
    if (!run) return false;
  }
  b.count_listed(static_cast<uint64_t>(run->end - run->begin), item.pos);
  out.push_back(*run);
  return true;
}

}  // namespace

std::optional<BoundSelector> bind_selector(const ast::Selector& selector, const Binding& binding) {
  BoundSelector out;
  bool known = true;
  for (const ast::SelectorItem& item : selector.items) {
    if (binding.resolving()) check_item_names(item, binding);
    known = bind_item(item, binding, out) && known;
  }
  if (!known) return std::nullopt;
  return out;
}

uint64_t token_count(const BoundSelector& tokens) {
  uint64_t count = 0;
  for (const TokenRun& run : tokens) count += static_cast<uint64_t>(run.end - run.begin);
  return count;
}

std::vector<int64_t> list_tokens(const BoundSelector& tokens) {
  std::vector<int64_t> out;
  out.reserve(token_count(tokens));
  for (const TokenRun& run : tokens) {
    for (int64_t t = run.begin; t < run.end; ++t) out.push_back(t);
  }
  return out;
}

std::optional<int64_t> repeated_token(const BoundSelector& tokens) {
  BoundSelector sorted;
  for (const TokenRun& run : tokens) {
    if (run.begin < run.end) sorted.push_back(run);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const TokenRun& x, const TokenRun& y) { return x.begin < y.begin; });
  // Scanning by start, the first run that starts inside an earlier one starts at the smallest
  // repeated token: any repeated token t lies in a later-starting run that starts at or before t.
  int64_t reach = 0;  // the end of the runs so far
  for (const TokenRun& run : sorted) {
    if (run.begin < reach) return run.begin;
    reach = std::max(reach, run.end);
  }
  return std::nullopt;
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
