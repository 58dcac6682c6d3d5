// `maskc report DIR`: reads the run folders under DIR (a `maskc reproduce` results folder, or any
// folder of runs) and writes DIR/REPORT.md with PNG plots in DIR/plots: per task a table of the
// final metrics (mean ± std over seeds) next to the paper's number and the validator's min-degree
// interpolator, steps to 50% and 95%, the settings of the runs, and plots of the metric per init
// with its seed spread, learning curves, prior mass and drift over training, accuracy against the
// train fraction when a suite sweeps it, and learned Fourier coefficients over training.
// No LibTorch: it reads the JSON files a run leaves (config.json, summary.json, metrics.jsonl).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runfolder/runs.h"
#include "tasks/family.h"

namespace maskprior::report {

// The runs a report reads (runfolder/runs.h), by the names report code uses.
using runfolder::differing_keys;
using runfolder::execution_keys;
using runfolder::group_runs;
using runfolder::LeftOut;
using runfolder::metric_value;
using runfolder::read_rows;
using runfolder::read_run;
using runfolder::RunRecord;
using runfolder::settings_of;
using ReportRow = runfolder::RunRow;

/// The summary metric a row is judged by: its task family's headline (sequence_accuracy, top1,
/// accuracy, test_bpc, ...); nullopt when no summary of the row has it.
std::optional<std::string> headline_metric(const ReportRow& row);
/// First step at which `key` (a metrics.jsonl value) reached `threshold`; nullopt if never.
std::optional<int64_t> steps_to(const RunRecord& run, const std::string& key, double threshold);
/// The paper's number for a row (its family's, docs/paper.md), as text, or "—": only for the
/// paper's own setting (for mask inits, the task's shipped spec `<task>.mask`; the setting the
/// family's number names, e.g. arithmetic at the paper's train fraction).
std::string paper_number(const ReportRow& row);

/// What makes a prior row of "Does the prior help?" a positive control: at least `points` points
/// of % above vanilla on each of at least `seeds` seeds (a share metric where higher is better;
/// others are not labelled).
struct ControlCriterion {
  double points = 30.0;
  int seeds = 3;
};

struct ReportOptions {
  std::string dir;        // the results folder
  std::string share_dir;  // where specs/ lives (for the validator's MDI of relative spec paths)
  std::string metric;     // the summary.json key the tables and plots judge by; "": each
                          // family's headline
  bool per_run = false;   // also a table of each run (seed by seed) per section
  ControlCriterion control{};  // "Does the prior help?"'s positive-control label
};

/// Writes DIR/REPORT.md and DIR/plots/*.png; returns the path of REPORT.md. Runs that cannot be
/// reported are listed there as left out (and in `*left_out` when given), runs not finished yet
/// (running or stopped) as not finished (and in `*unfinished` when given). InputError when
/// options.metric is set and no run's summary has a number under it (naming the keys that do),
/// when the positive-control criterion is out of range, or when DIR/plots is a symlink or no
/// folder.
std::string write_report(const ReportOptions& options, std::vector<LeftOut>* left_out = nullptr,
                         std::vector<runfolder::Unfinished>* unfinished = nullptr);

}  // namespace maskprior::report
