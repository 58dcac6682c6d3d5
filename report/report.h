// `maskc report DIR`: reads the run folders under DIR (a `maskc reproduce` results folder, or any
// folder of runs) and writes DIR/REPORT.md with PNG plots in DIR/plots: per task a table of the
// final metrics (mean ± std over seeds) next to the paper's number and the validator's min-degree
// interpolator, steps to 50% and 95%, the settings of the runs, and plots of the metric per init
// with its seed spread, learning curves, prior mass and drift over training, accuracy against the
// train fraction when a suite sweeps it, and learned Fourier coefficients over training.
// No LibTorch: it reads the JSON files a run leaves (config.json, summary.json, metrics.jsonl).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "tasks/family.h"

namespace maskprior::report {

/// One finished run folder.
struct RunRecord {
  std::string dir;                      // the folder
  std::string row;                      // its row: the folder's parent relative to the report root
  nlohmann::json config, summary;       // config.json, summary.json
  std::vector<nlohmann::json> metrics;  // metrics.jsonl, in order
};

/// A group of runs that differ only by seed.
struct ReportRow {
  std::string label;
  std::string task, init, spec;
  const tasks::TaskFamily* family = nullptr;  // of the first run (tasks::family_of_run)
  double train_fraction = 0;                  // arithmetic tasks
  std::vector<RunRecord> runs;
};

/// A metric in a summary or metrics record: a number, or the mean of a per-layer list; NaN when
/// absent or not a number.
double metric_value(const nlohmann::json& record, const std::string& key);
/// The summary metric a row is judged by: its task family's headline (sequence_accuracy, top1,
/// accuracy, test_bpc, ...); nullopt when no summary of the row has it.
std::optional<std::string> primary_metric(const ReportRow& row);
/// First step at which `key` (a metrics.jsonl value) reached `threshold`; nullopt if never.
std::optional<int64_t> steps_to(const RunRecord& run, const std::string& key, double threshold);
/// The paper's number for a row (its family's, docs/paper.md), as text, or "—": only for the
/// paper's own setting (for mask inits, the task's shipped spec `<task>.mask`; the setting the
/// family's number names, e.g. arithmetic at the paper's train fraction).
std::string paper_number(const ReportRow& row);

/// Every finished run folder under `root` (folders with config.json and summary.json; interrupted
/// runs are skipped), grouped into rows by their parent folder, in folder order. Throws InputError
/// when `root` is no folder or holds no finished run, a JSON file does not parse (naming it), or a
/// run's task belongs to no known family (naming the run).
std::vector<ReportRow> read_rows(const std::string& root);

struct ReportOptions {
  std::string dir;         // the results folder
  std::string source_dir;  // where specs/ lives (for the validator's MDI of relative spec paths)
};

/// Writes DIR/REPORT.md and DIR/plots/*.png; returns the path of REPORT.md.
std::string write_report(const ReportOptions& options);

}  // namespace maskprior::report
