// When a run reached a level of its headline accuracy: summary.json's steps_to_50 and
// steps_to_95. A mask that helps may show as speed rather than as final accuracy.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "tasks/family.h"

namespace maskprior::training {

/// {"steps_to_50": step or null, "steps_to_95": step or null, "headline_metric": key}: the first
/// evaluated step (records in order, as in metrics.jsonl) at which `headline` — the run's task
/// family's headline metric — reached 0.5 / 0.95. Empty object when the headline is not an
/// accuracy (a share where higher is better) or no record has it.
nlohmann::json milestones(const std::vector<nlohmann::json>& records,
                          const tasks::Metric& headline);

}  // namespace maskprior::training
