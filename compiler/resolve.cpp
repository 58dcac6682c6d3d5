// The resolve pass is the rule walk (compiler/walk.cpp) with every loop variable's value unknown.
// What it checks, in file order, for every statement after the declarations, including the
// bodies of loops that run zero times:
// - names: every name in an expression is a parameter, the variable of an enclosing loop, or `d`
//   in the value of `set distance`; every call names a function with the right number of
//   arguments; every selector names a declared span (Binding::check_names, bind_selector);
// - placement: `hard` outside head/layer blocks, `distance` only with `set`, loop variables that
//   hide a parameter or an outer loop variable;
// - shape operands: the whole-span operands of align/product/local/shift, their digits and grids,
//   local's options (bind_shape);
// - values that do not depend on a loop variable: selector items (indices, range bounds, `before`
//   the first token), loop ranges, head/layer ranges (and their nesting when every enclosing
//   block is loop-independent).
// Values that depend on a loop variable, rule values and shape sizes are checked by expansion,
// for each iteration that runs.
#include "compiler/resolve.h"

#include <map>
#include <string>
#include <vector>

#include "compiler/binding.h"
#include "compiler/walk.h"

namespace maskprior {
namespace {

void collect_loop_lines(const std::vector<ast::Statement>& body, std::map<std::string, int>& out) {
  for (const ast::Statement& st : body) {
    if (st.kind == ast::StatementKind::kFor) out.emplace(st.name, st.pos.line);
    collect_loop_lines(st.body, out);
  }
}

}  // namespace

void resolve_rules(const ast::Spec& spec, const Declarations& decls, const SourceText& source) {
  Binding binding(Pass::kResolve, decls, source);
  collect_loop_lines(spec.statements, binding.loop_lines);
  walk_rules(spec, binding, [](const LoweredRule&) {});
}

}  // namespace maskprior
