#include "compiler/eval.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace maskprior {
namespace {

// Names that evaluate a function call instead of a variable.
constexpr const char* kFunctions = "abs, log, exp, min, max";

Value checked_real(double v, const ast::Expr& e, const SourceText& source) {
  if (!std::isfinite(v)) {
    source.fail(e.pos, fmt::format("the result {} is not a finite number", v));
  }
  return Value::of_real(v);
}

Value integer_op(char op, int64_t a, int64_t b, const ast::Expr& e, const SourceText& source) {
  int64_t r = 0;
  bool overflow = false;
  switch (op) {
    case '+':
      overflow = __builtin_add_overflow(a, b, &r);
      break;
    case '-':
      overflow = __builtin_sub_overflow(a, b, &r);
      break;
    case '*':
      overflow = __builtin_mul_overflow(a, b, &r);
      break;
    case '/':
      if (b == 0) source.fail(e.op_pos, "division by zero");
      // a / -1 is -a: INT64_MIN / -1 overflows (and `%` or `/` by -1 would trap in hardware)
      if (b == -1) {
        overflow = __builtin_sub_overflow(int64_t{0}, a, &r);
        break;
      }
      if (a % b != 0) return Value::of_real(static_cast<double>(a) / static_cast<double>(b));
      r = a / b;
      break;
    case '%':
      if (b == 0) source.fail(e.op_pos, "modulo by zero");
      if (b == -1) break;  // every integer is a multiple of -1 (INT64_MIN % -1 would trap)
      // floored: the result has the sign of the divisor, so `(i - 1) % n` wraps to n - 1
      r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      break;
    default:
      throw InternalError("internal error: unknown operator");
  }
  if (overflow) {
    source.fail(e.kind == ast::ExprKind::kBinary ? e.op_pos : e.pos,
                fmt::format("integer overflow in {} {} {}", a, op, b));
  }
  return Value::of_integer(r);
}

Value real_op(char op, double a, double b, const ast::Expr& e, const SourceText& source) {
  switch (op) {
    case '+':
      return checked_real(a + b, e, source);
    case '-':
      return checked_real(a - b, e, source);
    case '*':
      return checked_real(a * b, e, source);
    case '/':
      if (b == 0.0) source.fail(e.op_pos, "division by zero");
      return checked_real(a / b, e, source);
    case '%': {
      if (b == 0.0) source.fail(e.op_pos, "modulo by zero");
      double r = std::fmod(a, b);
      if (r != 0.0 && ((r < 0) != (b < 0))) r += b;
      return checked_real(r, e, source);
    }
    default:
      throw InternalError("internal error: unknown operator");
  }
}

Value call(const ast::Expr& e, const Scope& scope, const SourceText& source) {
  std::vector<Value> args;
  for (const auto& a : e.args) args.push_back(evaluate(*a, scope, source));
  check_call(e, source);
  if (e.name == "abs") {
    if (args[0].is_integer) {
      if (args[0].integer == std::numeric_limits<int64_t>::min()) {
        source.fail(e.pos, "integer overflow in abs()");
      }
      return Value::of_integer(args[0].integer < 0 ? -args[0].integer : args[0].integer);
    }
    return Value::of_real(std::fabs(args[0].real));
  }
  if (e.name == "log") {
    if (args[0].real <= 0.0) {
      source.fail(e.pos,
                  fmt::format("log() needs a positive argument, got {}", args[0].to_string()));
    }
    return checked_real(std::log(args[0].real), e, source);
  }
  if (e.name == "exp") return checked_real(std::exp(args[0].real), e, source);
  // min, max
  const bool want_min = e.name == "min";
  Value best = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    const Value& v = args[i];
    const bool better = want_min ? v.real < best.real : v.real > best.real;
    if (better) best = v;
  }
  // mixed integer/real: the result is real unless every argument is an integer
  bool all_integer = true;
  for (const Value& v : args) all_integer = all_integer && v.is_integer;
  return all_integer ? best : Value::of_real(best.real);
}

}  // namespace

std::string unknown_name_message(const std::string& name, const Scope& scope) {
  std::string known;
  for (const auto& [known_name, value] : scope) known += (known.empty() ? "" : ", ") + known_name;
  return fmt::format("unknown name {}; expected a parameter or loop variable{}", name,
                     known.empty() ? "" : " (" + known + ")");
}

void check_call(const ast::Expr& e, const SourceText& source) {
  const size_t count = e.args.size();
  if (e.name == "abs" || e.name == "log" || e.name == "exp") {
    if (count != 1) {
      source.fail(e.pos, fmt::format("{}() takes one argument, got {}", e.name, count));
    }
    return;
  }
  if (e.name == "min" || e.name == "max") {
    if (count < 2) {
      source.fail(e.pos, fmt::format("{}() takes two or more arguments, got {}", e.name, count));
    }
    return;
  }
  source.fail(e.pos,
              fmt::format("unknown function {}(); the functions are {}", e.name, kFunctions));
}

std::string Value::to_string() const {
  if (is_integer) return std::to_string(integer);
  return fmt::format("{}", real);
}

Value evaluate(const ast::Expr& e, const Scope& scope, const SourceText& source) {
  switch (e.kind) {
    case ast::ExprKind::kNumber:
      return e.is_integer ? Value::of_integer(e.integer) : checked_real(e.number, e, source);
    case ast::ExprKind::kName: {
      const auto it = scope.find(e.name);
      if (it == scope.end()) source.fail(e.pos, unknown_name_message(e.name, scope));
      return it->second;
    }
    case ast::ExprKind::kNegate: {
      const Value v = evaluate(*e.args.at(0), scope, source);
      if (v.is_integer) {
        if (v.integer == std::numeric_limits<int64_t>::min()) {
          source.fail(e.pos, fmt::format("integer overflow in -({})", v.integer));
        }
        return Value::of_integer(-v.integer);
      }
      return Value::of_real(-v.real);
    }
    case ast::ExprKind::kBinary: {
      const Value a = evaluate(*e.args.at(0), scope, source);
      const Value b = evaluate(*e.args.at(1), scope, source);
      if (a.is_integer && b.is_integer) return integer_op(e.op, a.integer, b.integer, e, source);
      return real_op(e.op, a.real, b.real, e, source);
    }
    case ast::ExprKind::kCall:
      return call(e, scope, source);
  }
  throw InternalError("internal error: unknown expression kind");
}

int64_t to_integer(const Value& v, ast::Pos pos, const std::string& what,
                   const SourceText& source) {
  if (v.is_integer) return v.integer;
  // 2^62 keeps the conversion exact and the later arithmetic far from overflow
  constexpr double kLimit = 4.611686018427387904e18;
  if (std::floor(v.real) == v.real && std::fabs(v.real) < kLimit) {
    return static_cast<int64_t>(v.real);
  }
  source.fail(pos, fmt::format("{} must be an integer, got {}", what, v.to_string()));
}

int64_t evaluate_integer(const ast::Expr& e, const Scope& scope, const SourceText& source,
                         const std::string& what) {
  return to_integer(evaluate(e, scope, source), e.pos, what, source);
}

bool is_negative_literal(const ast::Expr& e) {
  return e.kind == ast::ExprKind::kNegate && e.args.size() == 1 &&
         e.args[0]->kind == ast::ExprKind::kNumber && e.args[0]->is_integer;
}

}  // namespace maskprior
