// The run folder's file names: what `maskc train` writes (train/run_folder.h says how) and every
// reader of a run looks for. The one place a run file's name is spelled: C++ uses these
// constants, Python reads them from the module (maskprior._maskprior.RUN_FILES).
#pragma once

#include <array>
#include <string_view>
#include <utility>

#include "io/lock_file.h"

namespace maskprior::runfolder {

inline constexpr std::string_view kConfigFile = "config.json";     // every setting, resolved
inline constexpr std::string_view kSpecFile = "spec.mask";         // the spec the run trained on
inline constexpr std::string_view kInitFile = "init.json";         // the metrics at step 0
inline constexpr std::string_view kMetricsFile = "metrics.jsonl";  // one line per evaluation
inline constexpr std::string_view kStepsJsonFile = "steps.jsonl";  // the step log
inline constexpr std::string_view kStepsCsvFile = "steps.csv";     // the step log as CSV
inline constexpr std::string_view kCheckpointFile = "checkpoint.pt";
inline constexpr std::string_view kCheckpointSumsFile = "checkpoint.json";  // its SHA-256s
inline constexpr std::string_view kFingerprintsFile = "fingerprints.json";  // what --resume checks
inline constexpr std::string_view kSummaryFile = "summary.json";  // written when a run finishes
inline constexpr std::string_view kWeightsFile = "weights.safetensors";
inline constexpr std::string_view kMaskFile = "mask.safetensors";           // the learned M
inline constexpr std::string_view kTestRowsFile = "test_rows.safetensors";  // --save-test-rows
inline constexpr std::string_view kVocabularyFile = "vocab.json";           // runs on own data
/// The lock of the process using the folder (io/lock_file.h): a run that holds one is running.
inline constexpr std::string_view kLockFile = kLockFileName;

/// Every file name above by a short key (the names Python's maskprior.run uses).
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 15> kRunFiles = {{
    {"config", kConfigFile},
    {"spec", kSpecFile},
    {"init", kInitFile},
    {"metrics", kMetricsFile},
    {"steps_json", kStepsJsonFile},
    {"steps_csv", kStepsCsvFile},
    {"checkpoint", kCheckpointFile},
    {"checkpoint_sums", kCheckpointSumsFile},
    {"fingerprints", kFingerprintsFile},
    {"summary", kSummaryFile},
    {"weights", kWeightsFile},
    {"mask", kMaskFile},
    {"test_rows", kTestRowsFile},
    {"vocabulary", kVocabularyFile},
    {"lock", kLockFile},
}};

/// The files of a run that an archive keeps (scripts/keep_runs.sh): a report reads nothing else.
inline constexpr std::array<std::string_view, 5> kArchivedFiles = {
    kConfigFile, kSummaryFile, kMetricsFile, kStepsCsvFile, kSpecFile};

/// The config.json keys that say how a run was computed, not what it computes: the settings
/// `maskc train --resume` may change (train/config.cpp's table marks its rows from this list).
/// With the seed and the run folder (`out`) they are no part of a run's settings, so runs that
/// differ only in them pool into one row of a report.
inline constexpr std::array<std::string_view, 6> kExecutionKeys = {
    "threads", "device", "precision", "progress", "stop_after", "log_every"};

/// The settings only a prior reads (config.json keys, and summary.json's spec_sha256): a run with
/// a prior and a vanilla run that differ only in these and the seed are a pair a report compares
/// ("Does the prior help?"). Every key but spec_sha256 is a row of train/config.cpp's table (a
/// test keeps them so).
inline constexpr std::array<std::string_view, 14> kPriorKeys = {
    "init",         "spec",         "spec_sha256",      "defines",           "mask_open",
    "mask_close",   "mask_sharing", "mask_param",       "mask_weight_decay", "qk_contrast",
    "qk_opt_steps", "qk_opt_lr",    "qk_opt_sequences", "length_param"};

/// The archive of a results folder's runs (runfolder/archive.h), beside its REPORT.md.
inline constexpr std::string_view kArchiveFile = "runs.jsonl.gz";

}  // namespace maskprior::runfolder
