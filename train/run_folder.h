// The run folder of `maskc train --out DIR`: every file a run writes and how (the names are
// runfolder/run_files.h's).
//   config.json          the resolved TrainConfig (written when the run starts) without the
//                        settings its task family does not read, and what the run made of it
//                        under "resolved": device and threads used, the spec's open and close
//                        values, steps (train/config.h run_config_json)
//   spec.mask            a copy of the .mask spec's source as the run read it
//   steps.jsonl, .csv    the step log: loss, learning rate, gradient norm every --log-every
//                        steps (train/step_log.h)
//   init.json            the metrics at step 0 and what the initialisation did
//   metrics.jsonl        one JSON object per evaluation (step 0 first)
//   checkpoint.pt        model, optimizer and run state (train/checkpoint.h)
//   checkpoint.json      the SHA-256 of the checkpoints written and the evaluations each follows
//   fingerprints.json    the run as created: config.json's content and the SHA-256 of the spec
//                        and data files, which --resume checks (train/fingerprints.h)
//   summary.json         the final metrics (only once the run has finished)
//   weights.safetensors  every parameter and buffer, with the config in the metadata
//   mask.safetensors     the learned M as a mask file (runs whose model carries M)
//   test_rows.safetensors  `--save-test-rows` only: the rows the test metrics read (inputs,
//                        targets) and how (metadata "info"), for maskprior.load_run in Python
//   vocab.json           --data runs: the vocabulary (token id = index) and where the data came
//   from
//   .lock                the lock of the process using the folder (io/lock_file.h): one
//                        `maskc train` at a time, fresh or --resume; removed when it ends
// A run folder with an empty path is "no folder": every write is skipped. No LibTorch here; the
// tensors of weights and mask come from train/model_files.h.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/compiled_mask.h"
#include "io/safetensors.h"
#include "runfolder/run_files.h"
#include "train/config.h"

namespace maskprior::training {

// The names of the files, spelled once for every reader and writer (runfolder/run_files.h).
using runfolder::kCheckpointFile;
using runfolder::kCheckpointSumsFile;
using runfolder::kConfigFile;
using runfolder::kFingerprintsFile;
using runfolder::kInitFile;
using runfolder::kMaskFile;
using runfolder::kMetricsFile;
using runfolder::kSpecFile;
using runfolder::kStepsCsvFile;
using runfolder::kStepsJsonFile;
using runfolder::kSummaryFile;
using runfolder::kTestRowsFile;
using runfolder::kVocabularyFile;
using runfolder::kWeightsFile;

class RunFolder {
 public:
  explicit RunFolder(std::string path) : path_(std::move(path)) {}

  /// False for the empty path (a run without --out).
  bool enabled() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  /// The path of the file `name` in the folder.
  std::string file(std::string_view name) const;
  /// True when the folder holds the file `name`.
  bool has(std::string_view name) const;
  /// True when the folder holds a run (config.json) killed before its first checkpoint: no
  /// checkpoint.pt and no summary.json. Such a run cannot be resumed; a new one may replace it.
  bool never_checkpointed() const;
  /// Removes the files a run writes (every file named above), leaving the folder itself and
  /// anything else in it.
  void clear_run() const;
  /// The files of a run (named above) that the folder holds although it has no config.json: what
  /// is left of some other run, which a new run must not take over (nor append to).
  std::vector<std::string> files_without_config() const;

  /// Creates the folder and writes config.json (run_config_json: `config` and `resolved`).
  /// InputError if it cannot be created.
  void create(const TrainConfig& config, const nlohmann::json& resolved) const;
  /// Copies the source of the .mask spec `spec_path` into spec.mask (a tensor file is not
  /// copied: config.json names it).
  void copy_spec(const std::string& spec_path) const;
  /// Reads a JSON file of the folder; InputError naming it if missing or not JSON.
  nlohmann::json read_json(std::string_view name) const;
  /// The run's settings: config.json with `overrides` (a JSON object, or null) merged over it,
  /// and its content as written in `written` when given. InputError naming the folder or file:
  /// no config.json ("DIR is not a run folder (no config.json)"), not a JSON object, or a
  /// setting this maskc does not know or accept ("FILE: error: ...").
  TrainConfig read_config(const nlohmann::json& overrides = nullptr,
                          nlohmann::json* written = nullptr) const;
  /// Writes a JSON file of the folder atomically.
  void write_json(std::string_view name, const nlohmann::json& value) const;

  /// Starts metrics.jsonl of a new run with its first record (replacing any file there).
  void start_metrics(const nlohmann::json& record) const;
  /// Appends one evaluation record to metrics.jsonl: the whole line or, on a write error (full
  /// disk), nothing (io/atomic_file.h append_file).
  void append_metrics(const nlohmann::json& record) const;
  /// Keeps the metrics.jsonl records up to `step` (a resumed run writes the later ones again)
  /// and returns them. A last line cut short (a process killed while appending) is dropped;
  /// any other line that is not a JSON object is an InputError naming the file and line. The
  /// file is read as every input is (a regular file — a FIFO is refused, not waited on — of at
  /// most kMaxJsonBytes); a missing file holds no records.
  std::vector<nlohmann::json> truncate_metrics(int64_t step) const;

  /// Writes weights.safetensors: `tensors` with the format and `config` in the metadata.
  void write_weights(SafetensorsData tensors, const TrainConfig& config) const;
  /// Writes test_rows.safetensors.
  void write_test_rows(const SafetensorsData& rows) const;
  /// Writes mask.safetensors.
  void write_mask(const CompiledMask& mask) const;

 private:
  std::string path_;
};

}  // namespace maskprior::training
