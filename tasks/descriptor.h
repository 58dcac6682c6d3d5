// A task family's descriptor (the types): its tasks, preset rows, metrics (headline first, with
// title, unit and direction), the run settings it fills into a spec, its paper numbers and its
// `maskc reproduce` suites. The registry of families is tasks/family.h; the built-in
// descriptors are tasks/*_family.cpp (tasks/families.h).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/layout.h"
#include "tasks/truth_table.h"

namespace maskprior::tasks {

/// Which way a metric improves.
enum class Better { kHigher, kLower };

/// A metric a family reports, under its key in metrics.jsonl and summary.json.
struct Metric {
  std::string key;    // e.g. "sequence_accuracy"
  std::string title;  // short, for table columns and plot axes: "sequence acc"
  std::string label;  // in sentences and progress lines: "sequence accuracy"
  std::string unit;   // "%" for a share in [0, 1] shown ×100; else the unit, or "" for none
  Better better = Better::kHigher;
  bool in_tables = true;  // a column of reproduce's results.md (the summary line shows them all)

  /// A share in [0, 1], shown as a percentage.
  bool is_share() const { return unit == "%"; }
  /// The title with its unit when it is a percentage: "sequence acc %".
  std::string column() const { return is_share() ? title + " %" : title; }
};

/// The paper's number for one task and init, for the report's *paper* column; `setting` holds the
/// config keys a run must match for the number to apply (e.g. the paper's train fraction).
struct PaperNumber {
  std::string task, init, value;
  nlohmann::json setting = nlohmann::json::object();
};

/// A suite row whose spec is learned rather than written: `maskc distill` (train/distill.h) of the
/// run of another row of the suite with the same seed, made once that run has finished.
struct DistilledFrom {
  std::string row;                 // the label of the row whose runs are distilled
  std::string from = "attention";  // attention | mask
  std::string per = "model";       // head | layer | model
  double mass = 0.9;               // attention: the share of each query row's attention kept
};

/// One row of a reproduce suite: a task trained with one init (and overrides) over the seeds.
struct SuiteRun {
  std::string label;  // row label, also its folder in the results folder
  std::string task;
  /// Relative to maskc's share folder (specs/...); "" = none. For a distilled row, the
  /// hand-written spec its distilled one is compared with (`maskc diff`), and that stands in for
  /// it in a dry run's timing (the spec does not change the time of a step).
  std::string spec;
  std::string init;
  nlohmann::json overrides = nlohmann::json::object();  // config keys beyond the preset
  std::optional<DistilledFrom> distilled =
      std::nullopt;  // set: the run's spec is distilled from that row's run
};

/// A named suite of `maskc reproduce`.
struct Suite {
  std::string name;
  std::string description;  // one line, for --help
  int default_seeds = 5;
  std::vector<SuiteRun> runs;
};

/// Everything maskprior knows about a family apart from its experiment.
struct TaskFamily {
  std::string name;   // "boolean", "arithmetic", ...: the preset rows' and experiment's key
  std::string title;  // for headings: "Boolean GOTU"
  std::vector<std::string> tasks;  // its built-in tasks; none for a family of your own data
  /// For a family of your own data: the config key that selects it when given (`data`,
  /// `truth_table`); "" for a family of built-in tasks.
  std::string input_key;
  /// Preset name → config keys ("quick", "paper"), and task → preset → keys merged on top.
  nlohmann::json presets = nlohmann::json::object();
  nlohmann::json task_presets = nlohmann::json::object();
  /// What a run reports, headline first: its progress line, summary line and tables.
  std::vector<Metric> metrics;
  /// The metric REPORT.md's "Does the prior help?" compares a prior with vanilla by, when it is
  /// not the headline (Boolean tasks: unseen_accuracy, the points the task asks a model to
  /// extrapolate to); "": the headline.
  std::string judged_by;
  /// Learned-function diagnostics shown after the persistence columns of the tables.
  std::vector<Metric> diagnostics;
  /// Parameters of a .mask spec that a run fills from the config key of the same name unless -D
  /// gives them (Boolean tasks: `n` bits; language: `n` tokens of context).
  std::vector<std::string> spec_params;
  /// Settings (config keys) that only some families read, among them this family's: a run of a
  /// family that does not list one must leave it at its default (train/config.cpp check_config).
  std::vector<std::string> own_settings;
  /// The digit order of each span with digits (span → order) that a run's data has under its
  /// settings `config` (a config.json): a .mask spec is compiled with them in place of its
  /// `digits` declarations, so one spec serves every order (CompileOptions::digit_orders).
  /// Null for families whose data has no digits.
  std::function<std::map<std::string, DigitOrder>(const nlohmann::json& config)> digit_orders;
  /// The data a run's config describes, for the report's settings table ("n = 15").
  std::function<std::string(const nlohmann::json& config)> describe_data;
  /// A Boolean target on the cube (the report shows the validator's min-degree interpolator);
  /// null for families whose target is not one.
  std::function<TruthTable(const std::string& task, int n)> truth_table;
  std::vector<PaperNumber> paper;
  std::vector<Suite> suites;
  /// This family's runs in `maskc reproduce demo`.
  std::vector<SuiteRun> demo;
  /// This family's runs in `maskc reproduce distill` (priors distilled from data-rich runs against
  /// the hand-written spec and vanilla), sources first.
  std::vector<SuiteRun> distill;

  /// The metric a run is judged by: metrics.front().
  const Metric& headline() const;
  /// The metric `key` of this family (its metrics or diagnostics); nullptr if none.
  const Metric* find_metric(const std::string& key) const;
  /// The paper's number for `task` and `init` under `config` (a run's config.json); nullopt when
  /// the paper has none or the run's setting differs from the paper's.
  std::optional<std::string> paper_number(const std::string& task, const std::string& init,
                                          const nlohmann::json& config) const;
};

}  // namespace maskprior::tasks
