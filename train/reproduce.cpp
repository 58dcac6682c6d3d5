#include "train/reproduce.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <ostream>
#include <set>
#include <sstream>
#include <thread>

#include "core/cores.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "io/lock_file.h"
#include "tasks/family.h"
#include "train/interrupt.h"
#include "train/jobs.h"
#include "train/run_folder.h"
#include "train/train.h"

namespace maskprior::training {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The columns of a family's table: its metrics shown in tables, the persistence metrics, its
/// diagnostics, and the steps its headline took to reach 95% (a column only where some row has a
/// value). Layer lists (prior mass, drift) are averaged over layers before averaging over seeds.
std::vector<tasks::Metric> table_columns(const tasks::TaskFamily& family) {
  std::vector<tasks::Metric> columns;
  for (const tasks::Metric& metric : family.metrics) {
    if (metric.in_tables) columns.push_back(metric);
  }
  const auto& persistence = tasks::persistence_metrics();
  columns.insert(columns.end(), persistence.begin(), persistence.end());
  columns.insert(columns.end(), family.diagnostics.begin(), family.diagnostics.end());
  columns.push_back({"steps_to_95", "steps to 95%", "steps to 95%", "", tasks::Better::kLower});
  return columns;
}

double layer_mean(const json& value) {
  if (value.is_number()) return value.get<double>();
  if (!value.is_array() || value.empty()) return NAN;
  double sum = 0;
  for (const json& v : value) sum += v.get<double>();
  return sum / static_cast<double>(value.size());
}

/// mean and sample standard deviation of the seeds' values of `key` (NaN when absent).
json aggregate(const std::vector<json>& summaries, const std::string& key) {
  std::vector<double> values;
  for (const json& s : summaries) {
    if (s.contains(key) && !s[key].is_null()) {
      const double v = layer_mean(s[key]);
      if (!std::isnan(v)) values.push_back(v);
    }
  }
  if (values.empty()) return nullptr;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double var = 0;
  for (double v : values) var += (v - mean) * (v - mean);
  const double std =
      values.size() > 1 ? std::sqrt(var / static_cast<double>(values.size() - 1)) : 0.0;
  return json{{"mean", mean}, {"std", std}, {"n", values.size()}};
}

/// Resumes the run in `folder` with the suite's overrides that --resume accepts (threads,
/// device, ...); the others (e.g. epochs) must be what the run was started with.
json resume_run(const RunFolder& folder, const json& overrides) {
  const json started = folder.read_json(kConfigFile);
  json execution = json::object();
  for (const auto& [key, value] : overrides.items()) {
    if (config_field(key).resumable) {
      execution[key] = value;
    } else if (started.value(key, json()) != value) {
      throw InputError(fmt::format(
          "[reproduce] {} was started with {} = {}, not {}; choose another --out to start over",
          folder.path(), key, started.value(key, json()).dump(), value.dump()));
    }
  }
  return resume(folder.path(), execution);
}

/// Trains, resumes, or reuses the run in `dir`.
json run_one(const SuiteEntry& entry, const SuiteOptions& options, uint64_t seed,
             const fs::path& dir) {
  const RunFolder folder(dir.string());
  if (folder.has(kSummaryFile)) {
    json summary = folder.read_json(kSummaryFile);
    if (!summary.value("interrupted", false)) return summary;
  }
  // A run that never reached a checkpoint is started again (train() takes its folder over).
  if (folder.has(kConfigFile) && !folder.never_checkpointed()) {
    return resume_run(folder, options.overrides);
  }
  json overrides = entry.overrides;
  overrides.update(options.overrides);
  overrides["seed"] = seed;
  overrides["init"] = entry.init;
  overrides["out"] = dir.string();
  if (!entry.spec.empty()) overrides["spec"] = (fs::path(options.source_dir) / entry.spec).string();
  return train(resolve_config(entry.task, options.preset, overrides));
}

bool finished(const fs::path& dir) {
  const RunFolder folder(dir.string());
  return folder.has(kSummaryFile) && !folder.read_json(kSummaryFile).value("interrupted", false);
}

/// "LABEL seed K": how a run of a suite is named in messages and in the failed list.
std::string run_name(const SuiteEntry& entry, int seed) {
  return fmt::format("{} seed {}", entry.label, seed);
}

/// With options.jobs > 1: trains the unfinished runs in parallel child processes (each with
/// threads = cores / jobs unless --threads was given, and no progress bar), so that the pass
/// after it only reads summaries. Returns true if a signal stopped it; the runs that failed (their
/// errors printed by the children) are added to `failed` by run_name.
/// With `ranks` > 1 only the runs r = rank, rank + ranks, ... of the suite (in its order).
bool run_in_parallel(const std::vector<SuiteEntry>& entries, const SuiteOptions& options, int seeds,
                     const fs::path& root, std::ostream& out, std::set<std::string>& failed,
                     int rank = 0, int ranks = 1) {
  SuiteOptions child = options;
  child.overrides["progress"] = false;
  if (!child.overrides.contains("threads")) {
    child.overrides["threads"] = std::max(1, all_cores() / options.jobs);
  }
  std::vector<Job> jobs;
  int index = 0;
  for (const SuiteEntry& entry : entries) {
    for (int seed = 0; seed < seeds; ++seed) {
      const fs::path dir = root / entry.label / fmt::format("seed{}", seed);
      if (index++ % ranks != rank || finished(dir)) continue;
      const std::string label = run_name(entry, seed);
      jobs.push_back({label, [entry, child, seed, dir, label, &out] {
                        out << fmt::format("started {} -> {}\n", label, dir.string()) << std::flush;
                        const json summary =
                            run_one(entry, child, static_cast<uint64_t>(seed), dir);
                        if (summary.value("interrupted", false)) {
                          return 128 + summary.value("signal", SIGINT);
                        }
                        out << fmt::format("finished {}\n", label) << std::flush;
                        return 0;
                      }});
    }
  }
  if (jobs.empty()) return false;
  out << fmt::format("{} runs in up to {} processes\n", jobs.size(), options.jobs) << std::flush;
  const JobsOutcome outcome = run_jobs(jobs, options.jobs);
  failed.insert(outcome.failed.begin(), outcome.failed.end());
  return outcome.interrupted;
}

/// The error for the runs in `failed`, if any: the suite's other runs went on and were reported.
void throw_if_failed(const std::set<std::string>& failed) {
  if (failed.empty()) return;
  throw InputError(fmt::format("[reproduce] {} run{} failed: {} (their errors are above)",
                               failed.size(), failed.size() == 1 ? "" : "s",
                               fmt::join(failed, ", ")));
}

/// This rank's share of the runs, one after another (or in --jobs processes); true if stopped.
bool run_my_share(const std::vector<SuiteEntry>& entries, const SuiteOptions& options, int seeds,
                  const fs::path& root, std::ostream& out) {
  const World& world = *options.world;
  if (options.jobs > 1) {
    std::set<std::string> failed;
    const bool stopped =
        run_in_parallel(entries, options, seeds, root, out, failed, world.rank, world.size);
    throw_if_failed(failed);
    return stopped;
  }
  int index = 0;
  for (const SuiteEntry& entry : entries) {
    for (int seed = 0; seed < seeds; ++seed) {
      const fs::path dir = root / entry.label / fmt::format("seed{}", seed);
      if (index++ % world.size != world.rank || finished(dir)) continue;
      if (InterruptScope::stop_signal() != 0) return true;
      out << fmt::format("rank {}: {} seed {} -> {}\n", world.rank, entry.label, seed, dir.string())
          << std::flush;
      if (run_one(entry, options, static_cast<uint64_t>(seed), dir).value("interrupted", false)) {
        return true;
      }
    }
  }
  return false;
}

/// Split mode: every rank trains its share and reports to rank 0 through the rendezvous store
/// ("ok", "interrupted" or "failed: why"); rank 0 waits for every report (a signal does not end
/// the wait: the others were signalled too and report "interrupted"). Returns true if any rank was
/// stopped; throws InputError naming the ranks that failed.
bool run_split(const std::vector<SuiteEntry>& entries, const SuiteOptions& options, int seeds,
               const fs::path& root, std::ostream& out) {
  const World& world = *options.world;
  Rendezvous store(world);
  SuiteOptions single = options;  // each run is trained by one process
  single.world.reset();
  single.overrides["progress"] = false;
  std::string status = "ok";
  try {
    if (run_my_share(entries, single, seeds, root, out)) status = "interrupted";
  } catch (const std::exception& e) {
    status = std::string("failed: ") + e.what();
  }
  store.set(fmt::format("reproduce/{}", world.rank), status);
  if (world.rank != 0) {
    store.leave();
    if (status.starts_with("failed"))
      throw InputError(fmt::format("[reproduce] rank {} {}", world.rank, status));
    return status == "interrupted";
  }
  std::vector<std::string> failures;
  bool interrupted = status == "interrupted";
  if (status != "ok" && !interrupted) failures.push_back("rank 0 " + status);
  {
    InterruptScope signals;  // a second signal of a kind ends rank 0 at once
    for (int r = 1; r < world.size; ++r) {
      std::optional<std::string> report;
      while (!(report = store.get(fmt::format("reproduce/{}", r)))) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      interrupted = interrupted || *report == "interrupted";
      if (*report != "ok" && *report != "interrupted")
        failures.push_back(fmt::format("rank {} {}", r, *report));
    }
  }
  store.wait_for_leavers(world.timeout_seconds);
  if (!failures.empty()) {
    throw InputError(fmt::format("[reproduce] {}", fmt::join(failures, "; ")));
  }
  return interrupted;
}

std::string format_cell(const json& cell, bool percent) {
  if (cell.is_null()) return "—";
  const double scale = percent ? 100.0 : 1.0;
  const double mean = cell["mean"].get<double>() * scale;
  const double std = cell["std"].get<double>() * scale;
  if (cell["n"].get<int>() < 2)
    return percent ? fmt::format("{:.2f}", mean) : fmt::format("{:.4g}", mean);
  return percent ? fmt::format("{:.2f} ± {:.2f}", mean, std)
                 : fmt::format("{:.4g} ± {:.2g}", mean, std);
}

}  // namespace

