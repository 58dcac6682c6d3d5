// Running a list of training runs into their run folders: `maskc reproduce`'s suites and
// `maskc sweep`'s grids. Finished runs are reused, interrupted ones resumed; the runs go one after
// another in this process, or in --jobs forked processes (experiments/jobs.h), or split across the
// ranks of `maskc launch` / torchrun / srun (rank r takes runs r, r + W, ...; rank 0 waits for the
// others through the rendezvous store), or across the tasks of a Slurm array (no store: each task
// its share).
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runfolder/runs.h"
#include "train/config.h"
#include "train/distributed.h"

namespace maskprior::training {

/// One run of a plan.
struct PlannedRun {
  std::string name;  // in messages and the failed list: "parity2-mask seed 0"
  std::string dir;   // its run folder
  /// Trains, resumes or reuses the run and returns its summary; `execution` (a JSON object of
  /// execution settings, such as threads and progress) goes over the plan's own.
  std::function<nlohmann::json(const nlohmann::json& execution)> train;
  /// The runs of one setting, which differ only by seed, share it ("parity2-mask",
  /// "init=mask,lr=0.001"): a dry run times one of them for all.
  std::string group;
  /// The run's resolved config (its seed and folder included), for a dry run.
  std::function<TrainConfig()> config;
  /// Runs of a later stage start once every run of the earlier stages has ended (a distilled
  /// suite row reads the runs it is distilled from); in a plan's list they come after them.
  int stage = 0;
  /// Split across ranks or array tasks by this key instead of the run's place in the list when
  /// >= 0: the runs of one key (a seed's source and the rows distilled from it) go to one share.
  int share = -1;
};

/// One share of a plan that no rendezvous joins: runs i with i % count == index.
struct PlanShard {
  int index = 0;
  int count = 1;
};

struct PlanOptions {
  std::string command;  // "reproduce", "sweep": in messages and the store's keys
  int jobs = 1;         // runs at once, each in a forked process
  /// Unless the plan's runs set threads: each forked run gets cores / jobs (threads_per_run,
  /// experiments/placement.h).
  bool threads_given = false;
  std::optional<World> world;      // size > 1: split across the ranks (rendezvous)
  std::optional<PlanShard> shard;  // a Slurm array task's share
  /// With jobs > 1: a line per running run this often (its step, loss and time so far, from its
  /// step log); 0 = never.
  std::chrono::seconds status_every{0};
};

struct PlanOutcome {
  bool interrupted = false;  // a signal (or a run's stop_after) stopped it: run it again
  bool tabulate = true;      // false: stopped in a parallel pass, or not rank 0; write no tables
  std::set<std::string> failed;  // names of runs that failed (their errors printed)
};

/// Runs every unfinished run of `runs` as `options` say, printing progress to `out`; a run that
/// fails does not stop the others (its error is printed, its name in `failed`), except across
/// ranks, where a rank's failure is an InputError naming it.
PlanOutcome run_plan(const std::vector<PlannedRun>& runs, const PlanOptions& options,
                     std::ostream& out);

/// `reproduce --dry-run` and `sweep --dry-run`: prints every run of `runs` (finished, or to run)
/// and an estimate of the time the runs to run take, writing nothing: the first run to run of each
/// group is trained here for a few steps without a run folder (with the threads a run of the plan
/// gets), and its timing (set-up, seconds per step, evaluation; train()'s `timing`) is multiplied
/// out to its steps and evaluations, summed over the group's runs to run and shared among
/// options.jobs. Returns {"runs": [{"name", "dir", "finished"}], "groups": [{"group",
/// "seconds_per_run", "to_run"}], "runs_to_run", "training_seconds" (one after another),
/// "estimated_seconds" (with options.jobs)}. InputError if a signal stops it.
nlohmann::json dry_run_plan(const std::vector<PlannedRun>& runs, const PlanOptions& options,
                            std::ostream& out);

/// True when `dir` holds a finished run (a summary.json that is not an interrupted run's).
bool finished_run(const std::string& dir);

/// The summary of the finished run in `dir`; or, when `dir` holds a run that reached a
/// checkpoint, the summary of resuming it with the keys of `overrides` that --resume accepts; or
/// nullopt: train it from the start (train() takes the folder over). The keys of `overrides`
/// that --resume does not accept must equal what a run found there was started with (InputError
/// naming the folder and the key otherwise), finished or not.
std::optional<nlohmann::json> reuse_or_resume(const std::string& dir,
                                              const nlohmann::json& overrides,
                                              const std::string& command);

/// Checks the run folder `dir` (which holds config.json) against `overrides`: the keys --resume
/// does not accept must equal what the run was started with (InputError naming the folder and
/// the key otherwise); `out` is not compared, as a folder moved or unpacked elsewhere is the same
/// run. Returns the keys it does accept: the execution settings to resume with.
nlohmann::json check_started(const std::string& dir, const nlohmann::json& overrides,
                             const std::string& command);

/// The InputError for the runs in `failed`, if any: "[COMMAND] 2 runs failed: A, B (their
/// errors are above)".
void throw_if_failed(const std::set<std::string>& failed, const std::string& command);

/// The finished runs of `runs` that are not in `failed`, read for the results tables
/// (runfolder::read_run), each in the row of its folder's parent.
std::vector<runfolder::RunRecord> finished_records(const std::vector<PlannedRun>& runs,
                                                   const std::set<std::string>& failed);

/// Writes `root`/results.md (`heading`, `tables`, then a line naming results' failed runs) and
/// `root`/results.json (`results`), and prints the Markdown and where both went to `out` (with a
/// note when results say the runs were interrupted).
void write_results_files(const std::string& root, const std::string& heading,
                         const std::string& tables, const nlohmann::json& results,
                         std::ostream& out);

}  // namespace maskprior::training
