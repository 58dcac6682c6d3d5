#include "compiler/expand.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace maskprior {
namespace {

bool is_head_block(const ast::Statement& st) {
  return st.kind == ast::StatementKind::kHeadBlock || st.kind == ast::StatementKind::kHeadsBlock;
}

struct Context {
  const Declarations& decls;
  const SourceText& source;
  const std::function<void(const LoweredRule&)>& emit;
  WorkBudget budget;
  // Parameters and the enclosing loop variables: one map for every level (a loop adds its
  // variable while its body runs), so nesting costs no copies.
  Scope scope;
};

struct BlockState {
  IndexRange layers;
  IndexRange heads;
  const ast::Statement* restricting_block = nullptr;  // innermost head/layer block, if any
};

float rule_value(const ast::Statement& st, const Context& ctx) {
  double v = 0.0;
  if (st.value && st.shape.kind != ast::ShapeKind::kDistance) {
    v = evaluate(*st.value, ctx.scope, ctx.source).real;
  } else if (st.action == ast::RuleAction::kOpen) {
    v = ctx.decls.open_value;
  } else if (st.action == ast::RuleAction::kClose) {
    v = ctx.decls.close_value;
  }
  if (std::fabs(v) > FLT_MAX) {
    ctx.source.fail(st.value ? st.value->pos : st.pos,
                    fmt::format("value {} does not fit in float32", v));
  }
  return static_cast<float>(v);
}

void run_rule(const ast::Statement& st, const BlockState& state, Context& ctx) {
  check_rule_placement(st, state.restricting_block, ctx.source);
  ctx.budget.add_application(st.pos);
  LoweredRule rule;
  rule.statement = &st;
  rule.action = st.action;
  rule.line = st.pos.line;
  rule.layers = state.layers;
  rule.heads = state.heads;
  rule.value = rule_value(st, ctx);
  const ast::Expr* distance_value =
      st.shape.kind == ast::ShapeKind::kDistance ? st.value.get() : nullptr;
  rule.cells = shape_cells(st.shape, distance_value, ctx.scope, ctx.decls, ctx.source, ctx.budget);
  // the cells it writes, in every plane it writes (the hard mask is one plane)
  const uint64_t planes = st.action == ast::RuleAction::kHard
                              ? 1
                              : static_cast<uint64_t>((rule.layers.end - rule.layers.begin) *
                                                      (rule.heads.end - rule.heads.begin));
  ctx.budget.add_written(saturating_product(rule.cells.cell_count, planes), st.pos);
  ctx.emit(rule);
}

void run_statements(const std::vector<ast::Statement>& body, const BlockState& state, Context& ctx);

// The whole range is counted before the first iteration, so a runaway loop (even with an empty
// body) is refused at once.
void run_loop(const ast::Statement& st, const BlockState& state, Context& ctx) {
  check_loop_variable(st, ctx.scope, ctx.source);
  const IndexRange range = loop_range(st, ctx.scope, ctx.source);
  ctx.budget.add_iterations(static_cast<uint64_t>(range.end) - static_cast<uint64_t>(range.begin),
                            st.pos);
  Value& variable = ctx.scope.emplace(st.name, Value{}).first->second;
  for (int64_t i = range.begin; i < range.end; ++i) {
    variable = Value::of_integer(i);
    run_statements(st.body, state, ctx);
  }
  ctx.scope.erase(st.name);
}

void run_statement(const ast::Statement& st, const BlockState& state, Context& ctx) {
  switch (st.kind) {
    case ast::StatementKind::kRule:
      run_rule(st, state, ctx);
      return;
    case ast::StatementKind::kFor:
      run_loop(st, state, ctx);
      return;
    case ast::StatementKind::kHeadBlock:
    case ast::StatementKind::kHeadsBlock:
    case ast::StatementKind::kLayerBlock:
    case ast::StatementKind::kLayersBlock: {
      BlockState inner = state;
      IndexRange& planes = is_head_block(st) ? inner.heads : inner.layers;
      planes = intersect_blocks(planes, block_range(st, ctx.scope, ctx.decls, ctx.source), st,
                                ctx.source);
      inner.restricting_block = &st;
      run_statements(st.body, inner, ctx);
      return;
    }
    default:
      throw InternalError("internal error: declaration among rules at line " +
                          std::to_string(st.pos.line));
  }
}

void run_statements(const std::vector<ast::Statement>& body, const BlockState& state,
                    Context& ctx) {
  for (const ast::Statement& st : body) run_statement(st, state, ctx);
}

}  // namespace

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

void check_loop_variable(const ast::Statement& st, const Scope& scope, const SourceText& source) {
  if (scope.count(st.name) != 0) {
    source.fail(st.name_pos, fmt::format("loop variable {} hides a parameter or outer loop "
                                         "variable of the same name",
                                         st.name));
  }
}

IndexRange loop_range(const ast::Statement& st, const Scope& scope, const SourceText& source) {
  const int64_t begin = evaluate_integer(*st.value, scope, source, "a loop bound");
  const int64_t end = evaluate_integer(*st.value2, scope, source, "a loop bound");
  if (end < begin) {
    source.fail(st.value2->pos, fmt::format("loop range {}..{} ends before it starts", begin, end));
  }
  return IndexRange{begin, end};
}

// [begin, end) from a block's expressions, within the declared number of layers or heads.
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

void expand_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source,
                  uint64_t max_bytes, const std::function<void(const LoweredRule&)>& emit) {
  Context ctx{decls, source, emit, WorkBudget(max_bytes, source), decls.params};
  BlockState state;
  state.layers = IndexRange{0, decls.layers};
  state.heads = IndexRange{0, decls.heads};
  for (size_t i = decls.first_rule; i < spec.statements.size(); ++i) {
    run_statement(spec.statements[i], state, ctx);
  }
}

}  // namespace maskprior
