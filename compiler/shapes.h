// Rule shapes (A -> B, pair, clique, diagonal, cycle, align, product, local, shift, distance,
// causal): a shape's operands are bound once into a BoundShape, and its cells, row by row, are
// generated from that. Large shapes generate their columns lazily per row.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "compiler/ast.h"
#include "compiler/binding.h"
#include "compiler/declarations.h"
#include "compiler/selectors.h"
#include "compiler/work.h"

namespace maskprior {

/// Consecutive key tokens [begin, end) of one row: writes become fills, not scattered stores.
using ColumnRun = TokenRun;

/// The cells of one shape: rows are distinct query tokens; `fill(r, runs, values)` appends the
/// key runs of rows[r] (and, when per_cell_values, one value per key, in run order).
struct CellWrites {
  std::vector<int64_t> rows;
  std::function<void(size_t r, std::vector<ColumnRun>& runs, std::vector<float>& values)> fill;
  bool per_cell_values = false;
  uint64_t cell_count = 0;  // the cells `fill` gives over all rows
};

/// The operands of one application of a shape, bound: which are set depends on the kind. What
/// the pass does not know is unset: resolving, a selector whose indices depend on a loop variable,
/// and every size (the resolve pass checks only their names).
struct BoundShape {
  const ast::Shape* shape = nullptr;
  /// directed, pair: a and b; clique, cycle, distance: a; diagonal, causal: a, or every token of
  /// the layout when none is written.
  std::optional<BoundSelector> a, b;
  SpanOperand digits_a, digits_b, digits_c;  // align, product: spans with a digit order
  std::optional<int64_t> lag;                // align, product: `lag h` (0 when not written)
  const Span* grid = nullptr;                // local, shift: a span with a grid
  std::optional<int64_t> size;               // cycle: the window; local: the radius
  std::optional<int64_t> dilation;           // local (1 when not written)
  std::optional<int64_t> dy, dx;             // shift
  /// distance: the value at d = -(m-1) .. m-1 for the m tokens of a (expanding only).
  std::shared_ptr<const std::vector<float>> distance_values;
};

/// Binds the operands of `shape` in `binding`: its selectors, whole-span operands (`before`,
/// digits, grid) and local's options, then, expanding, its sizes and the cell values of
/// `distance` (`distance_value`, an expression of `d`, bound while it is evaluated). Throws
/// SpecError for bad operands, bad sizes and work past the limit.
BoundShape bind_shape(const ast::Shape& shape, const ast::Expr* distance_value, Binding& binding);

/// The cells of `bound` (bound by the expand pass: every operand known). Columns the shape lists
/// are counted by `budget` before they are made; throws SpecError for work past the limit.
CellWrites shape_cells(const BoundShape& bound, WorkBudget& budget);

}  // namespace maskprior
