// The one classification of mask cells that every layer uses: rendering, warnings, the runtime's
// initialisations and metrics, and the validator's reachability all ask these functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/compiled_mask.h"

namespace maskprior {

/// What a cell of M holds: the open value, the close value, some other value, or a hard exclusion.
enum class CellClass { kOpen, kClosed, kOther, kHard };

/// The class of cell (layer, head, q, k). Open and closed mean the exact values the spec's
/// `scale` wrote (compared as float32, as stored); anything else is kOther.
CellClass classify_cell(const CompiledMask& mask, int64_t layer, int64_t head, int64_t q,
                        int64_t k);

/// True when `value` lies on the open side of the midpoint between the open and close values
/// (strictly; for open > close this is value > (open + close) / 2). Open cells always do, closed
/// cells never; an "other" cell does when it is nearer the open value.
bool leans_open(const CompiledMask& mask, double value);

/// True when `value` lies strictly on the close side of that midpoint (a closed cell always does).
bool leans_closed(const CompiledMask& mask, double value);

/// InputError "SOURCE: the cell of layer L, head H, query Q, key K is nan: ..." for the first cell
/// that is not hard-excluded and whose value is not finite (a learned M of a diverged run).
void check_finite_cells(const CompiledMask& mask, const std::string& source);

/// The binary prior [L, H, N, N]: 1 where a cell is not hard-excluded and leans open. This is the
/// pattern that qk inits fit and that prior-mass metrics measure. InputError for a cell that is
/// not finite (check_finite_cells): it leans neither way.
std::vector<uint8_t> open_pattern(const CompiledMask& mask);

}  // namespace maskprior