std::string results_table(const json& rows, const std::vector<tasks::Metric>& columns) {
  std::vector<const tasks::Metric*> shown;
  for (const tasks::Metric& c : columns) {
    for (const json& row : rows) {
      if (row["metrics"].contains(c.key) && !row["metrics"][c.key].is_null()) {
        shown.push_back(&c);
        break;
      }
    }
  }
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header = {"run", "seeds"};
  for (const tasks::Metric* c : shown) header.push_back(c->column());
  cells.push_back(header);
  for (const json& row : rows) {
    std::vector<std::string> line = {row["label"].get<std::string>(),
                                     std::to_string(row["seeds"].size())};
    for (const tasks::Metric* c : shown) {
      line.push_back(format_cell(row["metrics"][c->key], c->is_share()));
    }
    cells.push_back(line);
  }
  // Column widths in code points, so ± and — line up.
  auto width = [](const std::string& s) {
    size_t w = 0;
    for (unsigned char ch : s) w += (ch & 0xC0) != 0x80;
    return w;
  };
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], width(line[i]));
  }
  std::string out;
  for (size_t r = 0; r < cells.size(); ++r) {
    out += "|";
    for (size_t i = 0; i < cells[r].size(); ++i) {
      out += " " + cells[r][i] + std::string(widths[i] - width(cells[r][i]), ' ') + " |";
    }
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t w : widths) out += std::string(w + 2, '-') + "|";
      out += "\n";
    }
  }
  return out;
}

