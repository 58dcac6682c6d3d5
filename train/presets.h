// Presets: named bundles of TrainConfig settings, kept as data in each task family's descriptor
// (tasks/family.h); this is how a run asks for them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace maskprior::training {

/// Names of the presets.
inline constexpr const char* kPresetQuick = "quick";
inline constexpr const char* kPresetPaper = "paper";

/// The task families of runs on your own data (no task): `--data` sequences (arithmetic's decoder)
/// and `--truth-table` functions (the Boolean tasks' model); pass them to task_preset as the task.
inline constexpr const char* kSequenceDataPresets = "sequence-data";
inline constexpr const char* kTruthTablePresets = "truth-table";

/// Every preset name, in the order `--help` lists them.
std::vector<std::string> preset_names();

/// The settings of `preset` for `task` (a built-in task, or a task family's name) as a JSON object
/// of TrainConfig keys: the family's row, then the task's own row on top. Throws InputError for an
/// unknown task or preset.
nlohmann::json task_preset(const std::string& task, const std::string& preset);

}  // namespace maskprior::training
