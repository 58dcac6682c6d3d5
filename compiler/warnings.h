// Warnings pass: uniformly closed rows, rows excluded by `hard`, rules that write no cell.
#pragma once

#include <set>

#include "compiler/ast.h"
#include "compiler/declarations.h"
#include "compiler/lower.h"
#include "core/compiled_mask.h"

namespace maskprior {

/// Appends to out.warnings: every rule statement not in `wrote` (it wrote no cell), then rows
/// whose non-hard cells are all equal and closed (per layer/head), then rows fully excluded by
/// `hard` rules. `written` (from apply_rule) only speeds up the row checks.
void add_warnings(const ast::Spec& spec, const std::set<const ast::Statement*>& wrote,
                  const Declarations& decls, const HardRowPositions& hard_rows,
                  const WrittenColumns& written, const SourceText& source, CompiledMask& out);

}  // namespace maskprior
