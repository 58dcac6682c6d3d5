#include "train/run_experiment.h"

#include <fmt/format.h>

#include <map>
#include <utility>

#include "core/error.h"
#include "core/layout.h"
#include "runtime/arithmetic_experiment.h"
#include "runtime/boolean_experiment.h"
#include "runtime/language_experiment.h"
#include "runtime/regression_experiment.h"
#include "runtime/sequence_experiment.h"
#include "runtime/truth_table_experiment.h"
#include "runtime/vision_experiment.h"
#include "tasks/truth_table.h"
#include "train/sized_prior.h"
#include "validate/dependencies.h"

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
  tasks::TruthTable table = tasks::read_truth_table_csv(path);
  runtime::TruthTableTask task;
  // The columns name tokens as for `maskc validate --truth-table`; the model reads out at token 0.
  task.input_tokens = bind_token_labels(
      spec.layout, table.inputs, spec.name,
      [&](size_t i, const std::string& message) { return table.input_error(i, message); });
  task.fourier_sets = fourier_sets(table);
  task.table = std::move(table);
  task.layout = spec.layout;
  return task;
}

}  // namespace

namespace {

/// The factory of a built-in task's family: `make` on the run's experiment settings.
ExperimentFactory from_settings(
    std::unique_ptr<runtime::Experiment> (*make)(const runtime::ExperimentConfig&)) {
  return [make](const TrainConfig& c, const std::optional<CompiledMask>&) {
    return make(experiment_config(c));
  };
}

/// Each family's experiment by the family's name: the one place a family's runtime half is
/// registered (its LibTorch-free half is listed in tasks/family.cpp).
std::map<std::string, ExperimentFactory>& experiment_registry() {
  static std::map<std::string, ExperimentFactory> registry = {
      {"boolean", from_settings(runtime::make_boolean_experiment)},
      {"arithmetic", from_settings(runtime::make_arithmetic_experiment)},
      {"vision", from_settings(runtime::make_vision_experiment)},
      {"language", from_settings(runtime::make_language_experiment)},
      {"sequence-data",
       [](const TrainConfig& c, const std::optional<CompiledMask>& spec) {
         auto experiment = experiment_config(c);
         experiment.layout = spec->layout;
         experiment.layout_source = c.spec;
         experiment.sized_layouts = data_layouts(c, *spec);
         return runtime::make_sequence_experiment(experiment);
       }},
      {"truth-table",
       [](const TrainConfig& c, const std::optional<CompiledMask>& spec) {
         return runtime::make_truth_table_experiment(truth_table_task(c.truth_table, *spec));
       }},
  };
  return registry;
}

}  // namespace

void register_experiment(const std::string& family, ExperimentFactory factory) {
  if (tasks::find_family(family) == nullptr) {
    throw InputError(fmt::format("no task family '{}' to register an experiment for", family));
  }
  if (!experiment_registry().emplace(family, std::move(factory)).second) {
    throw InputError(fmt::format("task family '{}' has an experiment already", family));
  }
}

std::unique_ptr<runtime::Experiment> make_run_experiment(const TrainConfig& config,
                                                         const std::optional<CompiledMask>& spec) {
  const tasks::TaskFamily& family = family_of(config);
  internal_check(family.input_key.empty() || spec.has_value(),
                 "check_config lets no run on your own data go without a spec");
  const auto factory = experiment_registry().find(family.name);
  if (factory == experiment_registry().end()) {
    throw InputError(fmt::format("task family '{}' has no experiment registered", family.name));
  }
  return factory->second(config, spec);
}

void keep_run_files(const RunFolder& folder, const runtime::Experiment& experiment, bool resuming) {
  const nlohmann::json vocabulary = experiment.vocabulary();
  if (vocabulary.is_null()) return;
  if (!resuming) {
    folder.write_json(kVocabularyFile, vocabulary);
  } else if (folder.enabled() && folder.read_json(kVocabularyFile) != vocabulary) {
    throw InputError(fmt::format(
        "{}: the data no longer gives the {} this run started with; it changed since (restore "
        "it, or start a new run)",
        folder.path(), kVocabularyFile));
  }
}

std::string learned_label(const TrainConfig& config) {
  if (!config.data.empty()) return "data " + config.data;
  if (!config.truth_table.empty()) return "truth table " + config.truth_table;
  return config.task;
}

}  // namespace maskprior::training
