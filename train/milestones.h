// When a run reached a level of its main accuracy: summary.json's steps_to_50 and steps_to_95.
// A mask that helps may show as speed rather than as final accuracy (issue #10).
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

namespace maskprior::training {

/// The accuracy a run is judged by in its evaluation records: sequence_accuracy (arithmetic and
/// sequence data), top1 (vision) or accuracy (Boolean); "" when the records have none.
std::string main_accuracy_key(const std::vector<nlohmann::json>& records);

/// {"steps_to_50": step or null, "steps_to_95": step or null, "milestone_metric": key}: the first
/// evaluated step (records in order, as in metrics.jsonl) at which the main accuracy reached 0.5 /
/// 0.95. Empty object when the records have no accuracy.
nlohmann::json milestones(const std::vector<nlohmann::json>& records);

}  // namespace maskprior::training
