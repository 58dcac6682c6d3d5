#include "experiments/run_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <ostream>
#include <thread>

#include "core/cores.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/text.h"
#include "experiments/jobs.h"
#include "experiments/placement.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "runfolder/run_state.h"
#include "train/config.h"
#include "train/interrupt.h"
#include "train/run_folder.h"
#include "train/train.h"

namespace maskprior::training {

namespace {

using nlohmann::json;

/// Whether run `index` of the plan belongs to share `rank` of `ranks`.
bool is_mine(const std::vector<PlannedRun>& runs, size_t index, int rank, int ranks) {
  const size_t key = runs[index].share >= 0 ? static_cast<size_t>(runs[index].share) : index;
  return static_cast<int>(key % static_cast<size_t>(ranks)) == rank;
}

/// The stages of the plan's runs, ascending.
std::set<int> stages_of(const std::vector<PlannedRun>& runs) {
  std::set<int> stages;
  for (const PlannedRun& run : runs) stages.insert(run.stage);
  return stages;
}

/// A parallel pass's status: how many of this share's runs have finished, then a line per running
/// run with how far it has got ("running NAME: step 1070 of 3840, ...").
void print_status(std::ostream& out, const std::vector<PlannedRun>& runs, int rank, int ranks,
                  const std::vector<const PlannedRun*>& job_runs,
                  const std::vector<size_t>& running) {
  size_t mine = 0, finished = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!is_mine(runs, i, rank, ranks)) continue;
    ++mine;
    if (finished_run(runs[i].dir)) ++finished;
  }
  out << fmt::format("status: {} of {} runs finished, {} running\n", finished, mine,
                     running.size());
  for (const size_t job : running) {
    out << fmt::format("running {}: {}\n", job_runs[job]->name,
                       runfolder::progress_text(job_runs[job]->dir));
  }
  out << std::flush;
}

/// With options.jobs > 1: trains the unfinished runs of this share (runs r = rank, rank + ranks,
/// ...) in parallel child processes (each with threads = cores / jobs unless the runs set them,
/// and no progress bar), so that a pass after it only reads summaries. Returns true if a signal
/// or a run's --stop-after stopped it; the runs that failed (their errors printed by the
/// children) are added to `failed`.
bool run_in_parallel(const std::vector<PlannedRun>& runs, const PlanOptions& options,
                     std::ostream& out, std::set<std::string>& failed, int rank, int ranks) {
  json execution = {{"progress", false}};
  if (!options.threads_given) execution["threads"] = threads_per_run(all_cores(), options.jobs);
  for (const int stage : stages_of(runs)) {  // a stage's runs start once the earlier ones ended
    std::vector<Job> jobs;
    std::vector<const PlannedRun*> job_runs;  // the run of each job
    for (size_t i = 0; i < runs.size(); ++i) {
      const PlannedRun& run = runs[i];
      if (run.stage != stage || !is_mine(runs, i, rank, ranks) || finished_run(run.dir)) continue;
      job_runs.push_back(&run);
      jobs.push_back({run.name, [&run, execution, &out] {
                        out << fmt::format("started {} -> {}\n", run.name, printable_utf8(run.dir))
                            << std::flush;
                        const json summary = run.train(execution);
                        if (summary.value("interrupted", false)) {
                          return 128 + summary.value("signal", SIGINT);
                        }
                        out << fmt::format("finished {}\n", run.name) << std::flush;
                        return 0;
                      }});
    }
    if (jobs.empty()) continue;
    out << fmt::format("{} runs in up to {} processes\n", jobs.size(), options.jobs) << std::flush;
    auto status = [&](const std::vector<size_t>& running) {
      print_status(out, runs, rank, ranks, job_runs, running);
    };
    const JobsOutcome outcome = run_jobs(jobs, options.jobs, options.status_every, status);
    failed.insert(outcome.failed.begin(), outcome.failed.end());
    if (outcome.interrupted) return true;
  }
  return false;
}