namespace {

/// Prints the suite's tables (one per task family, since their metrics differ) and writes
/// results.md and results.json into `root`.
void write_results(const SuiteOptions& options, const json& results, const fs::path& root,
                   std::ostream& out) {
  std::string markdown =
      fmt::format("# maskc reproduce {} (preset {})\n\n", options.suite, options.preset);
  for (const tasks::TaskFamily& family : tasks::families()) {
    json rows = json::array();
    for (const json& row : results["rows"]) {
      if (tasks::family_of_task(row["task"].get<std::string>()).name == family.name) {
        rows.push_back(row);
      }
    }
    if (!rows.empty()) markdown += results_table(rows, table_columns(family)) + "\n";
  }
  if (results.contains("failed")) {
    markdown += fmt::format(
        "Failed, so not in the tables: {} (run the same command again to retry them).\n",
        fmt::join(results["failed"].get<std::vector<std::string>>(), ", "));
  }
  out << "\n" << markdown;
  if (results.value("interrupted", false)) {
    out << "interrupted: run the same command again to continue\n";
  }
  write_json_file((root / "results.json").string(), results);
  write_file_atomic((root / "results.md").string(), markdown);
  out << fmt::format("results: {}, {}\n", (root / "results.md").string(),
                     (root / "results.json").string());
}

/// The suite's runs, or those whose label contains one of --only's words.
std::vector<SuiteEntry> selected_entries(const tasks::Suite& suite, const SuiteOptions& options) {
  std::vector<SuiteEntry> entries = suite.runs;
  if (options.only.empty()) return entries;
  std::erase_if(entries, [&](const SuiteEntry& e) {
    for (const std::string& o : options.only) {
      if (e.label.find(o) != std::string::npos) return false;
    }
    return true;
  });
  if (entries.empty()) throw InputError("[reproduce] --only matches no run of the suite");
  return entries;
}

/// A results row: the entry and its metrics aggregated over the seeds that finished.
json results_row(const SuiteEntry& entry, const std::vector<json>& summaries,
                 const json& seed_list) {
  json metrics = json::object();
  for (const tasks::Metric& c : table_columns(tasks::family_of_task(entry.task))) {
    metrics[c.key] = aggregate(summaries, c.key);
  }
  return {{"label", entry.label}, {"task", entry.task},           {"init", entry.init},
          {"spec", entry.spec},   {"overrides", entry.overrides}, {"seeds", seed_list},
          {"metrics", metrics}};
}

}  // namespace

