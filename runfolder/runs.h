// Runs as data: a finished run folder read into memory (config.json, summary.json,
// metrics.jsonl), checked, its settings (what it learns: config.json without the seed, the folder
// and the execution settings), runs grouped into rows of equal settings (only seeds pool), and
// every finished run under a folder or in its archives (runs.jsonl.gz). What maskc report, the
// tables of reproduce and sweep, and the dashboard (serve/) read runs with. No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runfolder/run_state.h"
#include "tasks/family.h"

namespace maskprior::runfolder {

/// One finished run folder.
struct RunRecord {
  std::string dir;                      // the folder
  std::string row;                      // the folder's parent relative to the report root ("" for
                                        // the root itself): runs of one row share it
  nlohmann::json config, summary;       // config.json, summary.json
  std::vector<nlohmann::json> metrics;  // metrics.jsonl, in order
  /// For a run whose spec.mask `maskc distill` wrote: where it came from (compiler/write_spec.h
  /// distilled_origin); "" otherwise.
  std::string distilled;
  /// Its spec.mask, the source it trained on (at most kMaxKeptSpecBytes; "" when it has none or a
  /// larger one): a report validates it wherever the run or its archive now is.
  std::string spec_source;
};

/// The largest spec.mask a RunRecord keeps in memory: far above any real spec (a few KB).
inline constexpr uint64_t kMaxKeptSpecBytes = uint64_t{1} << 20;

/// kExecutionKeys (run_files.h): the config.json keys that say how a run was
/// computed, not what it computes, the rows of the config table that `maskc train --resume` may
/// change. With the seed and the run folder (`out`) they are no part of a run's settings, so runs
/// that differ only in them pool into one row.
const std::vector<std::string>& execution_keys();

/// What a run learns and how: its config.json without the seed, `out`, `config_format`,
/// `resolved`, execution_keys() and the keys its family does not read
/// (tasks::foreign_settings), plus the SHA-256 of its spec's source when summary.json records it
/// (`spec_sha256`). Runs pool into a row only when these are equal. A run trained on a distilled
/// spec has "distilled (ORIGIN)" as its spec instead (RunRecord::distilled): the runs of a row
/// distil from their own seed's run, so their specs differ as seeds do.
nlohmann::json settings_of(const RunRecord& run);

/// A group of runs of one folder whose settings are equal: they differ only by seed.
struct RunRow {
  std::string label;    // the folder; with what differs from the folder's other rows, if any
                        // ("runs/s init=mask, pos_init_std=0.02"; "init=mask" in the root)
  std::string subject;  // what the runs learn: the task, or the data or truth-table file
  std::string task, init, spec;
  const tasks::TaskFamily* family = nullptr;  // of the first run (tasks::family_of_run)
  double train_fraction = 0;                  // arithmetic tasks
  nlohmann::json settings;  // settings_of() every run of the row (group_runs: with a setting
                            // an older run lacks filled in from its folder)
  std::vector<RunRecord> runs;
};

/// The most bytes of one run's metrics.jsonl, and of all runs' together, that a report reads: a
/// report holds every evaluation record in memory.
inline constexpr uint64_t kMaxMetricsBytes = uint64_t{64} << 20;
inline constexpr uint64_t kMaxReportMetricsBytes = uint64_t{512} << 20;

/// Reads the run folder `dir` (config.json, summary.json, metrics.jsonl, at most
/// `max_metrics_bytes` of it); nullopt when it is not finished (no summary.json, or an interrupted
/// run's). InputError names a file that does not parse or is too large, or a value no run can have
/// (check_run).
std::optional<RunRecord> read_run(const std::string& dir,
                                  uint64_t max_metrics_bytes = kMaxMetricsBytes);

/// InputError naming the file and value when a run holds what no run can: a config.json or
/// summary.json that is not an object, a setting a report reads by type with another type (a task
/// that is not text, a depth that is not a whole number, ...), a number beyond ±1e300 in
/// summary.json (it would print as inf once averaged), a negative count of steps, or evaluation
/// records whose steps are negative or go back.
void check_run(const RunRecord& run);
/// A finished run folder that a report leaves out, and why (a file that does not parse, a task of
/// no known family, a value no run can have, more metrics than a report reads, or a second run of
/// a seed its row already has).
struct LeftOut {
  std::string dir, reason;
};

/// Groups runs into rows, in the order of their first run: runs pool only when they share their
/// row folder (RunRecord::row) and their settings (settings_of). A setting that a run's config.json
/// lacks (written by a build before the setting existed) takes the one value the other runs of its
/// folder record, so a folder that a later build resumed or grew stays one row; runs of a folder
/// that record different values stay apart. A seed counts once in a row: a
/// later run of a seed the row already has (a copied run folder) is left out, and listed in
/// `duplicates` when given. `root_name` labels the rows of the root folder when they are its only
/// ones. Throws InputError naming a run whose task belongs to no known family.
std::vector<RunRow> group_runs(std::vector<RunRecord> runs, const std::string& root_name,
                               std::vector<LeftOut>* duplicates = nullptr);

/// The keys whose values differ between the JSON objects `settings` (a key one object lacks reads
/// as null there), sorted: what runs or rows differ in. Empty for fewer than two objects.
std::vector<std::string> differing_keys(const std::vector<const nlohmann::json*>& settings);

/// A metric in a summary or metrics record: a number, or the mean of a per-layer list; NaN when
/// absent or not a number.
double metric_value(const nlohmann::json& record, const std::string& key);
/// A run folder under a report's root that has not finished: it is running, or it stopped
/// (interrupted or killed) and resumes when its command runs again. A report leaves it out.
struct Unfinished {
  std::string dir;
  RunState state;        // kRunning or kStopped
  std::string progress;  // how far it has got when the walk found it (progress_text)
};

/// The run folders under `root` (a folder or a run folder) that have not finished, in natural
/// folder order: what a report of a study in progress does not show yet.
std::vector<Unfinished> unfinished_runs(const std::string& root);

/// Every finished run folder under `root` (folders with config.json and summary.json; interrupted
/// runs are skipped) and in its archives (runfolder/archive.h), in natural folder order, grouped
/// into rows by group_runs. A run that cannot be read (LeftOut) goes to `left_out` when it is
/// given, and otherwise throws InputError naming the run and what is wrong. Throws InputError when
/// `root` is no folder or holds no finished run (naming those left out and those not finished).
/// The run folders under `root` that have not finished go to `unfinished` when given (the same
/// walk as the finished ones).
std::vector<RunRow> read_rows(const std::string& root, std::vector<LeftOut>* left_out = nullptr,
                              std::vector<Unfinished>* unfinished = nullptr);

}  // namespace maskprior::runfolder
