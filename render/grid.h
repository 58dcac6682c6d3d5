// Text pictures of one (layer, head) of a compiled mask: a summary and a labelled grid.
// Rows are queries, columns are keys, as everywhere in maskprior.
#pragma once

#include <cstdint>
#include <string>

#include "core/compiled_mask.h"

namespace maskprior {

/// Largest N drawn as a text grid; above it `render_grid` prints a summary instead.
inline constexpr int64_t kMaxGridTokens = 64;

/// Throws InputError unless `layer` and `head` index into `mask`.
void check_layer_head(const CompiledMask& mask, int64_t layer, int64_t head);

/// A summary of one (layer, head): shape, layout, and how many cells are open, closed, other, hard.
std::string render_summary(const CompiledMask& mask, int64_t layer, int64_t head);

/// The summary plus, for N <= max_tokens, a grid with token labels and a legend:
/// `#` open value, `.` close value, `+`/`-`/`0` other positive/negative/zero values, `x` hard.
/// For larger N it says so and suggests `--png`.
std::string render_grid(const CompiledMask& mask, int64_t layer, int64_t head,
                        int64_t max_tokens = kMaxGridTokens);

/// One query's row laid out as the keys are: for each span with a grid (`grid SPAN H x W`), its
/// H × W cells as a picture of the image, the other spans as a line; symbols as in render_grid,
/// and `@` at the query itself. InputError when `query` names no token (the message lists the
/// spans).
std::string render_query_row(const CompiledMask& mask, int64_t layer, int64_t head,
                             const std::string& query);

/// LEARNED − INIT cell by cell (what training changed): `learned`'s name, layout and shape, with
/// `init` repeated over the layers or heads it has only one of (a spec shared by every layer and
/// head); hard where either is. InputError naming both when their layouts differ or their shapes
/// do not match so.
CompiledMask mask_difference(const CompiledMask& init, const CompiledMask& learned);

/// A difference (mask_difference) as text for one (layer, head): how many cells rose or fell by
/// more than `tolerance`, the largest and mean |Δ|; for N <= max_tokens a grid with token labels:
/// `+` rose, `-` fell, `.` within the tolerance, `x` hard.
std::string render_difference(const CompiledMask& difference, int64_t layer, int64_t head,
                              double tolerance, int64_t max_tokens = kMaxGridTokens);

}  // namespace maskprior
