// `maskc reproduce`: named suites of training runs (the paper's comparisons and the reviewers'
// open questions), run one after another into a results folder, resumable, summarised as tables
// of mean ± std over seeds.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "tasks/family.h"
#include "train/distributed.h"

namespace maskprior::training {

/// One row of a suite's table: a task trained with one init (and overrides) over several seeds.
/// The suites are data of the task families (tasks::suites(), tasks/family.h).
using SuiteEntry = tasks::SuiteRun;

struct SuiteOptions {
  std::string suite;  // a name of tasks::suites()
  std::string out;    // results folder
  std::string preset = "quick";
  int seeds = 0;                  // 0 = the suite's default
  std::string share_dir;          // the folder that holds specs/ (maskc's share folder)
  nlohmann::json overrides;       // applied to every run (threads, device, epochs, ...)
  std::vector<std::string> only;  // keep only entries whose label contains one of these
  int jobs = 1;                   // runs at once, each in its own process (experiments/jobs.h)
  /// Several ranks (`maskc launch`, torchrun, Slurm): rank r trains runs r, r + W, ... of the
  /// suite (each in one process), rank 0 waits for the others and writes the tables. The results
  /// folder must be shared.
  std::optional<World> world;
  std::chrono::seconds status_every{0};  // with jobs > 1: a progress line per running run
};

/// Runs (or resumes, or reuses finished) every run of the suite (experiments/run_plan.h), prints
/// progress and the tables (report/results.h) to `out`, and writes results.json and results.md
/// into options.out. Returns results.json's content;
/// "interrupted": true if a run was stopped (Ctrl-C) — rerunning the same command continues.
/// With options.world of size > 1, a rank other than 0 returns {"rank", "interrupted"} after its
/// share of the runs and writes no tables.
nlohmann::json run_suite(const SuiteOptions& options, std::ostream& out);

/// `maskc reproduce --dry-run`: prints every run of the suite (finished, or to run) and an
/// estimate of the time the runs to run take, from a few steps of one run of each row timed here
/// (experiments/run_plan.h dry_run_plan). Writes nothing; returns dry_run_plan's result.
nlohmann::json dry_run_suite(const SuiteOptions& options, std::ostream& out);

}  // namespace maskprior::training
