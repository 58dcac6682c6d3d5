#include "compiler/binding.h"

#include <fmt/format.h>

namespace maskprior {
namespace {

[[noreturn]] void fail_unknown_name(const ast::Expr& e, const Binding& b) {
  std::string message = unknown_name_message(e.name, b.scope);
  const auto loop = b.loop_lines.find(e.name);
  if (loop != b.loop_lines.end()) {
    message += fmt::format("; {} is the variable of the loop at line {} and exists only inside it",
                           e.name, loop->second);
  } else if (e.name == "d") {
    message += "; d exists only in the value of `set distance`";
  }
  b.source.fail(e.pos, message);
}

// Every name and call in `e`, in evaluation order.
void check_expr_names(const ast::Expr& e, const Binding& b) {
  for (const ast::ExprPtr& arg : e.args) check_expr_names(*arg, b);
  if (e.kind == ast::ExprKind::kName && b.scope.count(e.name) == 0) fail_unknown_name(e, b);
  if (e.kind == ast::ExprKind::kCall) check_call(e, b.source);
}

bool uses_unknown(const ast::Expr& e, const std::set<std::string>& unknown) {
  if (e.kind == ast::ExprKind::kName && unknown.count(e.name) != 0) return true;
  for (const ast::ExprPtr& arg : e.args) {
    if (uses_unknown(*arg, unknown)) return true;
  }
  return false;
}

}  // namespace

Binding::Binding(Pass the_pass, const Declarations& the_decls, const SourceText& the_source)
    : pass(the_pass), decls(the_decls), source(the_source), scope(the_decls.params) {}

void Binding::check_names(const ast::Expr& e) const {
  if (resolving()) check_expr_names(e, *this);
}

bool Binding::known(const ast::Expr& e) const {
  return unknown.empty() || !uses_unknown(e, unknown);
}

std::optional<Value> Binding::value(const ast::Expr& e) const {
  if (resolving()) {
    check_names(e);
    return std::nullopt;
  }
  return evaluate(e, scope, source);
}

std::optional<int64_t> Binding::integer(const ast::Expr& e, const std::string& what) const {
  const std::optional<Value> v = value(e);
  if (!v) return std::nullopt;
  return to_integer(*v, e.pos, what, source);
}

void Binding::count_listed(uint64_t count, ast::Pos pos) const {
  if (budget != nullptr) budget->add_listed(count, pos);
}

}  // namespace maskprior
