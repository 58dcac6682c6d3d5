// What the two rule passes share while they walk the rules (compiler/walk.h): the names in scope
// at one point, which of them have a value, and what each pass does with an expression. The
// resolve pass (compiler/resolve.h) walks every rule once, loop variables without a value, and
// checks names, spans and what does not depend on a loop variable; the expand pass
// (compiler/expand.h) walks the unrolled rules, every value known, and counts their work.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "compiler/ast.h"
#include "compiler/declarations.h"
#include "compiler/eval.h"
#include "compiler/source.h"
#include "compiler/work.h"

namespace maskprior {

enum class Pass { kResolve, kExpand };

/// One pass's view of the rules at the point it has reached.
struct Binding {
  Binding(Pass the_pass, const Declarations& the_decls, const SourceText& the_source);

  Pass pass;
  const Declarations& decls;
  const SourceText& source;
  /// Parameters and the enclosing loop variables (and `d` in the value of `set distance`): one
  /// map for every level (a loop adds its variable while its body is walked), so nesting costs
  /// no copies. While resolving, a loop variable holds a placeholder.
  Scope scope;
  /// Resolving: the enclosing loop variables, whose values the pass does not know.
  std::set<std::string> unknown;
  /// Resolving: each loop variable of the spec and its first loop's line, for messages.
  std::map<std::string, int> loop_lines;
  /// Expanding: counts the work of the rules; null while resolving.
  WorkBudget* budget = nullptr;

  bool resolving() const { return pass == Pass::kResolve; }

  /// Resolving: throws SpecError at the first unknown name or bad call in `e`, in evaluation
  /// order. Expanding: nothing (the resolve pass checked every name).
  void check_names(const ast::Expr& e) const;
  /// Whether the pass knows the value of `e`: expanding, always; resolving, unless `e` uses a
  /// loop variable.
  bool known(const ast::Expr& e) const;
  /// A rule value or a shape's size: expanding, `e` evaluated; resolving, only its names are
  /// checked (nullopt).
  std::optional<Value> value(const ast::Expr& e) const;
  /// `value(e)` as an integer (`what` names it in the error).
  std::optional<int64_t> integer(const ast::Expr& e, const std::string& what) const;
  /// Expanding: counts `count` listed tokens or columns at `pos` (compiler/work.h). Resolving:
  /// nothing.
  void count_listed(uint64_t count, ast::Pos pos) const;
};

}  // namespace maskprior
