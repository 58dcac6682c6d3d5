// The experiment of a run: a built-in task (`--task`), your own sequences (`--data`) or your own
// Boolean function (`--truth-table`), made by its task family's registered experiment; for the
// last two the spec defines the layout (docs/your-data.md). Also the files a run of your own data
// adds to its run folder.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/compiled_mask.h"
#include "runtime/experiment.h"
#include "tasks/family.h"
#include "train/config.h"
#include "train/run_folder.h"

namespace maskprior::training {

/// Makes a family's experiment for a run; `spec` is the run's spec, if it has one.
using ExperimentFactory = std::function<std::unique_ptr<runtime::Experiment>(
    const TrainConfig& config, const std::optional<CompiledMask>& spec)>;

/// Registers the experiment of `family` (a family of tasks/family.h, e.g. one added with
/// tasks::register_family). InputError if there is no such family or it has an experiment.
void register_experiment(const std::string& family, ExperimentFactory factory);

/// The experiment `config` asks for, from its family's registered experiment. `spec` (required for
/// --data and --truth-table) gives their layout; a truth table's columns are bound to its tokens as
/// `maskc validate --truth-table` binds them (bind_token_labels, core/layout.h; the readout is
/// token 0). Throws InputError or SpecError (at the data file's line) for bad data, before
/// anything is written.
std::unique_ptr<runtime::Experiment> make_run_experiment(const TrainConfig& config,
                                                         const std::optional<CompiledMask>& spec);

/// Writes the experiment's vocabulary (a run on sequence data) into a new run's folder; for a
/// resumed run, checks that it still matches what the folder holds (InputError if the data
/// changed since).
void keep_run_files(const RunFolder& folder, const runtime::Experiment& experiment, bool resuming);

/// What a run learns, for its summary line: the task, `data FILE` or `truth table FILE`.
std::string learned_label(const TrainConfig& config);

}  // namespace maskprior::training
