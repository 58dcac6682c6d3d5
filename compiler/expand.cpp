#include "compiler/expand.h"

#include <fmt/format.h>

#include <cfloat>
#include <cmath>

namespace maskprior {
namespace {

// Guards against loops that would run for hours: rule applications after unrolling.
constexpr int64_t kMaxApplications = 1'000'000;

struct Context {
  const Declarations& decls;
  const SourceText& source;
  const std::function<void(const LoweredRule&)>& emit;
  int64_t applications = 0;
};

struct BlockState {
  Scope scope;
  IndexRange layers;
  IndexRange heads;
  const ast::Statement* restricting_block = nullptr;  // innermost head/layer block, if any
};

float rule_value(const ast::Statement& st, const BlockState& state, const Context& ctx) {
  double v = 0.0;
  if (st.value && st.shape.kind != ast::ShapeKind::kDistance) {
    v = evaluate(*st.value, state.scope, ctx.source).real;
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
  if (st.action == ast::RuleAction::kHard && state.restricting_block != nullptr) {
    ctx.source.fail(st.pos, fmt::format("`hard` applies to every layer and head (the hard mask is "
                                        "one [N, N] matrix); expected it outside the head/layer "
                                        "block of line {}",
                                        state.restricting_block->pos.line));
  }
  if (++ctx.applications > kMaxApplications) {
    ctx.source.fail(st.pos, fmt::format("more than {} rule applications after unrolling loops",
                                        kMaxApplications));
  }
  if (st.shape.kind == ast::ShapeKind::kDistance && st.action != ast::RuleAction::kSet) {
    ctx.source.fail(st.shape.pos,
                    "`distance` gives each cell its own value; expected "
                    "`set distance X = EXPR(d)`");
  }
  LoweredRule rule;
  rule.statement = &st;
  rule.action = st.action;
  rule.line = st.pos.line;
  rule.layers = state.layers;
  rule.heads = state.heads;
  rule.value = rule_value(st, state, ctx);
  const ast::Expr* distance_value =
      st.shape.kind == ast::ShapeKind::kDistance ? st.value.get() : nullptr;
  rule.cells = shape_cells(st.shape, distance_value, state.scope, ctx.decls, ctx.source);
  ctx.emit(rule);
}

// [begin, end) from a block's expressions; `what` is "layer"/"head", `count` the declared number.
IndexRange block_range(const ast::Statement& st, bool is_range, const BlockState& state,
                       const Context& ctx, const char* what, int64_t count) {
  const std::string index_what = std::string("a ") + what + " index";
  const int64_t begin = evaluate_integer(*st.value, state.scope, ctx.source, index_what);
  const int64_t end =
      is_range ? evaluate_integer(*st.value2, state.scope, ctx.source, index_what) : begin + 1;
  const ast::Pos end_pos = is_range ? st.value2->pos : st.value->pos;
  if (begin < 0 || begin >= count) {
    ctx.source.fail(st.value->pos,
                    fmt::format("{} {} is outside 0..{} (the spec declares {} {}{})", what, begin,
                                count, count, what, count == 1 ? "" : "s"));
  }
  if (end > count) {
    ctx.source.fail(end_pos, fmt::format("{} range end {} is past the {} declared {}s", what, end,
                                         count, what));
  }
  if (end <= begin) {
    ctx.source.fail(end_pos, fmt::format("{} range {}..{} is empty", what, begin, end));
  }
  return IndexRange{begin, end};
}

IndexRange intersect(IndexRange outer, IndexRange inner, const ast::Statement& st,
                     const Context& ctx, const char* what) {
  IndexRange r{std::max(outer.begin, inner.begin), std::min(outer.end, inner.end)};
  if (r.end <= r.begin) {
    ctx.source.fail(st.pos,
                    fmt::format("this {} block selects {}s {}..{}, none of which is in "
                                "the enclosing block's {}..{}",
                                what, what, inner.begin, inner.end, outer.begin, outer.end));
  }
  return r;
}

void run_statements(const std::vector<ast::Statement>& body, const BlockState& state, Context& ctx);

void run_statement(const ast::Statement& st, const BlockState& state, Context& ctx) {
  switch (st.kind) {
    case ast::StatementKind::kRule:
      run_rule(st, state, ctx);
      return;
    case ast::StatementKind::kFor: {
      if (state.scope.count(st.name) != 0) {
        ctx.source.fail(st.name_pos, fmt::format("loop variable {} hides a parameter or outer "
                                                 "loop variable of the same name",
                                                 st.name));
      }
      const int64_t begin = evaluate_integer(*st.value, state.scope, ctx.source, "a loop bound");
      const int64_t end = evaluate_integer(*st.value2, state.scope, ctx.source, "a loop bound");
      if (end < begin) {
        ctx.source.fail(st.value2->pos,
                        fmt::format("loop range {}..{} ends before it starts", begin, end));
      }
      BlockState inner = state;
      for (int64_t i = begin; i < end; ++i) {
        inner.scope[st.name] = Value::of_integer(i);
        run_statements(st.body, inner, ctx);
      }
      return;
    }
    case ast::StatementKind::kHeadBlock:
    case ast::StatementKind::kHeadsBlock: {
      const bool is_range = st.kind == ast::StatementKind::kHeadsBlock;
      BlockState inner = state;
      inner.heads =
          intersect(state.heads, block_range(st, is_range, state, ctx, "head", ctx.decls.heads), st,
                    ctx, "head");
      inner.restricting_block = &st;
      run_statements(st.body, inner, ctx);
      return;
    }
    case ast::StatementKind::kLayerBlock:
    case ast::StatementKind::kLayersBlock: {
      const bool is_range = st.kind == ast::StatementKind::kLayersBlock;
      BlockState inner = state;
      inner.layers =
          intersect(state.layers, block_range(st, is_range, state, ctx, "layer", ctx.decls.layers),
                    st, ctx, "layer");
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

void expand_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source,
                  const std::function<void(const LoweredRule&)>& emit) {
  Context ctx{decls, source, emit};
  BlockState state;
  state.scope = decls.params;
  state.layers = IndexRange{0, decls.layers};
  state.heads = IndexRange{0, decls.heads};
  for (size_t i = decls.first_rule; i < spec.statements.size(); ++i) {
    run_statement(spec.statements[i], state, ctx);
  }
}

}  // namespace maskprior
