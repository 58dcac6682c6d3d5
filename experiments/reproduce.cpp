#include "experiments/reproduce.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <ostream>
#include <set>

#include "core/error.h"
#include "core/text.h"
#include "experiments/run_plan.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "io/lock_file.h"
#include "render/grid.h"
#include "report/report.h"
#include "report/results.h"
#include "tasks/family.h"
#include "train/distill.h"
#include "train/interrupt.h"
#include "train/run_folder.h"
#include "train/run_spec.h"
#include "train/train.h"

namespace maskprior::training {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The suite's `overrides` that apply to the run of `entry`: a setting only other families read
/// (`--data-dir` for the vision and language runs) keeps its default in the others.
json overrides_for(const SuiteEntry& entry, json overrides) {
  json settings = entry.overrides;
  settings["task"] = entry.task;
  for (const std::string& key : tasks::foreign_settings(tasks::family_of_run(settings))) {
    overrides.erase(key);
  }
  return overrides;
}

/// The run folder of `row`'s run with `seed`.
fs::path run_dir(const SuiteOptions& options, const std::string& row, uint64_t seed) {
  return fs::path(options.out) / row / fmt::format("seed{}", seed);
}

/// Where the spec distilled for a row of `entry` with `seed` goes:
/// OUT/distilled/ROW-seedK-FROM-PER-MASS.mask, ROW the row it is distilled from.
fs::path distilled_spec(const SuiteEntry& entry, const SuiteOptions& options, uint64_t seed) {
  const tasks::DistilledFrom& d = *entry.distilled;
  return fs::path(options.out) / "distilled" /
         fmt::format("{}-seed{}-{}-{}-{:g}.mask", d.row, seed, d.from, d.per, d.mass);
}

/// Makes sure the spec of a distilled row's run with `seed` exists: distilled from its source run
/// once (then reused), written atomically. InputError when the source run has not finished.
void ensure_distilled(const SuiteEntry& entry, const SuiteOptions& options, uint64_t seed) {
  const fs::path path = distilled_spec(entry, options, seed);
  if (fs::exists(path)) return;
  const fs::path source = run_dir(options, entry.distilled->row, seed);
  if (!finished_run(source.string())) {
    throw InputError(fmt::format(
        "[reproduce] {} seed {} learns its prior from {}, which has not finished (it failed or "
        "was stopped): run the same command again",
        entry.label, seed, printable_utf8(source.string())));
  }
  DistillOptions distill;
  distill.from = entry.distilled->from;
  distill.per = entry.distilled->per;
  distill.mass = entry.distilled->mass;
  const Distillation distilled = distill_run(source.string(), distill);
  fs::create_directories(path.parent_path());
  write_file_atomic(path.string(), distilled.spec);
}

/// The config of the run of `entry` with `seed` in `dir`. A distilled row's spec is the one
/// distilled for it, or while there is none (a dry run before its source finished) the
/// hand-written one, which stands in for timing.
TrainConfig run_config(const SuiteEntry& entry, const SuiteOptions& options, uint64_t seed,
                       const fs::path& dir) {
  json overrides = entry.overrides;
  overrides.update(overrides_for(entry, options.overrides));
  overrides["seed"] = seed;
  overrides["init"] = entry.init;
  overrides["out"] = dir.string();
  if (!entry.spec.empty()) overrides["spec"] = (fs::path(options.share_dir) / entry.spec).string();
  if (entry.distilled) {
    const fs::path distilled = distilled_spec(entry, options, seed);
    if (fs::exists(distilled)) overrides["spec"] = distilled.string();
  }
  return resolve_config(entry.task, options.preset, overrides);
}

/// Trains, resumes, or reuses the run in `dir` (a distilled row's spec distilled first).
json run_one(const SuiteEntry& entry, const SuiteOptions& options, uint64_t seed,
             const fs::path& dir) {
  if (auto summary =
          reuse_or_resume(dir.string(), overrides_for(entry, options.overrides), "reproduce")) {
    return *summary;
  }
  if (entry.distilled) ensure_distilled(entry, options, seed);
  return train(run_config(entry, options, seed, dir));
}

/// Every run of the suite: each entry's seeds, in order, named "LABEL seed K".
/// A distilled row is trained in a later stage than its source, and the runs of one seed go to one
/// share (rank or array task), so that each share distils from runs it trained itself.
std::vector<PlannedRun> plan_suite(const std::vector<SuiteEntry>& entries,
                                   const SuiteOptions& options, int seeds) {
  const bool staged = std::any_of(entries.begin(), entries.end(),
                                  [](const SuiteEntry& e) { return e.distilled.has_value(); });
  std::vector<PlannedRun> runs;
  for (const SuiteEntry& entry : entries) {
    for (int seed = 0; seed < seeds; ++seed) {
      const fs::path dir = run_dir(options, entry.label, static_cast<uint64_t>(seed));
      runs.push_back({fmt::format("{} seed {}", entry.label, seed), dir.string(),
                      [entry, options, seed, dir](const json& execution) {
                        SuiteOptions run_options = options;
                        run_options.overrides.update(execution);
                        return run_one(entry, run_options, static_cast<uint64_t>(seed), dir);
                      },
                      entry.label,
                      [entry, options, seed, dir] {
                        return run_config(entry, options, static_cast<uint64_t>(seed), dir);
                      },
                      entry.distilled ? 1 : 0, staged ? seed : -1});
    }
  }
  return runs;
}

/// The suite's runs, or those whose label contains one of --only's words, with the rows those
/// are distilled from.
std::vector<SuiteEntry> selected_entries(const tasks::Suite& suite, const SuiteOptions& options) {
  std::vector<SuiteEntry> entries = suite.runs;
  if (options.only.empty()) return entries;
  std::set<std::string> keep;
  for (const SuiteEntry& e : entries) {
    for (const std::string& o : options.only) {
      if (e.label.find(o) == std::string::npos) continue;
      keep.insert(e.label);
      if (e.distilled) keep.insert(e.distilled->row);
    }
  }
  std::erase_if(entries, [&](const SuiteEntry& e) { return !keep.contains(e.label); });
  if (entries.empty()) throw InputError("[reproduce] --only matches no run of the suite");
  return entries;
}

/// Each finished run of a distilled row held against its row's hand-written spec (`maskc diff`,
/// summed over the planes): {"row", "seed", "from", "only_distilled", "only_written", "both",
/// "jaccard"}, and a Markdown table of them ("" when the suite has no distilled row).
std::pair<json, std::string> compare_distilled(const std::vector<SuiteEntry>& entries,
                                               const SuiteOptions& options, int seeds) {
  json rows = json::array();
  std::string table;
  for (const SuiteEntry& entry : entries) {
    if (!entry.distilled) continue;
    for (int seed = 0; seed < seeds; ++seed) {
      const fs::path dir = run_dir(options, entry.label, static_cast<uint64_t>(seed));
      if (!finished_run(dir.string())) continue;
      const RunFolder folder(dir.string());
      TrainConfig config = folder.read_config();
      config.spec = folder.file(kSpecFile);
      const CompiledMask distilled = load_spec(config);
      config.spec = (fs::path(options.share_dir) / entry.spec).string();
      const PatternDiff::Plane sum = compare_patterns(distilled, load_spec(config)).total();
      rows.push_back({{"row", entry.label},
                      {"seed", seed},
                      {"from", entry.distilled->row},
                      {"only_distilled", sum.only_a},
                      {"only_written", sum.only_b},
                      {"both", sum.both},
                      {"jaccard", sum.jaccard}});
      table += fmt::format("| {} | {} | {} | {} | {} | {} | {:.3f} |\n", entry.label, seed,
                           entry.distilled->row, sum.only_a, sum.only_b, sum.both, sum.jaccard);
    }
  }
  if (!table.empty()) {
    table =
        "## Distilled priors against the hand-written spec\n\n"
        "Cells open in the distilled spec only, in the hand-written one only, in both (`maskc "
        "diff`, every layer and head; hard cells left out), and their Jaccard overlap.\n\n"
        "| row | seed | distilled from | only distilled | only hand-written | both | Jaccard "
        "|\n|---|---|---|---|---|---|---|\n" +
        table + "\n";
  }
  return {rows, table};
}

/// One line that answers "does the prior help?" for the rows that ran both inits: per task, the
/// mask's headline against vanilla's, mean over seeds, and how many seeds stand behind it; ""
/// when no task has both.
std::string takeaway(const std::vector<runfolder::RunRow>& rows) {
  std::vector<std::string> parts;
  size_t fewest = std::numeric_limits<size_t>::max();
  for (const runfolder::RunRow& mask : rows) {
    if (mask.init != "mask") continue;
    const auto vanilla = std::find_if(rows.begin(), rows.end(), [&](const auto& row) {
      return row.init == "vanilla" && row.task == mask.task;
    });
    const auto key = report::headline_metric(mask);
    if (vanilla == rows.end() || !key) continue;
    auto mean = [&](const runfolder::RunRow& row) {  // over the seeds that have the metric
      double sum = 0;
      int n = 0;
      for (const auto& run : row.runs) {
        const double v = runfolder::metric_value(run.summary, *key);
        if (std::isfinite(v)) {
          sum += v;
          ++n;
        }
      }
      return n > 0 ? sum / n : NAN;
    };
    const tasks::Metric* metric = mask.family->find_metric(*key);
    const double scale = metric != nullptr && metric->is_share() ? 100.0 : 1.0;
    const double m = scale * mean(mask), v = scale * mean(*vanilla);
    if (!std::isfinite(m) || !std::isfinite(v)) continue;
    parts.push_back(fmt::format("{}: mask {:.2f} against vanilla {:.2f} {} ({:+.2f})", mask.task, m,
                                v, *key + (scale > 1 ? " %" : ""), m - v));
    fewest = std::min({fewest, mask.runs.size(), vanilla->runs.size()});
  }
  if (parts.empty()) return "";
  return fmt::format(
      "Takeaway: {}; {} seed{} a row{}. `maskc report DIR` compares them seed by seed.\n\n",
      fmt::join(parts, "; "), fewest, fewest == 1 ? "" : "s",
      fewest < 3 ? ": not a verdict (3 seeds or more: --seeds)" : "");
}

/// The rows of the finished runs (report/report.h: only seeds pool, so a row is an entry) and
/// their tables: {"rows": [...]} as results.json holds them, and the Markdown tables.
std::pair<json, std::string> tabulate(const std::vector<SuiteEntry>& entries,
                                      const std::vector<PlannedRun>& runs,
                                      const std::set<std::string>& failed) {
  const std::vector<runfolder::RunRow> rows =
      runfolder::group_runs(finished_records(runs, failed), "");
  std::map<std::string, const SuiteEntry*> by_label;
  for (const SuiteEntry& entry : entries) by_label[entry.label] = &entry;
  json aggregated = json::array();
  for (const runfolder::RunRow& row : rows) {
    const SuiteEntry& entry = *by_label.at(row.runs.front().row);
    json seeds = json::array();
    for (const runfolder::RunRecord& run : row.runs) seeds.push_back(run.config.value("seed", 0));
    aggregated.push_back({{"label", row.label},
                          {"task", entry.task},
                          {"init", entry.init},
                          {"spec", entry.spec},
                          {"overrides", entry.overrides},
                          {"seeds", seeds},
                          {"metrics", report::aggregate_row(row)}});
  }
  return {aggregated, report::family_tables(rows, aggregated) + takeaway(rows)};
}

}  // namespace

