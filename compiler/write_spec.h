// The way back from a pattern to the language: a readable .mask spec whose compiled open pattern
// is a given one, cell for cell (`maskc distill`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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

/// True when every plane of `draft` opens every cell its hard mask leaves: a spec of it is no
/// prior.
bool opens_every_allowed_cell(const SpecDraft& draft);

/// Writes a .mask spec for `draft`: `default open` and the hard mask when opens_every_allowed_cell,
/// else `default close`, the hard mask (`hard causal` when it is the causal one), and per plane
/// (top level when every layer and head has the same pattern, else in `layer`/`head` blocks) the
/// language's own shapes wherever one fits the pattern exactly — `diagonal`, whole spans and
/// `before` spans, `align`/`product` of digit spans, `local` and `shift` on grids, `cycle`,
/// constant offsets as a `for` loop — chosen greedily by the cells they add, then the rest as
/// explicit rows and key ranges. Compiling the result gives exactly the pattern on every cell that
/// is not hard (checked before returning: InternalError otherwise). InputError for a span name the
/// language cannot spell.
std::string write_spec(const SpecDraft& draft);

/// The first line of the header `maskc distill` writes (train/distill.cpp): the command, then on
/// the next line "# run: task T, init I, seed K, ...".
inline constexpr const char* kDistilledHeader = "# distilled by `maskc distill ";

/// Where a spec that `maskc distill` wrote came from, without the run folder and seed: its options
/// and the source run's task and init ("--from attention --mass 0.9 --rows 256 --per model; task
/// parity2, init vanilla"), so that the runs of one suite row, each trained on the spec distilled
/// from its own seed's run, pool as one setting (report/report.h settings_of). nullopt for a spec
/// without that header.
std::optional<std::string> distilled_origin(std::string_view spec);

}  // namespace maskprior
