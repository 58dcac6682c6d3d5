// The settings of a training run and the one table that describes them. Every field of
// TrainConfig is a row of `config_fields()`: its config.json key, the flag of `maskc train`, the
// help text, the allowed values or range, and whether `--resume` may change it. JSON
// (to_json / config_from_json), validation (check_config), the CLI flags and the resume
// whitelist all come from that table. No LibTorch here: the CLI includes it.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "runtime/experiment_config.h"

namespace maskprior::tasks {
struct TaskFamily;
}  // namespace maskprior::tasks

namespace maskprior::training {

/// Every setting of a run. `to_json`/`config_from_json` round-trip it (config.json of a run
/// folder). What the experiment reads (task, data, seed, model sizes, ...) is inherited from
/// runtime::ExperimentSettings, with its defaults; the rest's defaults are here. What each field
/// means is its row in config_fields().
struct TrainConfig : runtime::ExperimentSettings {
  // What to learn, besides the experiment's settings.
  std::string truth_table;  // your own Boolean function instead of a task
  std::string spec;
  std::map<std::string, std::string> defines;
  std::optional<double> mask_open;   // unset: the spec's own open value
  std::optional<double> mask_close;  // unset: the spec's own close value
  std::string init = "vanilla";
  std::string preset;  // already applied
  std::string out;

  // Optimisation.
  std::string optimizer = "adam";
  double lr = 1e-5;
  double weight_decay = 1e-3;
  std::optional<double> mask_weight_decay;  // unset: the same as weight_decay
  int64_t epochs = 20;
  int64_t steps = 0;
  int64_t batch_size = 256;
  std::string schedule = "constant";
  int64_t warmup = 0;

  // Initialisation details (runtime/init.h InitOptions).
  double qk_contrast = 10.0;
  int64_t qk_opt_steps = 1000;
  double qk_opt_lr = 1e-2;
  int64_t qk_opt_sequences = 64;      // qk-opt: probe sequences whose layer-0 rows the fit targets
  std::string mask_sharing = "spec";  // mask methods: spec | layer | head
  // Runs over several sizes (train/sized_prior.h): the spec's parameter that sets the size, and
  // how a learnable prior is held: one logit per cell (one size only) or per rule of the spec.
  std::string length_param = "n";
  std::string mask_param = "cells";  // cells | rules

  // Execution.
  int threads = 0;
  std::string device = "auto";
  std::string precision = "fp32";
  int64_t eval_every = 0;
  int64_t checkpoint_every = 0;
  int64_t probe_size = 256;
  bool progress = true;
  int64_t stop_after = 0;
  int64_t log_every = 10;  // steps between lines of the step log (train/step_log.h)

