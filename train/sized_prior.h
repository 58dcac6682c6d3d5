// A run over several sizes (length generalisation, docs/settings.md, "Sizes"): the spec compiled
// once per size the run meets, the prior the model applies at each size, and what a learnable
// prior tied to the spec's rules learned.
#pragma once

#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/compiled_mask.h"
#include "core/layout.h"
#include "runtime/experiment.h"
#include "runtime/model.h"
#include "train/config.h"

namespace maskprior::training {

/// The spec of a run over several sizes.
struct SizedSpec {
  std::map<int64_t, CompiledMask> by_tokens;  // T → the spec compiled at the size of T tokens
  /// Rule r's source line: the 1-based line of the statement that wrote its cells (provenance;
  /// a `for` loop's body is one rule); rule 0 is line 0, the cells no statement wrote.
  std::vector<int32_t> rule_lines;
  /// Rule of each cell, [L, H, T, T] int64 per size (from the spec's provenance).
  std::map<int64_t, std::vector<int64_t>> rules;
};

/// The tokens of the longest trained sequence of `groups` (0 when none trains).
int64_t longest_trained(const std::vector<runtime::SizeGroup>& groups);

/// InputError unless `config` can run over several sizes: its init (vanilla, mask, mask-fixed,
/// mask-zero; the query/key fits and the others fit one size), --mask-param rules for a learnable
/// prior (cells are one size's), --mask-sharing spec, no -D of the length parameter, and positions
/// that reach every size (a learned position embedding has no rows past the longest trained
/// sequence). `groups`: the run's sizes.
void check_sized_run(const TrainConfig& config, const std::vector<runtime::SizeGroup>& groups);

/// The layouts a --data run over lines of different lengths needs (docs/your-data.md): for each
/// symbol count T of config.data's and config.test_data's lines, the value v of the spec's
/// config.length_param whose layout has T tokens (the spec compiled with -D NAME=v), keyed by v.
/// Empty when every line has the length of `spec` (as compiled), or when the spec has no such
/// parameter or -D sets it (the data file's reader then points at a line of another length): a
/// run of one size. InputError when no value gives T tokens.
std::map<int64_t, Layout> data_layouts(const TrainConfig& config, const CompiledMask& spec);

/// Compiles config.spec (a .mask file) once per size of `groups`, with config.length_param set to
/// the size (as `maskc compile -D NAME=VALUE`), checks each against its group's layout and the
/// model's depth and heads (check_spec), and makes each causal for a decoder. InputError for a
/// tensor file, or a spec without that parameter.
SizedSpec compile_sizes(const TrainConfig& config, const std::vector<runtime::SizeGroup>& groups,
                        const runtime::ModelConfig& model);

/// Installs config.init's prior for every size in `model` (runtime::SizedPrior): mask and
/// mask-zero learnable, tied to the spec's rules (mask-zero without a spec: one rule); mask-fixed
/// the compiled spec at each size; vanilla none. `initial` receives M_T at installation for each
/// size T (for sized_mask_drift). Returns what init.json records.
nlohmann::json install_sized_priors(runtime::MaskedTransformer& model, const TrainConfig& config,
                                    const SizedSpec* spec,
                                    const std::vector<runtime::SizeGroup>& groups,
                                    std::map<int64_t, torch::Tensor>& initial);

/// The learned value of each rule, a table for summary.json (`learned_rules`): per rule its
/// source line and text (`source`: the spec's text), its cells at size `tokens` and the planes
/// ([layer, head] of the spec) that hold them, the value it writes there (the mean over its
/// cells) and, per layer and head, that value plus the learned offset. Empty when the model's
/// prior is not learnable.
nlohmann::json learned_rules(runtime::MaskedTransformer& model, const SizedSpec& spec,
                             const std::string& source, int64_t tokens);

/// ‖log σ(M_T) − log σ(M_T at init)‖ per layer (as persistence_metrics' mask_drift) at the size of
/// T tokens, `initial` being M_T at installation.
std::vector<double> sized_mask_drift(runtime::MaskedTransformer& model, int64_t tokens,
                                     const torch::Tensor& initial);

}  // namespace maskprior::training
