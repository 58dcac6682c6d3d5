// Rule shapes -> the cells they write, row by row (A -> B, pair, clique, diagonal, cycle, align,
// product, local, shift, distance, causal). Large shapes generate their columns lazily per row.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "compiler/ast.h"
#include "compiler/declarations.h"
#include "compiler/work.h"

namespace maskprior {

/// Consecutive key tokens [begin, end) of one row: writes become fills, not scattered stores.
struct ColumnRun {
  int64_t begin = 0;
  int64_t end = 0;
};

/// The cells of one shape: rows are distinct query tokens; `fill(r, runs, values)` appends the
/// key runs of rows[r] (and, when per_cell_values, one value per key, in run order).
struct CellWrites {
  std::vector<int64_t> rows;
  std::function<void(size_t r, std::vector<ColumnRun>& runs, std::vector<float>& values)> fill;
  bool per_cell_values = false;
  uint64_t cell_count = 0;  // the cells `fill` gives over all rows
};

/// The cells `shape` selects in `scope`. For `distance`, `distance_value` (an expression of `d`)
/// gives each cell's value (`d` is bound in `scope` while it is evaluated, then unbound). Tokens
/// the selectors list and columns the shape lists are counted by `budget` before they are made.
/// Throws SpecError for bad operands (no grid, no digits, sizes) and work past the limit.
CellWrites shape_cells(const ast::Shape& shape, const ast::Expr* distance_value, Scope& scope,
                       const Declarations& decls, const SourceText& source, WorkBudget& budget);

/// The checks of `shape` that need no value: the whole-span operands of align, product, local and
/// shift (`before`, digits, grid) and local's options. Throws the SpecError shape_cells would.
void check_shape_operands(const ast::Shape& shape, const Declarations& decls,
                          const SourceText& source);

}  // namespace maskprior