  // Not a setting (no row of the table, never in config.json): `maskc train --save-test-rows`
  // writes test_rows.safetensors into the run folder when the run finishes.
  bool save_test_rows = false;
};

/// What a field's value must satisfy (check_config).
enum class FieldRule {
  kAny,
  kNonEmpty,      // a string that must be given
  kPositive,      // > 0
  kNonNegative,   // >= 0
  kFraction,      // in (0, 1]
  kProbability,   // in [0, 1)
  kThreadCount,   // in [0, kMaxThreads] (core/machine.h)
  kOneOf,         // one of `allowed`
  kOneOfOrEmpty,  // one of `allowed`, or "" (none)
};

/// Pointer to the field's member of TrainConfig, by type. An optional field is unset when its flag
/// is not given; config.json writes it as null, and its rule applies to a value that is set.
using FieldMember =
    std::variant<std::string TrainConfig::*, std::map<std::string, std::string> TrainConfig::*,
                 bool TrainConfig::*, int TrainConfig::*, int64_t TrainConfig::*,
                 uint64_t TrainConfig::*, double TrainConfig::*,
                 std::optional<double> TrainConfig::*>;

/// One row of the config table.
struct ConfigField {
  std::string key;    // config.json key (and the name in error messages)
  std::string flags;  // CLI11 names of the `maskc train` flag, e.g. "--lr" or "-q,--quiet"
  std::string help;   // help text of the flag
  FieldMember member;
  FieldRule rule = FieldRule::kAny;
  std::vector<std::string> allowed = {};  // kOneOf / kOneOfOrEmpty: the values, in help order
  bool resumable = false;                 // `--resume` may change it (execution settings only)
};

/// The table: every field of TrainConfig once, in the order `maskc train --help` lists them.
/// A bool field's flag takes no value and sets the opposite of the field's default; the map field
/// (`defines`) is given as repeated -D NAME=VALUE.
const std::vector<ConfigField>& config_fields();
/// The row of `key`; InputError for an unknown key.
const ConfigField& config_field(const std::string& key);
/// Keys of the fields `--resume` may change, in table order.
std::vector<std::string> resumable_keys();

/// The key of config.json that says how it spells its values: kConfigFormat since unset optional
/// fields are null. A config without it was written before: there `mask_open` and `mask_close`
/// 0 and a negative `mask_weight_decay` meant what unset means now, and are read as unset.
inline constexpr const char* kConfigFormatKey = "config_format";
inline constexpr int kConfigFormat = 2;

/// The key of a run's config.json under which the run records what it made of its settings
/// (the device and threads it used, the spec's open and close values, its steps); read back, it
/// is ignored: the settings are the other keys.
inline constexpr const char* kResolvedKey = "resolved";

/// The settings that name files of the user's own data. config.json's `resolved.data_files`
/// records each given one's absolute path and SHA-256 (train.cpp), by which `maskc distill` finds
/// it from any folder (distill.cpp).
inline constexpr std::pair<const char*, std::string TrainConfig::*> kDataFileSettings[] = {
    {"data", &TrainConfig::data},
    {"test_data", &TrainConfig::test_data},
    {"truth_table", &TrainConfig::truth_table}};

/// Every field by its key (unset optional fields as null), and kConfigFormatKey.
nlohmann::json to_json(const TrainConfig& config);
/// The task family of a run (tasks::family_of_run of its settings).
const tasks::TaskFamily& family_of(const TrainConfig& config);
/// A run's config.json: to_json(config) without the keys its task family does not read
/// (tasks::foreign_settings: they hold their defaults), and `resolved` under kResolvedKey.
nlohmann::json run_config_json(const TrainConfig& config, const nlohmann::json& resolved);
/// Reads a config (of either format, see kConfigFormatKey); unknown keys or wrong types throw
/// InputError naming the key.
TrainConfig config_from_json(const nlohmann::json& json);
/// Checks the value of `field` in `config` against its row (range, allowed values, finite);
/// InputError naming the field otherwise ("lr must be positive, got -1").
void check_field(const ConfigField& field, const TrainConfig& config);
/// Checks every value against its row (ranges, allowed values; every floating value finite) and
/// that the init method has the spec it needs; InputError naming the field otherwise.
void check_config(const TrainConfig& config);

/// InputError when `config` trains no step (epochs and steps 0). `maskc train` and `maskc sweep`
/// refuse such a run; train() itself takes it (step 0's metrics alone).
void check_trains_a_step(const TrainConfig& config);

/// Builds the resolved config: defaults, then `preset` for `task` (quick or paper; "" = none),
/// then `overrides` (JSON object of TrainConfig keys, e.g. the flags given on the command line).
/// With no task, the preset is that of the runs on your own data the overrides name (`data` or
/// `truth_table`, train/presets.h).
/// Throws InputError for an unknown preset, task or key, or an invalid value.
TrainConfig resolve_config(const std::string& task, const std::string& preset,
                           const nlohmann::json& overrides);

/// Throws InputError unless every key of `overrides` (a JSON object or null) is a field
/// `--resume` may change; the message names the key and the keys that may change.
void check_resume_overrides(const nlohmann::json& overrides);

/// What an experiment (runtime/experiment.h) is built from: the experiment's settings of `config`
/// (a run on sequence data files adds the spec's layout, train/run_experiment.cpp).
runtime::ExperimentConfig experiment_config(const TrainConfig& config);

}  // namespace maskprior::training