json dry_run_suite(const SuiteOptions& options, std::ostream& out) {
  const tasks::Suite suite = tasks::suite(options.suite);
  const std::vector<SuiteEntry> entries = selected_entries(suite, options);
  const int seeds = options.seeds > 0 ? options.seeds : suite.default_seeds;
  out << fmt::format("maskc reproduce {} --dry-run: {} row{} × {} seed{} (preset {}) in {}\n",
                     options.suite, entries.size(), entries.size() == 1 ? "" : "s", seeds,
                     seeds == 1 ? "" : "s", options.preset, printable_utf8(options.out));
  const PlanOptions plan{"reproduce", options.jobs, options.overrides.contains("threads"),
                         std::nullopt, std::nullopt};
  return dry_run_plan(plan_suite(entries, options, seeds), plan, out);
}

json run_suite(const SuiteOptions& options, std::ostream& out) {
  const tasks::Suite suite = tasks::suite(options.suite);
  const std::vector<SuiteEntry> entries = selected_entries(suite, options);
  const int seeds = options.seeds > 0 ? options.seeds : suite.default_seeds;
  check_device_available(options.overrides.value("device", std::string("auto")));
  const fs::path root(options.out);
  fs::create_directories(root);
  // One `reproduce` per folder; the ranks of a split suite share it (rank 0 holds the lock).
  const bool split = options.world && options.world->size > 1;
  const FolderLock lock(!split || options.world->rank == 0 ? root.string() : std::string());
  // Held for the whole suite, so that a signal between two runs is not lost (nor fatal).
  InterruptScope signals;
  const std::vector<PlannedRun> runs = plan_suite(entries, options, seeds);
  PlanOptions plan{"reproduce", options.jobs, options.overrides.contains("threads"), options.world,
                   std::nullopt};
  plan.status_every = options.status_every;
  const PlanOutcome outcome = run_plan(runs, plan, out);
  if (split && options.world->rank != 0)
    return {{"rank", options.world->rank}, {"interrupted", outcome.interrupted}};
  if (!outcome.tabulate) {
    out << "interrupted: run the same command again to continue\n";
    return {{"suite", options.suite}, {"interrupted", true}, {"rows", json::array()}};
  }
  auto [rows, tables] = tabulate(entries, runs, outcome.failed);
  json results = {{"suite", options.suite}, {"preset", options.preset}, {"rows", rows}};
  if (auto [distilled, table] = compare_distilled(entries, options, seeds); !table.empty()) {
    results["distilled"] = distilled;
    tables += table;
  }
  results["interrupted"] = outcome.interrupted;
  if (!outcome.failed.empty()) results["failed"] = outcome.failed;
  write_results_files(
      root.string(),
      fmt::format("# maskc reproduce {} (preset {})\n\n", options.suite, options.preset), tables,
      results, out);
  if (!outcome.interrupted) throw_if_failed(outcome.failed, "reproduce");  // else rerun retries
  return results;
}

}  // namespace maskprior::training
