// Training runs: every setting in TrainConfig (train/config.h: resolved from defaults, a preset
// and flags), a run folder (train/run_folder.h) with config, metrics, summary, weights, learned M
// and checkpoints, and exact resume (the data order is a pure function of (seed, epoch)).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "train/config.h"

namespace maskprior::training {

/// Trains as configured and returns the summary (also summary.json when config.out is set).
/// A run stopped by SIGINT (Ctrl-C), SIGTERM or `stop_after` writes a checkpoint and returns
/// {"interrupted": true, "steps", "wall_seconds"} and, when a signal stopped it, "signal".
/// Throws InputError if config.out already holds a run.
nlohmann::json train(const TrainConfig& config);

/// Continues the run in `run_dir` from its last checkpoint; ends with the same final metrics as
/// an uninterrupted run (CPU). A finished run returns its summary. `overrides` may change only the
/// fields whose row is resumable (check_resume_overrides); a saved stop_after is not reused.
nlohmann::json resume(const std::string& run_dir, const nlohmann::json& overrides = {});

}  // namespace maskprior::training
