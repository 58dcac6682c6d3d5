// Lowering: allocate M, provenance and the hard mask, and write each rule's cells into them.
#pragma once

#include <cstdint>
#include <vector>

#include "compiler/declarations.h"
#include "compiler/walk.h"
#include "core/compiled_mask.h"

namespace maskprior {

/// Bytes the output needs: L·H·N·N·4 for the mask, as much again for the provenance when it is
/// built, plus N·N for the hard mask. Saturates at UINT64_MAX instead of overflowing.
uint64_t output_bytes(const Declarations& decls, bool provenance);

/// Throws SpecError at the `tokens` statement when the output exceeds `max_bytes`.
void check_output_size(const Declarations& decls, const SourceText& source, uint64_t max_bytes,
                       bool provenance);

/// Sizes `out` from `decls` and fills every cell with the default value (provenance 0, when
/// built): each array written once, mask and provenance at the same time.
void allocate_mask(CompiledMask& out, const Declarations& decls, bool provenance);

/// Where each row's last `hard` rule is, for the warning about rows with no key left.
using HardRowPositions = std::vector<ast::Pos>;
/// Per row q, a column some non-hard rule wrote last in row q (−1: none): where the warnings pass
/// looks first for a cell that differs from the row's first one.
using WrittenColumns = std::vector<int64_t>;

/// Writes one rule application (parallel over rows), and its line into the provenance when `out`
/// has one. Returns whether it wrote any cell.
bool apply_rule(const LoweredRule& rule, CompiledMask& out, HardRowPositions& hard_rows,
                WrittenColumns& written);

}  // namespace maskprior
