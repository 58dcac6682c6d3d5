#include "train/data_experiment.h"

#include <fmt/format.h>

#include <utility>

#include "core/error.h"
#include "runtime/truth_table_experiment.h"
#include "tasks/truth_table.h"
#include "validate/dependencies.h"
#include "validate/validate.h"

namespace maskprior::training {

namespace {

// A target on more variables than this reports the coefficients of its Fourier support (at most
// kMaxFourierSets of them) instead of every subset of its variables.
inline constexpr size_t kMaxSubsetVariables = 6;
inline constexpr size_t kMaxFourierSets = 64;

/// The index sets whose learned Fourier coefficients a truth-table run reports: every subset of
/// the variables the target depends on (as the built-in Boolean tasks do), or for a target on
/// many variables its Fourier support, lowest degree first.
std::vector<std::vector<int>> fourier_sets(const tasks::TruthTable& table) {
  const auto dependencies = validate::analyze_dependencies(table);
  if (dependencies.empty() || !dependencies[0].has_spectrum) return {};
  const auto& target = dependencies[0];
  if (target.inputs.size() <= kMaxSubsetVariables) {
    return runtime::variable_subsets(std::vector<int>(target.inputs.begin(), target.inputs.end()));
  }
  std::vector<std::vector<int>> sets;
  for (const auto& monomial : target.support) {
    if (sets.size() == kMaxFourierSets) break;
    std::vector<int> set;
    for (int i = 0; i < 64; ++i) {
      if (monomial.variables >> i & 1) set.push_back(i);
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

runtime::TruthTableTask truth_table_task(const std::string& path, const CompiledMask& spec) {
  validate::ValidateOptions options;
  options.readout = {spec.layout.token_label(0)};  // the model reads out at token 0
  auto target = validate::table_target(spec, tasks::read_truth_table_csv(path), options);
  runtime::TruthTableTask task;
  task.fourier_sets = fourier_sets(target.table);
  task.table = std::move(target.table);
  task.layout = spec.layout;
  task.input_tokens = std::move(target.input_tokens);
  return task;
}

}  // namespace

std::unique_ptr<runtime::Experiment> make_run_experiment(const TrainConfig& config,
                                                         const std::optional<CompiledMask>& spec) {
  auto experiment = experiment_config(config);
  if (config.data.empty() && config.truth_table.empty())
    return runtime::make_experiment(experiment);
  internal_check(spec.has_value(), "check_config lets no --data or --truth-table run without spec");
  if (!config.truth_table.empty()) {
    return runtime::make_truth_table_experiment(truth_table_task(config.truth_table, *spec));
  }
  experiment.layout = spec->layout;
  experiment.layout_source = config.spec;
  return runtime::make_experiment(experiment);
}

void keep_run_files(const RunFolder& folder, const runtime::Experiment& experiment, bool resuming) {
  for (const auto& [name, content] : experiment.run_files()) {
    if (!resuming) {
      folder.write_json(name.c_str(), content);
    } else if (folder.enabled() && folder.read_json(name.c_str()) != content) {
      throw InputError(fmt::format(
          "{}: the data no longer gives the {} this run started with; it changed since (restore "
          "it, or start a new run)",
          folder.path(), name));
    }
  }
}

std::string learned_label(const TrainConfig& config) {
  if (!config.data.empty()) return "data " + config.data;
  if (!config.truth_table.empty()) return "truth table " + config.truth_table;
  return config.task;
}

}  // namespace maskprior::training
