#include "compiler/walk.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <optional>

namespace maskprior {
namespace {

bool is_head_block(const ast::Statement& st) {
  return st.kind == ast::StatementKind::kHeadBlock || st.kind == ast::StatementKind::kHeadsBlock;
}

// The layers and heads the enclosing blocks select: resolving, unknown (nullopt) once one of them
// depends on a loop variable.
struct Planes {
  std::optional<IndexRange> layers;
  std::optional<IndexRange> heads;
  const ast::Statement* restricting_block = nullptr;  // innermost head/layer block, if any
};

struct Walk {
  Binding& b;
  const std::function<void(const LoweredRule&)>& emit;
};

// Throws SpecError for a rule that cannot stand where it is: `hard` inside the head/layer block
// `restricting_block` (null outside any), `open distance` / `close distance`.
void check_rule_placement(const ast::Statement& rule, const ast::Statement* restricting_block,
                          const SourceText& source) {
  if (rule.action == ast::RuleAction::kHard && restricting_block != nullptr) {
    source.fail(rule.pos, fmt::format("`hard` applies to every layer and head (the hard mask is "
                                      "one [N, N] matrix); expected it outside the head/layer "
                                      "block of line {}",
                                      restricting_block->pos.line));
  }
  if (rule.shape.kind == ast::ShapeKind::kDistance && rule.action != ast::RuleAction::kSet) {
    source.fail(rule.shape.pos,
                "`distance` gives each cell its own value; expected "
                "`set distance X = EXPR(d)`");
  }
}

// Throws SpecError when `for` statement `st` names its variable like a name of `scope`.
void check_loop_variable(const ast::Statement& st, const Scope& scope, const SourceText& source) {
  if (scope.count(st.name) != 0) {
    source.fail(st.name_pos, fmt::format("loop variable {} hides a parameter or outer loop "
                                         "variable of the same name",
                                         st.name));
  }
}

// The half-open range of `for` statement `st`; throws SpecError for a reversed range.
IndexRange loop_range(const ast::Statement& st, const Scope& scope, const SourceText& source) {
  const int64_t begin = evaluate_integer(*st.value, scope, source, "a loop bound");
  const int64_t end = evaluate_integer(*st.value2, scope, source, "a loop bound");
  if (end < begin) {
    source.fail(st.value2->pos, fmt::format("loop range {}..{} ends before it starts", begin, end));
  }
  return IndexRange{begin, end};
}

// [begin, end) from a block's expressions, within the declared number of layers or heads;
// throws SpecError outside the declared count or for an empty range.
IndexRange block_range(const ast::Statement& st, const Scope& scope, const Declarations& decls,
                       const SourceText& source) {
  const bool is_range =
      st.kind == ast::StatementKind::kHeadsBlock || st.kind == ast::StatementKind::kLayersBlock;
  const char* what = is_head_block(st) ? "head" : "layer";
  const int64_t count = is_head_block(st) ? decls.heads : decls.layers;
  const std::string index_what = std::string("a ") + what + " index";
  const int64_t begin = evaluate_integer(*st.value, scope, source, index_what);
  const int64_t end = is_range ? evaluate_integer(*st.value2, scope, source, index_what)
                               : (begin < count ? begin + 1 : begin);
  const ast::Pos end_pos = is_range ? st.value2->pos : st.value->pos;
  if (begin < 0 || begin >= count) {
    source.fail(st.value->pos, fmt::format("{} {} is outside 0..{} (the spec declares {} {}{})",
                                           what, begin, count, count, what, count == 1 ? "" : "s"));
  }
  if (end > count) {
    source.fail(end_pos,
                fmt::format("{} range end {} is past the {} declared {}s", what, end, count, what));
  }
  if (end <= begin) {
    source.fail(end_pos, fmt::format("{} range {}..{} is empty", what, begin, end));
  }
  return IndexRange{begin, end};
}

// `inner` within the enclosing block's `outer`; throws SpecError at block `st` if disjoint.
IndexRange intersect_blocks(IndexRange outer, IndexRange inner, const ast::Statement& st,
                            const SourceText& source) {
  const char* what = is_head_block(st) ? "head" : "layer";
  const IndexRange r{std::max(outer.begin, inner.begin), std::min(outer.end, inner.end)};
  if (r.end <= r.begin) {
    source.fail(st.pos, fmt::format("this {} block selects {}s {}..{}, none of which is in "
                                    "the enclosing block's {}..{}",
                                    what, what, inner.begin, inner.end, outer.begin, outer.end));
  }
  return r;
}

// The value a rule writes. Resolving: only the names of a value written out are checked.
float rule_value(const ast::Statement& st, const Binding& b) {
  const bool written = st.value && st.shape.kind != ast::ShapeKind::kDistance;
  if (b.resolving()) {
    if (written) b.check_names(*st.value);
    return 0.0f;
  }
  double v = 0.0;
  if (written) {
    v = evaluate(*st.value, b.scope, b.source).real;
  } else if (st.action == ast::RuleAction::kOpen) {
    v = b.decls.open_value;
  } else if (st.action == ast::RuleAction::kClose) {
    v = b.decls.close_value;
  }
  if (std::fabs(v) > FLT_MAX) {
    b.source.fail(st.value ? st.value->pos : st.pos,
                  fmt::format("value {} does not fit in float32", v));
  }
  return static_cast<float>(v);
}

void walk_rule(const ast::Statement& st, const Planes& planes, Walk& w) {
  Binding& b = w.b;
  check_rule_placement(st, planes.restricting_block, b.source);
  if (b.budget != nullptr) b.budget->add_application(st.pos);
  const float value = rule_value(st, b);
  const ast::Expr* distance_value =
      st.shape.kind == ast::ShapeKind::kDistance ? st.value.get() : nullptr;
  const BoundShape shape = bind_shape(st.shape, distance_value, b);
  if (b.resolving()) return;
  LoweredRule rule;
  rule.statement = &st;
  rule.action = st.action;
  rule.line = st.pos.line;
  rule.layers = *planes.layers;
  rule.heads = *planes.heads;
  rule.value = value;
  rule.cells = shape_cells(shape, *b.budget);
  // the cells it writes, in every plane it writes (the hard mask is one plane)
  const uint64_t plane_count = st.action == ast::RuleAction::kHard
                                   ? 1
                                   : static_cast<uint64_t>((rule.layers.end - rule.layers.begin) *
                                                           (rule.heads.end - rule.heads.begin));
  b.budget->add_written(saturating_product(rule.cells.cell_count, plane_count), st.pos);
  w.emit(rule);
}

void walk_statements(const std::vector<ast::Statement>& body, const Planes& planes, Walk& w);

void walk_loop(const ast::Statement& st, const Planes& planes, Walk& w) {
  Binding& b = w.b;
  check_loop_variable(st, b.scope, b.source);
  b.check_names(*st.value);
  b.check_names(*st.value2);
  std::optional<IndexRange> range;
  if (b.known(*st.value) && b.known(*st.value2)) range = loop_range(st, b.scope, b.source);
  if (b.resolving()) {
    // the body once, also when the loop runs zero times; the variable has a placeholder value
    b.scope.emplace(st.name, Value::of_integer(0));
    b.unknown.insert(st.name);
    walk_statements(st.body, planes, w);
    b.unknown.erase(st.name);
    b.scope.erase(st.name);
    return;
  }
  // The whole range is counted before the first iteration, so a runaway loop (even with an
  // empty body) is refused at once.
  b.budget->add_iterations(static_cast<uint64_t>(range->end) - static_cast<uint64_t>(range->begin),
                           st.pos);
  Value& variable = b.scope.emplace(st.name, Value{}).first->second;
  for (int64_t i = range->begin; i < range->end; ++i) {
    variable = Value::of_integer(i);
    walk_statements(st.body, planes, w);
  }
  b.scope.erase(st.name);
}

void walk_block(const ast::Statement& st, const Planes& planes, Walk& w) {
  Binding& b = w.b;
  b.check_names(*st.value);
  if (st.value2) b.check_names(*st.value2);
  Planes inner = planes;
  inner.restricting_block = &st;
  std::optional<IndexRange>& selected = is_head_block(st) ? inner.heads : inner.layers;
  if (b.known(*st.value) && (!st.value2 || b.known(*st.value2))) {
    const IndexRange range = block_range(st, b.scope, b.decls, b.source);
    if (selected) selected = intersect_blocks(*selected, range, st, b.source);
  } else {
    selected.reset();
  }
  walk_statements(st.body, inner, w);
}

void walk_statement(const ast::Statement& st, const Planes& planes, Walk& w) {
  switch (st.kind) {
    case ast::StatementKind::kRule:
      walk_rule(st, planes, w);
      return;
    case ast::StatementKind::kFor:
      walk_loop(st, planes, w);
      return;
    case ast::StatementKind::kHeadBlock:
    case ast::StatementKind::kHeadsBlock:
    case ast::StatementKind::kLayerBlock:
    case ast::StatementKind::kLayersBlock:
      walk_block(st, planes, w);
      return;
    default:
      throw InternalError("internal error: declaration among rules at line " +
                          std::to_string(st.pos.line));
  }
}

void walk_statements(const std::vector<ast::Statement>& body, const Planes& planes, Walk& w) {
  for (const ast::Statement& st : body) walk_statement(st, planes, w);
}

}  // namespace

void walk_rules(const ast::Spec& spec, Binding& binding,
                const std::function<void(const LoweredRule&)>& emit) {
  Walk w{binding, emit};
  Planes planes;
  planes.layers = IndexRange{0, binding.decls.layers};
  planes.heads = IndexRange{0, binding.decls.heads};
  for (size_t i = binding.decls.first_rule; i < spec.statements.size(); ++i) {
    walk_statement(spec.statements[i], planes, w);
  }
}

}  // namespace maskprior