/// This share of the runs (r = rank, rank + ranks, ...), one after another without a progress
/// bar (or in --jobs processes); true if stopped. Failed runs are added to `failed`.
bool run_share(const std::vector<PlannedRun>& runs, const PlanOptions& options, int rank, int ranks,
               std::ostream& out, std::set<std::string>& failed) {
  if (options.jobs > 1) return run_in_parallel(runs, options, out, failed, rank, ranks);
  for (size_t i = 0; i < runs.size(); ++i) {  // a later stage's runs come later in the list
    const PlannedRun& run = runs[i];
    if (!is_mine(runs, i, rank, ranks) || finished_run(run.dir)) continue;
    if (InterruptScope::stop_signal() != 0) return true;
    out << fmt::format("rank {}: {} -> {}\n", rank, run.name, printable_utf8(run.dir))
        << std::flush;
    try {
      if (run.train({{"progress", false}}).value("interrupted", false)) return true;
    } catch (const Interrupted&) {  // stopped while setting up: as stopped while training
      return true;
    }
  }
  return false;
}

/// Split mode: every rank trains its share and reports to rank 0 through the rendezvous store
/// ("ok", "interrupted" or "failed: why"); rank 0 waits for every report (a signal does not end
/// the wait: the others were signalled too and report "interrupted"). Returns true if any rank was
/// stopped; throws InputError naming the ranks that failed.
bool run_split(const std::vector<PlannedRun>& runs, const PlanOptions& options, std::ostream& out) {
  const World& world = *options.world;
  Rendezvous store(world);
  std::string status = "ok";
  try {
    std::set<std::string> failed;
    if (run_share(runs, options, world.rank, world.size, out, failed)) status = "interrupted";
    throw_if_failed(failed, options.command);
  } catch (const std::exception& e) {
    status = std::string("failed: ") + e.what();
  }
  const std::string key = options.command + "/";
  store.set(key + std::to_string(world.rank), status);
  if (world.rank != 0) {
    store.leave();
    if (status.starts_with("failed"))
      throw InputError(fmt::format("[{}] rank {} {}", options.command, world.rank, status));
    return status == "interrupted";
  }
  std::vector<std::string> failures;
  bool interrupted = status == "interrupted";
  if (status != "ok" && !interrupted) failures.push_back("rank 0 " + status);
  {
    InterruptScope signals;  // a second signal of a kind ends rank 0 at once
    for (int r = 1; r < world.size; ++r) {
      std::optional<std::string> report;
      while (!(report = store.get(key + std::to_string(r)))) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      interrupted = interrupted || *report == "interrupted";
      if (*report != "ok" && *report != "interrupted")
        failures.push_back(fmt::format("rank {} {}", r, *report));
    }
  }
  store.wait_for_leavers(world.timeout_seconds);
  if (!failures.empty()) {
    throw InputError(fmt::format("[{}] {}", options.command, fmt::join(failures, "; ")));
  }
  return interrupted;
}

/// One after another in this process (after a parallel pass: only reading summaries, and saying
/// nothing of the runs that pass announced and finished); the runs in `failed` are skipped. True
/// if stopped.
bool run_in_order(const std::vector<PlannedRun>& runs, std::ostream& out,
                  std::set<std::string>& failed, bool after_parallel = false) {
  size_t done = 0;
  for (const PlannedRun& run : runs) {
    ++done;
    if (InterruptScope::stop_signal() != 0) return true;  // after the last run's final check
    if (failed.contains(run.name)) continue;              // in a --jobs child, reported there
    if (!after_parallel || !finished_run(run.dir)) {
      out << fmt::format("[{}/{}] {} -> {}\n", done, runs.size(), run.name, printable_utf8(run.dir))
          << std::flush;
    }
    try {  // one run that fails (bad data, divergence) does not stop the others
      if (run.train(json::object()).value("interrupted", false)) return true;
    } catch (const Interrupted& e) {  // a signal while the run was setting up stops the suite
      std::cerr << fmt::format("maskc: {}: {}\n", run.name, e.what());
      return true;
    } catch (const std::exception& e) {
      // As a --jobs child reports it (experiments/jobs.cpp).
      std::cerr << fmt::format("maskc: error in {}: {}\n", run.name, e.what());
      failed.insert(run.name);
    }
  }
  return false;
}

/// Steps a dry run trains of each group's run; the first is not timed (it also warms up).
constexpr int64_t kProbeSteps = 10;

