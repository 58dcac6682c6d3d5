// Training runs: every setting in TrainConfig (train/config.h: resolved from defaults, a preset
// and flags), a run folder (train/run_folder.h) with config, metrics, summary, weights, learned M
// and checkpoints, and exact resume (the data order is a pure function of (seed, epoch)).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "train/config.h"
#include "train/distributed.h"

namespace maskprior::training {

/// Trains as configured and returns the summary (also summary.json when config.out is set).
/// A run stopped by SIGINT (Ctrl-C), SIGTERM or `stop_after` writes a checkpoint and returns
/// {"interrupted": true, "steps", "total_steps", "wall_seconds"} and, when a signal stopped it,
/// "signal".
/// Throws InputError if config.out already holds a run.
/// With a `world` of size > 1 the run is data-parallel (train/distributed.h): every rank of the
/// world calls train() with the same config; each computes its shard of every global batch, the
/// gradients are summed, and the result is that of one process up to floating-point reduction
/// order. Rank 0 alone evaluates and writes the run folder; the others return {"rank", "steps",
/// "interrupted", "world_size"} (and "signal" when stopped by one).
nlohmann::json train(const TrainConfig& config, const World* world = nullptr);

/// Continues the run in `run_dir` from its last checkpoint; ends with the same final metrics as
/// an uninterrupted run (CPU). A finished run returns its summary. `overrides` may change only the
/// fields whose row is resumable (check_resume_overrides); a saved stop_after is not reused.
/// With a `world`, every rank resumes from the folder (which every rank must see).
nlohmann::json resume(const std::string& run_dir, const nlohmann::json& overrides = {},
                      const World* world = nullptr);

/// Sets up the run of `config` as train() does before its model is built, writing nothing: the
/// config (check_config), the device, the spec compiled at the run's sizes and checked against the
/// task's layout and the model, the data read, the memory the run needs. Throws what train() would
/// throw there; `config.out` is not looked at. `sweep` checks every combination with it before
/// its first run.
void check_run(const TrainConfig& config);

/// InputError when `device` ("auto", "cpu" or "cuda") cannot be had here: "cuda" without
/// LibTorch CUDA support or a GPU. `reproduce` and `sweep` call it before their first run.
void check_device_available(const std::string& device);

}  // namespace maskprior::training
