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

}  // namespace maskprior