/// The seconds one run of `config` takes, from kProbeSteps of its steps trained here without a run
/// folder: set-up and step 0, then seconds per step × steps and the evaluations. `how` is set to
/// how that was reckoned; nullopt when a signal stopped it.
std::optional<double> time_run(TrainConfig config, const PlanOptions& options, std::string& how) {
  config.out.clear();
  config.progress = false;
  config.stop_after = kProbeSteps;
  if (options.jobs > 1 && !options.threads_given) {
    config.threads = threads_per_run(all_cores(), options.jobs);
  }
  const int threads = config.threads > 0 ? config.threads : all_cores();  // as prepare_host
  const json summary = train(config);
  if (summary.contains("signal")) return std::nullopt;
  const bool whole = !summary.value("interrupted", false);  // the run fitted in the probe
  const json timing = summary.value("timing", json::object());
  const std::string where = fmt::format("timed on {} with {} thread{}",
                                        summary.value("device", timing.value("device", "?")),
                                        threads, threads == 1 ? "" : "s");
  if (whole) {
    how = fmt::format("all {} steps trained here; {}", summary.value("steps", int64_t{0}), where);
    return summary.value("wall_seconds", 0.0);
  }
  const double setup = timing.value("setup_seconds", 0.0);
  const double evaluation = timing.value("evaluation_seconds", 0.0);
  const double per_step = timing.value("seconds_per_step", 0.0);
  const auto steps = summary.value("total_steps", int64_t{0});
  const auto evaluations = timing.value("evaluations", int64_t{0});
  how = fmt::format(
      "set-up and step 0 {:.2g} s, {:.3g} ms per step × {} steps, {} evaluation{} × {:.2g} s; {}",
      setup, 1000 * per_step, steps, evaluations, evaluations == 1 ? "" : "s", evaluation, where);
  return setup + per_step * static_cast<double>(steps) +
         evaluation * static_cast<double>(evaluations);
}

}  // namespace

json dry_run_plan(const std::vector<PlannedRun>& runs, const PlanOptions& options,
                  std::ostream& out) {
  json result = {{"runs", json::array()}, {"groups", json::array()}};
  std::vector<std::string> groups;  // in the order of their first run to run
  std::map<std::string, std::vector<const PlannedRun*>> to_run;
  for (const PlannedRun& run : runs) {
    const bool finished = finished_run(run.dir);
    out << fmt::format("{}  {}\n", printable_utf8(run.dir), finished ? "finished" : "to run");
    result["runs"].push_back({{"name", run.name}, {"dir", run.dir}, {"finished", finished}});
    if (finished) continue;
    if (!to_run.contains(run.group)) groups.push_back(run.group);
    to_run[run.group].push_back(&run);
  }
  out << std::flush;
  InterruptScope signals;  // a signal between two timed runs stops the dry run too
  double total = 0, longest = 0;
  size_t count = 0;
  for (const std::string& group : groups) {
    const std::vector<const PlannedRun*>& members = to_run.at(group);
    std::string how;
    const std::optional<double> seconds = time_run(members.front()->config(), options, how);
    if (!seconds || InterruptScope::stop_signal() != 0) {
      throw InputError(fmt::format("[{}] --dry-run stopped by a signal", options.command));
    }
    out << fmt::format("{}: about {} per run ({}); {} to run\n", group, human_duration(*seconds),
                       how, members.size())
        << std::flush;
    result["groups"].push_back(
        {{"group", group}, {"seconds_per_run", *seconds}, {"to_run", members.size()}});
    total += *seconds * static_cast<double>(members.size());
    longest = std::max(longest, *seconds);
    count += members.size();
  }
  const int jobs = std::max<int>(1, std::min<int>(options.jobs, static_cast<int>(count)));
  const double wall = count == 0 ? 0.0 : std::max(total / jobs, longest);
  result["runs_to_run"] = count;
  result["training_seconds"] = total;
  result["estimated_seconds"] = wall;
  out << fmt::format(
      "{} of {} runs to run ({} finished): about {} of training, about {} with --jobs {}.\n"
      "An estimate, not a measurement: one run of each setting was trained here for {} steps "
      "(the first not timed) and its time per step, set-up and evaluation multiplied out; other "
      "load on this machine, checkpoints and a run's later steps change it. Nothing was "
      "written.\n",
      count, runs.size(), runs.size() - count, human_duration(total), human_duration(wall),
      options.jobs, kProbeSteps);
  return result;
}

bool finished_run(const std::string& dir) {
  return runfolder::run_state(dir) == runfolder::RunState::kFinished;
}

