// The run folder's file names: what `maskc train` writes and every reader of a run looks for.
// The archive of a results folder (runfolder/archive.h) keeps the small ones.
#pragma once

#include <array>
#include <string_view>

namespace maskprior::runfolder {

inline constexpr std::string_view kConfigFile = "config.json";     // every setting, resolved
inline constexpr std::string_view kSummaryFile = "summary.json";   // written when a run finishes
inline constexpr std::string_view kMetricsFile = "metrics.jsonl";  // one line per evaluation
inline constexpr std::string_view kStepsCsvFile = "steps.csv";     // the step log as CSV
inline constexpr std::string_view kSpecFile = "spec.mask";         // the spec the run trained on

/// The files of a run that an archive keeps (scripts/keep_runs.sh): a report reads nothing else.
inline constexpr std::array<std::string_view, 5> kArchivedFiles = {
    kConfigFile, kSummaryFile, kMetricsFile, kStepsCsvFile, kSpecFile};

/// The config.json keys that say how a run was computed, not what it computes: the settings
/// `maskc train --resume` may change (train/config.cpp's table marks its rows from this list).
/// With the seed and the run folder (`out`) they are no part of a run's settings, so runs that
/// differ only in them pool into one row of a report.
inline constexpr std::array<std::string_view, 6> kExecutionKeys = {
    "threads", "device", "precision", "progress", "stop_after", "log_every"};

/// The archive of a results folder's runs (runfolder/archive.h), beside its REPORT.md.
inline constexpr std::string_view kArchiveFile = "runs.jsonl.gz";

}  // namespace maskprior::runfolder