json run_suite(const SuiteOptions& options, std::ostream& out) {
  const tasks::Suite suite = tasks::suite(options.suite);
  const std::vector<SuiteEntry> entries = selected_entries(suite, options);
  const int seeds = options.seeds > 0 ? options.seeds : suite.default_seeds;
  const fs::path root(options.out);
  fs::create_directories(root);
  // One `reproduce` per folder; the ranks of a split suite share it (rank 0 holds the lock).
  const bool split = options.world && options.world->size > 1;
  const FolderLock lock(!split || options.world->rank == 0 ? root.string() : std::string());
  // Held for the whole suite, so that a signal between two runs is not lost (nor fatal).
  InterruptScope signals;
  // Split across ranks (rank 0 goes on once every run has finished: the pass below only reads
  // their summaries), or --jobs processes, or (neither) the pass below trains them one by one.
  std::set<std::string> failed;  // runs that failed: not trained again below, reported at the end
  const bool stopped =
      split ? run_split(entries, options, seeds, root, out)
            : options.jobs > 1 && run_in_parallel(entries, options, seeds, root, out, failed);
  if (split && options.world->rank != 0)
    return {{"rank", options.world->rank}, {"interrupted", stopped}};
  if (stopped) {
    out << "interrupted: run the same command again to continue\n";
    return {{"suite", options.suite}, {"interrupted", true}, {"rows", json::array()}};
  }

  json results = {{"suite", options.suite}, {"preset", options.preset}, {"rows", json::array()}};
  const size_t total = entries.size() * static_cast<size_t>(seeds);
  size_t done = 0;
  bool interrupted = false;
  for (const SuiteEntry& entry : entries) {
    std::vector<json> summaries;
    json seed_list = json::array();
    for (int seed = 0; seed < seeds && !interrupted; ++seed) {
      ++done;
      if (InterruptScope::stop_signal() != 0) {  // arrived after the last run's final check
        interrupted = true;
        break;
      }
      const fs::path dir = root / entry.label / fmt::format("seed{}", seed);
      if (failed.contains(run_name(entry, seed))) continue;  // in a --jobs child, reported there
      out << fmt::format("[{}/{}] {} seed {} -> {}\n", done, total, entry.label, seed, dir.string())
          << std::flush;
      json summary;
      try {  // one run that fails (bad data, divergence) does not stop the others
        summary = run_one(entry, options, static_cast<uint64_t>(seed), dir);
      } catch (const std::exception& e) {
        // As a --jobs child reports it (train/jobs.cpp).
        std::cerr << fmt::format("maskc: error in {}: {}\n", run_name(entry, seed), e.what());
        failed.insert(run_name(entry, seed));
        continue;
      }
      if (summary.value("interrupted", false)) {
        interrupted = true;
        break;
      }
      summaries.push_back(summary);
      seed_list.push_back(seed);
    }
    if (summaries.empty()) {
      if (interrupted) break;
      continue;  // every seed of this row failed
    }
    results["rows"].push_back(results_row(entry, summaries, seed_list));
    if (interrupted) break;
  }
  results["interrupted"] = interrupted;
  if (!failed.empty()) results["failed"] = failed;
  write_results(options, results, root, out);
  if (!interrupted) throw_if_failed(failed);  // else the run again retries them
  return results;
}

}  // namespace maskprior::training