std::optional<json> reuse_or_resume(const std::string& dir, const json& overrides,
                                    const std::string& command) {
  const RunFolder folder(dir);
  std::optional<json> summary;
  if (folder.has(kSummaryFile)) {
    summary = folder.read_json(kSummaryFile);
    if (summary->value("interrupted", false)) summary.reset();
  }
  // A run that never reached a checkpoint is started again (train() takes its folder over).
  if (!folder.has(kConfigFile)) return summary;
  if (!summary && folder.never_checkpointed()) return std::nullopt;
  const json execution = check_started(dir, overrides, command);
  if (summary) return summary;
  return resume(folder.path(), execution);
}

json check_started(const std::string& dir, const json& overrides, const std::string& command) {
  const RunFolder folder(dir);
  // Every setting, also those config.json leaves out because the run's family does not read them.
  const json started = to_json(config_from_json(folder.read_json(kConfigFile)));
  json execution = json::object();
  for (const auto& [key, value] : overrides.items()) {
    // The folder is the run wherever it now lives (moved, or unpacked from a kept archive on
    // another machine): resume() writes to it whatever config.json says `out` was.
    if (key == "out") continue;
    if (config_field(key).resumable) {
      execution[key] = value;
    } else if (started.value(key, json()) != value) {
      throw InputError(fmt::format(
          "[{}] {} was started with {} = {}, not {}; choose another --out to start over", command,
          folder.path(), key, started.value(key, json()).dump(), value.dump()));
    }
  }
  return execution;
}

void throw_if_failed(const std::set<std::string>& failed, const std::string& command) {
  if (failed.empty()) return;
  throw InputError(fmt::format("[{}] {} run{} failed: {} (their errors are above)", command,
                               failed.size(), failed.size() == 1 ? "" : "s",
                               fmt::join(failed, ", ")));
}

PlanOutcome run_plan(const std::vector<PlannedRun>& runs, const PlanOptions& options,
                     std::ostream& out) {
  PlanOutcome outcome;
  if (options.world && options.world->size > 1) {
    // Rank 0 goes on once every run has finished: the pass below only reads their summaries.
    outcome.interrupted = run_split(runs, options, out);
    if (options.world->rank != 0 || outcome.interrupted) {
      outcome.tabulate = false;
      return outcome;
    }
  } else if (options.shard) {
    outcome.interrupted =
        run_share(runs, options, options.shard->index, options.shard->count, out, outcome.failed);
    // The task that finishes the last run writes the tables.
    outcome.tabulate =
        !outcome.interrupted && std::all_of(runs.begin(), runs.end(), [&](const PlannedRun& run) {
          return outcome.failed.contains(run.name) || finished_run(run.dir);
        });
    return outcome;
  } else if (options.jobs > 1 &&
             run_in_parallel(runs, options, out, outcome.failed, /*rank=*/0, /*ranks=*/1)) {
    outcome.interrupted = true;
    outcome.tabulate = false;
    return outcome;
  }
  const bool after_parallel = options.jobs > 1 || (options.world && options.world->size > 1);
  outcome.interrupted = run_in_order(runs, out, outcome.failed, after_parallel);
  return outcome;
}

std::vector<runfolder::RunRecord> finished_records(const std::vector<PlannedRun>& runs,
                                                   const std::set<std::string>& failed) {
  std::vector<runfolder::RunRecord> records;
  for (const PlannedRun& run : runs) {
    if (failed.contains(run.name)) continue;
    if (auto record = runfolder::read_run(run.dir)) {
      record->row = std::filesystem::path(run.dir).parent_path().filename().string();
      records.push_back(std::move(*record));
    }
  }
  return records;
}

void write_results_files(const std::string& root, const std::string& heading,
                         const std::string& tables, const nlohmann::json& results,
                         std::ostream& out) {
  std::string markdown = heading + tables;
  if (results.contains("failed")) {
    markdown += fmt::format(
        "Failed, so not in the tables: {} (run the same command again to retry them).\n",
        fmt::join(results["failed"].get<std::vector<std::string>>(), ", "));
  }
  out << "\n" << markdown;
  if (results.value("interrupted", false)) {
    out << "interrupted: run the same command again to continue\n";
  }
  const auto dir = std::filesystem::path(root);
  write_json_file((dir / "results.json").string(), results);
  write_file_atomic((dir / "results.md").string(), markdown);
  out << fmt::format("results: {}, {}\n", printable_utf8((dir / "results.md").string()),
                     printable_utf8((dir / "results.json").string()));
}

}  // namespace maskprior::training
