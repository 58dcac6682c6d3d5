// The way back from a pattern to the language: a readable .mask spec whose compiled open pattern
// is a given one, cell for cell (`maskc distill`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/layout.h"

namespace maskprior {

/// What write_spec writes: a binary pattern over a layout, and what the spec's header says.
struct SpecDraft {
  std::string name;  // `mask NAME`
  Layout layout;     // spans, with their digit orders and grids
  int64_t layers = 1;
  int64_t heads = 1;
  std::vector<uint8_t> pattern;              // [L, H, N, N]: 1 = open (hard cells are ignored)
  std::optional<std::vector<uint8_t>> hard;  // [N, N]: 1 = hard-excluded; none = no hard rules
  double open_value = 5.0;
  double close_value = -5.0;
  std::vector<std::string> comments;  // the header's comment lines, without the leading '#'
};

/// Writes a .mask spec for `draft`: `default close`, the hard mask (`hard causal` when it is the
/// causal one), and per plane (top level when every layer and head has the same pattern, else in
/// `layer`/`head` blocks) the language's own shapes wherever one fits the pattern exactly —
/// `diagonal`, whole spans and `before` spans, `align`/`product` of digit spans, `local` and
/// `shift` on grids, `cycle`, constant offsets as a `for` loop — chosen greedily by the cells
/// they add, then the rest as explicit rows and key ranges. Compiling the result gives exactly
/// the pattern on every cell that is not hard (checked before returning: InternalError
/// otherwise). InputError for a span name the language cannot spell.
std::string write_spec(const SpecDraft& draft);

}  // namespace maskprior
