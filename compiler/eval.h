// Evaluation of .mask expressions: integer and real arithmetic with checked errors.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "compiler/ast.h"
#include "compiler/source.h"

namespace maskprior {

/// An expression's value: an integer (exact, int64) or a real.
struct Value {
  bool is_integer = false;
  int64_t integer = 0;
  double real = 0.0;

  static Value of_integer(int64_t v) { return Value{true, v, static_cast<double>(v)}; }
  static Value of_real(double v) { return Value{false, 0, v}; }
  std::string to_string() const;
};

/// Names visible to an expression: parameters, loop variables, `d` inside `set distance`.
using Scope = std::map<std::string, Value>;

/// "unknown name NAME; expected a parameter or loop variable (the names of `scope`)".
std::string unknown_name_message(const std::string& name, const Scope& scope);

/// Throws SpecError at call `e` when it names no function or passes the wrong number of arguments.
void check_call(const ast::Expr& e, const SourceText& source);

/// Evaluates `e`. Throws SpecError at the offending token for an unknown name, division or
/// modulo by zero, integer overflow, a bad function call or a result that is not finite.
Value evaluate(const ast::Expr& e, const Scope& scope, const SourceText& source);

/// `v` as an integer; throws SpecError at `pos` saying `what` must be an integer.
int64_t to_integer(const Value& v, ast::Pos pos, const std::string& what, const SourceText& source);

/// Evaluates `e` and requires an integer value (`what` names it in the error).
int64_t evaluate_integer(const ast::Expr& e, const Scope& scope, const SourceText& source,
                         const std::string& what);

/// True when `e` is written as a negative integer literal (`-1`): indexes count from the end.
bool is_negative_literal(const ast::Expr& e);

}  // namespace maskprior
