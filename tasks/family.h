// Task families: each family of tasks (Boolean GOTU, arithmetic, vision, language, your own
// sequences, your own truth table) described once, as data: its tasks, preset rows, the metrics
// it reports (headline first, with title, unit and direction), the run settings it fills into a
// spec, its paper numbers and its `maskc reproduce` suites. Everything above this layer — the
// training loop, `maskc train`'s summary, reproduce, report — reads a family here instead of
// comparing task names or looking for JSON keys. No LibTorch: the experiment of a family (its
// runtime half) is registered by the family's name in train/run_experiment.cpp.
//
// Adding a family: a descriptor function like the built-in ones (tasks/*_family.cpp), listed in
// tasks/family.cpp; its experiment in runtime/, registered in train/run_experiment.cpp; its specs
// under specs/ (docs/architecture.md, "Where to add things"). A program or test may add one at
// run time with register_family.
#pragma once

#include <nlohmann/json.hpp>

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "tasks/descriptor.h"

namespace maskprior::tasks {

/// Every family: the built-in ones (tasks/family.cpp) in order, then those registered (a deque:
/// registering one keeps references to the others valid).
const std::deque<TaskFamily>& families();
/// Adds a family. InputError if its name, or one of its tasks, is taken, it has no metric, or a
/// distilled row of its suites (or distill rows) reads no earlier undistilled row.
void register_family(TaskFamily family);
/// The family called `name`; nullptr if none.
const TaskFamily* find_family(const std::string& name);
/// The family of the built-in task `task`; InputError (unknown_task) if none has it.
const TaskFamily& family_of_task(const std::string& task);
/// The family of a run from its settings (a config.json, or a TrainConfig as JSON): the family
/// whose input key is set to a non-empty string, else the family of its task.
const TaskFamily& family_of_run(const nlohmann::json& config);

/// The config keys a run of `family` does not read: the settings other families own
/// (own_settings) and this one does not, the input keys of the other families of your own data
/// (`data`, `truth_table`), and `task` for a family of your own data. A run's config.json leaves
/// them out (they hold their defaults: train/config.cpp check_config), and `maskc report` ignores
/// them, so run folders written before and after that pool alike.
std::vector<std::string> foreign_settings(const TaskFamily& family);

/// The -D values a run of `family` adds when it compiles its spec (train/run_spec.cpp load_spec;
/// `maskc report` compiles it the same way): each of the family's spec_params, and `depth` (a
/// spec written for any depth), from the run's setting of the same name (`settings`: a
/// config.json, or a TrainConfig as JSON; a setting it lacks or that is no integer is not
/// filled), where the spec declares the parameter (`declared`: its values as compiled) with
/// another value and `defines` (its -D values) does not give it.
std::map<std::string, std::string> filled_spec_params(
    const TaskFamily& family, const nlohmann::json& settings,
    const std::map<std::string, double>& declared,
    const std::map<std::string, std::string>& defines);

/// Every built-in task, family by family.
std::vector<std::string> task_names();
/// An InputError naming `task` and listing every built-in task.
InputError unknown_task(const std::string& task);

/// The suites of `maskc reproduce`: `demo` (every family's demo runs, one seed), `distill` (every
/// family's distill runs, 3 seeds), then each family's own. (Each family's distilled rows are
/// checked once, when the family is built or registered.)
std::vector<Suite> suites();
/// The suite `name`; InputError listing the suites if none.
Suite suite(const std::string& name);

/// The persistence metrics every run measures (prior mass at the start and end, mask drift), as
/// table columns.
const std::vector<Metric>& persistence_metrics();

}  // namespace maskprior::tasks
