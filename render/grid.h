// Text pictures of one (layer, head) of a compiled mask: a summary and a labelled grid.
// Rows are queries, columns are keys, as everywhere in maskprior.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

/// The open patterns (core/cells.h open_pattern) of two masks of one layout, cell by cell.
struct PatternDiff {
  /// A's layout with the larger of the two shapes (a mask with one layer or head stands for all):
  /// 1 where only A opens a cell, −1 where only B does, 0.5 where both do, 0 where neither; hard
  /// where either is hard.
  CompiledMask cells;
  struct Plane {
    int64_t layer = 0, head = 0;
    int64_t only_a = 0, only_b = 0, both = 0;  // cells that are not hard
    double jaccard = 1;                        // both / open in either (1 when neither opens any)
  };
  std::vector<Plane> planes;  // one per (layer, head) of `cells`, in order
  /// The query rows the counts cover: all N, or N − 1 when the masks are a causal decoder's
  /// (either hard-excludes every later key), whose last row predicts no token.
  int64_t counted_rows = 0;

  /// Every plane's counts summed, with their Jaccard overlap (layer and head 0).
  Plane total() const;
};

/// Compares the open patterns of `a` and `b`. InputError naming both when their layouts differ or
/// their layers or heads differ other than by one of them having one.
PatternDiff compare_patterns(const CompiledMask& a, const CompiledMask& b);

/// A table of every plane's counts and Jaccard overlap, then for N <= max_tokens each plane as
/// side-by-side grids: A, B and their difference (`#` open in both, `a` only in A, `b` only in B).
std::string render_pattern_diff(const PatternDiff& diff, const std::string& name_a,
                                const std::string& name_b, int64_t max_tokens = kMaxGridTokens);

}  // namespace maskprior
