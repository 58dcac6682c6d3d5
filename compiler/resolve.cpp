// What is checked here, in file order, for every statement after the declarations, including the
// bodies of loops that run zero times:
// - names: every name in an expression is a parameter, the variable of an enclosing loop, or `d`
//   in the value of `set distance`; every call names a function with the right number of
//   arguments; every selector names a declared span;
// - placement: `hard` outside head/layer blocks, `distance` only with `set`, loop variables that
//   hide a parameter or an outer loop variable;
// - shape operands: the whole-span operands of align/product/local/shift, their digits and grids,
//   local's options;
// - values that do not depend on a loop variable: selector items (indices, range bounds, `before`
//   the first token), loop ranges, head/layer ranges (and their nesting when every enclosing
//   block is loop-independent).
// Values that depend on a loop variable are checked by expansion, for each iteration that runs.
#include "compiler/resolve.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include "compiler/expand.h"
#include "compiler/selectors.h"
#include "compiler/shapes.h"

namespace maskprior {
namespace {

// The pass's view of one point in the rules: the names in scope and the enclosing blocks.
// The names are shared by every level (a loop adds its variable while its body is checked), so
// nesting costs no copies.
struct StaticScope {
  Scope* names = nullptr;  // parameters and enclosing loop variables (placeholder values)
  std::set<std::string>* loop_vars = nullptr;  // the enclosing loop variables
  // The layers and heads the enclosing blocks select; unknown (nullopt) once one of them depends
  // on a loop variable.
  std::optional<IndexRange> layers;
  std::optional<IndexRange> heads;
  const ast::Statement* restricting_block = nullptr;  // innermost head/layer block, if any
};

struct Context {
  const Declarations& decls;
  const SourceText& source;
  std::map<std::string, int> loop_lines;  // each loop variable of the spec: its first loop's line
};

void collect_loop_lines(const std::vector<ast::Statement>& body, std::map<std::string, int>& out) {
  for (const ast::Statement& st : body) {
    if (st.kind == ast::StatementKind::kFor) out.emplace(st.name, st.pos.line);
    collect_loop_lines(st.body, out);
  }
}

[[noreturn]] void fail_unknown_name(const ast::Expr& e, const Scope& names, const Context& ctx) {
  std::string message = unknown_name_message(e.name, names);
  const auto loop = ctx.loop_lines.find(e.name);
  if (loop != ctx.loop_lines.end()) {
    message += fmt::format("; {} is the variable of the loop at line {} and exists only inside it",
                           e.name, loop->second);
  } else if (e.name == "d") {
    message += "; d exists only in the value of `set distance`";
  }
  ctx.source.fail(e.pos, message);
}

// Every name and call in `e`, in evaluation order.
void check_names(const ast::Expr& e, const Scope& names, const Context& ctx) {
  for (const ast::ExprPtr& arg : e.args) check_names(*arg, names, ctx);
  if (e.kind == ast::ExprKind::kName && names.count(e.name) == 0) fail_unknown_name(e, names, ctx);
  if (e.kind == ast::ExprKind::kCall) check_call(e, ctx.source);
}

bool uses_loop_variable(const ast::Expr& e, const StaticScope& scope) {
  if (e.kind == ast::ExprKind::kName && scope.loop_vars->count(e.name) != 0) return true;
  for (const ast::ExprPtr& arg : e.args) {
    if (uses_loop_variable(*arg, scope)) return true;
  }
  return false;
}

bool uses_loop_variable(const ast::SelectorItem& item, const StaticScope& scope) {
  if (item.index) {
    const ast::Index& index = *item.index;
    if (index.begin && uses_loop_variable(*index.begin, scope)) return true;
    if (index.end && uses_loop_variable(*index.end, scope)) return true;
  }
  for (const ast::SelectorItem& inner : item.items) {
    if (uses_loop_variable(inner, scope)) return true;
  }
  return false;
}

// Span names and the names in indices, in the order expansion meets them.
void check_item_names(const ast::SelectorItem& item, const StaticScope& scope, const Context& ctx) {
  if (item.kind != ast::SelectorKind::kSpan) {
    for (const ast::SelectorItem& inner : item.items) check_item_names(inner, scope, ctx);
    return;
  }
  find_span(item.span, item.pos, ctx.decls, ctx.source);
  if (!item.index) return;
  if (item.index->begin) check_names(*item.index->begin, *scope.names, ctx);
  if (item.index->end) check_names(*item.index->end, *scope.names, ctx);
}

// A loop-independent item is resolved as expansion would resolve it; of a loop-dependent one,
// the loop-independent parts: its constant items and range bounds.
void check_item_values(const ast::SelectorItem& item, const StaticScope& scope,
                       const Context& ctx) {
  if (!uses_loop_variable(item, scope)) {
    check_selector_item(item, ctx.decls.params, ctx.decls, ctx.source);
    return;
  }
  if (item.kind != ast::SelectorKind::kSpan) {
    for (const ast::SelectorItem& inner : item.items) check_item_values(inner, scope, ctx);
    return;
  }
  const ast::Index& index = *item.index;  // the item uses a loop variable, so it has an index
  if (!index.is_range) return;
  const Span& span = find_span(item.span, item.pos, ctx.decls, ctx.source);
  if (index.begin && !uses_loop_variable(*index.begin, scope)) {
    range_bound(*index.begin, false, span, ctx.decls.params, ctx.source);
  }
  if (index.end && !uses_loop_variable(*index.end, scope)) {
    range_bound(*index.end, true, span, ctx.decls.params, ctx.source);
  }
}

void check_selector(const ast::Selector& selector, const StaticScope& scope, const Context& ctx) {
  for (const ast::SelectorItem& item : selector.items) {
    check_item_names(item, scope, ctx);
    check_item_values(item, scope, ctx);
  }
}

void check_shape(const ast::Shape& shape, const StaticScope& scope, const Context& ctx) {
  check_shape_operands(shape, ctx.decls, ctx.source);
  switch (shape.kind) {
    case ast::ShapeKind::kDirected:
    case ast::ShapeKind::kPair:
      check_selector(shape.a, scope, ctx);
      check_selector(shape.b, scope, ctx);
      break;
    case ast::ShapeKind::kClique:
    case ast::ShapeKind::kCycle:
    case ast::ShapeKind::kDistance:
      check_selector(shape.a, scope, ctx);
      break;
    case ast::ShapeKind::kDiagonal:
    case ast::ShapeKind::kCausal:
      if (shape.has_a) check_selector(shape.a, scope, ctx);
      break;
    case ast::ShapeKind::kAlign:
    case ast::ShapeKind::kProduct:
    case ast::ShapeKind::kLocal:
    case ast::ShapeKind::kShift:
      break;  // whole-span operands, checked by check_shape_operands
  }
  for (const ast::ExprPtr* e : {&shape.size, &shape.dilation, &shape.dy, &shape.dx}) {
    if (*e) check_names(**e, *scope.names, ctx);
  }
}

void check_rule(const ast::Statement& st, const StaticScope& scope, const Context& ctx) {
  check_rule_placement(st, scope.restricting_block, ctx.source);
  const bool distance = st.shape.kind == ast::ShapeKind::kDistance;
  if (st.value && !distance) check_names(*st.value, *scope.names, ctx);
  check_shape(st.shape, scope, ctx);
  if (st.value && distance) {
    // `d` is bound in the value (a parameter or loop variable `d` is shadowed, still a name)
    const bool add_d = scope.names->emplace("d", Value::of_integer(0)).second;
    check_names(*st.value, *scope.names, ctx);
    if (add_d) scope.names->erase("d");
  }
}

void check_statements(const std::vector<ast::Statement>& body, const StaticScope& scope,
                      const Context& ctx);

void check_for(const ast::Statement& st, const StaticScope& scope, const Context& ctx) {
  check_loop_variable(st, *scope.names, ctx.source);
  check_names(*st.value, *scope.names, ctx);
  check_names(*st.value2, *scope.names, ctx);
  if (!uses_loop_variable(*st.value, scope) && !uses_loop_variable(*st.value2, scope)) {
    loop_range(st, ctx.decls.params, ctx.source);
  }
  // a placeholder value: the pass evaluates no loop value
  scope.names->emplace(st.name, Value::of_integer(0));
  scope.loop_vars->insert(st.name);
  check_statements(st.body, scope, ctx);
  scope.names->erase(st.name);
  scope.loop_vars->erase(st.name);
}

void check_block(const ast::Statement& st, const StaticScope& scope, const Context& ctx) {
  const bool is_head =
      st.kind == ast::StatementKind::kHeadBlock || st.kind == ast::StatementKind::kHeadsBlock;
  check_names(*st.value, *scope.names, ctx);
  if (st.value2) check_names(*st.value2, *scope.names, ctx);
  StaticScope inner = scope;
  inner.restricting_block = &st;
  std::optional<IndexRange>& planes = is_head ? inner.heads : inner.layers;
  const bool constant = !uses_loop_variable(*st.value, scope) &&
                        !(st.value2 && uses_loop_variable(*st.value2, scope));
  if (constant) {
    const IndexRange range = block_range(st, ctx.decls.params, ctx.decls, ctx.source);
    if (planes) planes = intersect_blocks(*planes, range, st, ctx.source);
  } else {
    planes.reset();
  }
  check_statements(st.body, inner, ctx);
}

void check_statement(const ast::Statement& st, const StaticScope& scope, const Context& ctx) {
  switch (st.kind) {
    case ast::StatementKind::kRule:
      check_rule(st, scope, ctx);
      return;
    case ast::StatementKind::kFor:
      check_for(st, scope, ctx);
      return;
    case ast::StatementKind::kHeadBlock:
    case ast::StatementKind::kHeadsBlock:
    case ast::StatementKind::kLayerBlock:
    case ast::StatementKind::kLayersBlock:
      check_block(st, scope, ctx);
      return;
    default:
      throw InternalError("internal error: declaration among rules at line " +
                          std::to_string(st.pos.line));
  }
}

void check_statements(const std::vector<ast::Statement>& body, const StaticScope& scope,
                      const Context& ctx) {
  for (const ast::Statement& st : body) check_statement(st, scope, ctx);
}

}  // namespace

void resolve_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source) {
  Context ctx{decls, source, {}};
  collect_loop_lines(spec.statements, ctx.loop_lines);
  Scope names = decls.params;
  std::set<std::string> loop_vars;
  StaticScope scope;
  scope.names = &names;
  scope.loop_vars = &loop_vars;
  scope.layers = IndexRange{0, decls.layers};
  scope.heads = IndexRange{0, decls.heads};
  for (size_t i = decls.first_rule; i < spec.statements.size(); ++i) {
    check_statement(spec.statements[i], scope, ctx);
  }
}

}  // namespace maskprior
