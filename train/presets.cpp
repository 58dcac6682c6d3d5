#include "train/presets.h"

#include <fmt/format.h>

#include "core/error.h"
#include "tasks/family.h"

namespace maskprior::training {

using nlohmann::json;

std::vector<std::string> preset_names() {
  return {kPresetQuick, kPresetPaper};
}

json task_preset(const std::string& task, const std::string& preset) {
  // A family's name (the runs on your own data) or a built-in task's.
  const tasks::TaskFamily* family = tasks::find_family(task);
  if (family == nullptr) family = &tasks::family_of_task(task);
  if (!family->presets.contains(preset)) {
    throw InputError(
        fmt::format("unknown preset '{}' (expected {} or {})", preset, kPresetQuick, kPresetPaper));
  }
  json settings = family->presets.at(preset);
  settings.update(family->task_presets.value(task, json::object()).value(preset, json::object()));
  return settings;
}

}  // namespace maskprior::training
