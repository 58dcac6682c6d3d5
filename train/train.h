// Training runs: every setting in TrainConfig (resolved from defaults, a preset and flags), a run
// folder with config.json, metrics.jsonl, summary.json, weights, learned M and checkpoints, and
// exact resume (the data order is a pure function of (seed, epoch)).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>

#include "runtime/experiment_config.h"

namespace maskprior::training {

/// Every setting of a run. `to_json`/`from_json` round-trip it (config.json of a run folder).
struct TrainConfig {
  // What to learn.
  std::string task;                            // parity2, maj3, cyclic3, threesym, addition, ...
  std::string spec;                            // .mask or .safetensors; empty = none
  std::map<std::string, std::string> defines;  // -D name=value for compiling a .mask spec
  // Override the spec's `scale` (maskc compile --open/--close) for a .mask spec; 0 = the spec's.
  // For contrast ablations (±1, ±3, ±5); explicit values in the spec are untouched.
  double mask_open = 0;
  double mask_close = 0;
  std::string init = "vanilla";  // see runtime/init.h
  std::string preset;            // "", quick, paper (already applied)
  uint64_t seed = 0;
  std::string out;                // run folder; empty = none written
  int n = 15;                     // Boolean tasks: input bits
  double train_fraction = 0.004;  // arithmetic tasks: share of problems trained on
  int64_t test_size = 10000;      // arithmetic tasks: problems evaluated

  // Model.
  int64_t dim = 256;
  int64_t depth = 12;
  int64_t heads = 6;
  int64_t head_dim = 64;
  int64_t mlp = 256;

  // Optimisation.
  std::string optimizer = "adam";  // adam | adamw
  double lr = 1e-5;
  double weight_decay = 1e-3;
  // Weight decay of a learnable M; < 0 = the same as weight_decay (what one Adam over all
  // parameters does, as in the paper). Adam's coupled decay shrinks M by about lr per step.
  double mask_weight_decay = -1;
  int64_t epochs = 20;
  int64_t batch_size = 256;
  std::string schedule = "constant";  // constant | cosine (after warm-up)
  int64_t warmup = 0;                 // linear warm-up steps

  // Initialisation details (runtime/init.h InitOptions).
  double qk_contrast = 10.0;
  int64_t qk_opt_steps = 1000;
  double qk_opt_lr = 1e-2;

  // Execution.
  int threads = 0;               // 0 = LibTorch's default
  std::string device = "auto";   // auto | cpu | cuda
  int64_t eval_every = 0;        // steps between evaluations; 0 = at the end of every epoch
  int64_t checkpoint_every = 0;  // steps between checkpoints; 0 = at the end of every epoch
  int64_t probe_size = 256;      // sequences in the fixed probe batch (attention metrics)
  bool progress = true;          // progress bar / periodic lines on stderr
  int64_t stop_after = 0;        // stop (checkpointed, as if interrupted) after this step; 0 = no
};

nlohmann::json to_json(const TrainConfig& config);
/// The settings an experiment (runtime/experiment.h) is built from.
runtime::ExperimentConfig experiment_config(const TrainConfig& config);
/// Reads a config; unknown keys or wrong types throw InputError naming the key.
TrainConfig config_from_json(const nlohmann::json& json);

/// Builds the resolved config: defaults, then `preset` for `task` (quick or paper; "" = none),
/// then `overrides` (JSON object of TrainConfig keys, e.g. the flags given on the command line).
/// Throws InputError for an unknown preset, task or key, or an invalid value.
TrainConfig resolve_config(const std::string& task, const std::string& preset,
                           const nlohmann::json& overrides);
/// Checks every value (sizes positive, known optimizer/schedule/device/init); InputError otherwise.
void check_config(const TrainConfig& config);

/// Trains as configured and returns the summary (also summary.json when config.out is set).
/// A run stopped by Ctrl-C or `stop_after` writes a checkpoint and returns a summary with
/// "interrupted": true.
nlohmann::json train(const TrainConfig& config);
/// Continues the run in `run_dir` from its last checkpoint; ends with the same final metrics as an
/// uninterrupted run (CPU). `overrides` may change execution settings only (threads, device,
/// progress, stop_after).
nlohmann::json resume(const std::string& run_dir, const nlohmann::json& overrides = {});

/// Reads a JSON file of a run folder; InputError naming the file if unreadable or not JSON.
nlohmann::json read_json_file(const std::string& path);
/// Writes `value` as indented JSON atomically (temporary file + rename).
void write_json_file(const std::string& path, const nlohmann::json& value);

}  // namespace maskprior::training
