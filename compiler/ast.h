// The syntax tree of a .mask spec, as parsed (names unresolved, expressions unevaluated).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace maskprior::ast {

/// A 1-based line and column in the spec.
struct Pos {
  int line = 0;
  int column = 0;
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

enum class ExprKind { kNumber, kName, kNegate, kBinary, kCall };

/// An arithmetic expression: number, name, -e, a op b (op one of + - * / %), f(args).
struct Expr {
  ExprKind kind = ExprKind::kNumber;
  Pos pos;                    // where the expression starts
  Pos op_pos;                 // kBinary: the operator (division by zero is reported there)
  double number = 0.0;        // kNumber
  bool is_integer = false;    // kNumber: written without '.' or exponent, fits int64
  int64_t integer = 0;        // kNumber when is_integer
  std::string name;           // kName: the name; kCall: the function
  char op = 0;                // kBinary
  std::vector<ExprPtr> args;  // kNegate: 1, kBinary: 2, kCall: the arguments
  int height = 1;             // levels of the tree from here down (a number or name: 1)
};

/// The most levels an expression's tree may have. Every pass over an expression (evaluating,
/// checking, printing, destroying) recurses once per level, so the parser refuses deeper ones
/// (a chain `1+1+…+1` of more terms, say) with a located error instead of overflowing the stack.
inline constexpr int kMaxExprHeight = 1000;

/// `[i]`, `[a..b]`, `[..b]`, `[a..]`, `[..]`.
struct Index {
  Pos pos;
  bool is_range = false;
  ExprPtr begin;  // the index, or the range start (null = 0)
  ExprPtr end;    // range end (null = span length)
};

enum class SelectorKind { kSpan, kBefore, kGroup };

/// One selector item: `x`, `x[i]`, `x[a..b]`, `before ITEM`, `( LIST )`.
struct SelectorItem {
  SelectorKind kind = SelectorKind::kSpan;
  Pos pos;
  std::string span;                 // kSpan
  std::optional<Index> index;       // kSpan
  std::vector<SelectorItem> items;  // kBefore: one operand; kGroup: the list
};

/// A selector list `a, b[2..4], before c`: tokens in the order written.
struct Selector {
  Pos pos;
  std::vector<SelectorItem> items;
};

enum class ShapeKind {
  kDirected,
  kPair,
  kClique,
  kDiagonal,
  kCycle,
  kAlign,
  kProduct,
  kLocal,
  kShift,
  kDistance,
  kCausal
};

enum class Metric { kChebyshev, kManhattan };

/// The cells a rule writes. Which fields are used depends on `kind` (see docs/language.md).
struct Shape {
  ShapeKind kind = ShapeKind::kDirected;
  Pos pos;
  Selector a;  // queries / first operand / the span of clique, cycle, local, shift, distance
  Selector b;  // keys / second operand
  Selector c;  // align/product result
  bool has_a = false;  // diagonal and causal take an optional selector
  bool carry = false;
  Pos carry_pos;  // align/product: position of `carry` (the last if repeated)
  int carry_count = 0;
  ExprPtr lag;  // align/product: `lag h` (null when not written)
  Pos lag_pos;
  int lag_count = 0;
  ExprPtr size;    // cycle window, local radius
  Pos radius_pos;  // local: position of `radius` (the last if repeated)
  int radius_count = 0;
  std::optional<Metric> metric;
  Pos metric_pos;
  int metric_count = 0;
  ExprPtr dilation;
  Pos dilation_pos;
  int dilation_count = 0;
  ExprPtr dy, dx;  // shift
};

enum class RuleAction { kOpen, kClose, kSet, kHard };

enum class StatementKind {
  kParam,
  kTokens,
  kDigits,
  kGrid,
  kScale,
  kLayers,
  kHeads,
  kDefault,
  kRule,
  kFor,
  kHeadBlock,
  kHeadsBlock,
  kLayerBlock,
  kLayersBlock
};

/// A declared span in `tokens`: `cls` (length null = 1) or `x[n]`.
struct SpanDecl {
  Pos pos;
  std::string name;
  ExprPtr length;
};

/// One `open = A` / `close = B` item of `scale`.
struct ScaleItem {
  Pos pos;
  bool is_open = true;
  ExprPtr value;
};

enum class DefaultKind { kOpen, kClose, kValue };

/// One statement: a declaration, a rule, or a block with a body. Fields by `kind`.
struct Statement {
  StatementKind kind = StatementKind::kRule;
  Pos pos;  // the statement's first keyword; rules: its line is the provenance

  std::string name;  // param, digits, grid: the name; for: the loop variable
  Pos name_pos;
  ExprPtr value;   // param value, layers/heads count, default value, rule value (`at`/`=`)
  ExprPtr value2;  // grid width; blocks: range end
  // ExprPtr `value` is also the grid height and a block's index / range start.
  std::vector<SpanDecl> spans;   // tokens
  bool lsb_first = true;         // digits
  std::vector<ScaleItem> scale;  // scale
  DefaultKind default_kind = DefaultKind::kClose;

  RuleAction action = RuleAction::kOpen;  // rule
  Shape shape;                            // rule
  std::vector<Statement> body;            // blocks
};

/// A parsed spec: `mask NAME` then statements in file order.
struct Spec {
  std::string name;
  Pos name_pos;
  std::vector<Statement> statements;
};

}  // namespace maskprior::ast
