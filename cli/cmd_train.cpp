// `maskc train`: builds a TrainConfig from a preset and flags, or resumes a run folder. Every
// config flag is a row of the table in train/config.cpp: name, help, allowed values and whether
// --resume accepts it come from there.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "cli/commands.h"
#include "cli/config_flags.h"
#include "core/error.h"
#include "core/text.h"
#include "tasks/family.h"
#include "train/config.h"
#include "train/distributed.h"
#include "train/train.h"

namespace maskprior::cli {

namespace {

inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, the shell's convention

/// The parsed flags: the config table's (ConfigFlags), and those of resuming and data parallelism.
struct TrainFlags : ConfigFlags {
  std::string resume;
  bool json = false;
  bool print_config = false;
  bool save_test_rows = false;
  // Data-parallel: as RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT say (-1/empty: not
  // given; the variables, if set, fill the rest). See docs/distributed.md.
  int rank = -1, world_size = 0, local_rank = -1, master_port = 0;
  std::string master_addr, rendezvous_file;
  double dist_timeout = 0;
};

/// The world of a data-parallel run: the launcher's variables, then the flags over them; nullopt
/// for one process (neither given).
std::optional<training::World> world_of(const TrainFlags& f) {
  auto world = training::world_from_environment();
  if (!world && f.rank < 0 && f.world_size == 0) return std::nullopt;
  training::World w = world.value_or(training::World{});
  if (f.rank >= 0) w.rank = f.rank;
  if (f.world_size > 0) w.size = f.world_size;
  if (f.local_rank >= 0) w.local_rank = f.local_rank;
  if (!f.master_addr.empty()) w.master_addr = f.master_addr;
  if (f.master_port > 0) w.master_port = f.master_port;
  if (!f.rendezvous_file.empty()) w.rendezvous_file = f.rendezvous_file;
  if (f.dist_timeout > 0) w.timeout_seconds = f.dist_timeout;
  training::check_world(w);
  return w;
}

void add_world_flags(CLI::App& cmd, TrainFlags& f) {
  const char* group = "Data-parallel (default: the RANK, WORLD_SIZE, ... variables)";
  cmd.add_option("--rank", f.rank, "This process's rank (RANK)")
      ->group(group)
      ->check(CLI::Range(0, 1 << 20));
  cmd.add_option("--world-size", f.world_size, "Number of processes (WORLD_SIZE)")
      ->group(group)
      ->check(CLI::Range(1, 1 << 20));
  cmd.add_option("--local-rank", f.local_rank, "Rank on this machine: its GPU (LOCAL_RANK)")
      ->group(group)
      ->check(CLI::Range(0, 1 << 20));
  cmd.add_option("--master-addr", f.master_addr, "Rank 0's address (MASTER_ADDR)")->group(group);
  cmd.add_option("--master-port", f.master_port, "Rank 0's rendezvous port (MASTER_PORT)")
      ->group(group)
      ->check(CLI::Range(1, 65535));
  cmd.add_option("--rendezvous-file", f.rendezvous_file,
                 "Meet through this file (a FileStore) instead of a TCP port; its folder must be "
                 "private (MASKC_RENDEZVOUS_FILE; default on loopback: a file in a private "
                 "folder)")
      ->group(group);
  cmd.add_option("--dist-timeout", f.dist_timeout,
                 "Seconds a rank waits for the others before failing (MASKC_DIST_TIMEOUT; "
                 "default 60)")
      ->group(group)
      ->check(finite_range(training::kMinTimeoutSeconds, training::kMaxTimeoutSeconds));
}

/// The flags of the rows --resume accepts: "--threads, --device, --precision, -q/--quiet,
/// --stop-after".
std::string resumable_flags() {
  std::vector<std::string> names;
  for (const auto& field : training::config_fields()) {
    if (field.resumable) names.push_back(flag_text(field));
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

/// A run being resumed takes its settings from its config.json: a flag of a row --resume does not
/// accept is a usage error (the library refuses it too, see training::check_resume_overrides).
void check_resume_flags(const TrainFlags& flags) {
  if (!flags.config_file.empty()) {
    throw CLI::ValidationError("--resume",
                               "--config cannot be given with it: a resumed run's "
                               "settings come from " +
                                   flags.resume + "/config.json");
  }
  for (const auto& [option, field] : flags.given) {
    if (option->count() == 0 || field->resumable) continue;
    throw CLI::ValidationError(
        "--resume", fmt::format("{} cannot change a run being resumed (its settings come from "
                                "{}/config.json); only {} may be given",
                                flag_text(*field), flags.resume, resumable_flags()));
  }
}

void print_summary(const nlohmann::json& summary, const std::string& out) {
  auto number = [&](const char* key) {
    if (!summary.contains(key)) return std::string("-");
    if (summary[key].is_number()) return fmt::format("{:.4f}", summary[key].get<double>());
    return std::string(summary[key].is_null() ? "n/a" : "-");  // null: no rows to measure
  };
  auto list = [&](const char* key) {
    if (!summary.contains(key)) return std::string("-");
    std::vector<std::string> parts;
    for (const auto& v : summary[key]) parts.push_back(fmt::format("{:.3f}", v.get<double>()));
    return fmt::format("[{}]", fmt::join(parts, ", "));
  };
  std::string learned = summary.value("task", "");
  if (summary.contains("data")) learned = "data " + summary.value("data", "");
  if (summary.contains("truth_table")) learned = "truth table " + summary.value("truth_table", "");
  // Every metric the run's task family reports (summaries from before `family` name the family
  // through their task or data).
  const tasks::TaskFamily* family = tasks::find_family(summary.value("family", ""));
  if (family == nullptr) {
    family = &tasks::family_of_run({{"task", summary.value("task", "")},
                                    {"data", summary.value("data", "")},
                                    {"truth_table", summary.value("truth_table", "")}});
  }
  std::vector<std::string> parts;
  for (const tasks::Metric& metric : family->metrics) {
    parts.push_back(fmt::format("{} {}", metric.label, number(metric.key.c_str())));
  }
  parts.push_back("train loss " + number("train_loss"));
  std::cout << fmt::format("{} {} seed {}: {}\n", learned, summary.value("init", ""),
                           summary.value("seed", 0), fmt::join(parts, ", "));
  std::cout << fmt::format("prior mass per layer: {} at step 0, {} at the end\n",
                           list("prior_mass_init"), list("prior_mass"));
  if (summary.contains("mask_drift")) {
    std::cout << fmt::format("mask drift per layer: {}\n", list("mask_drift"));
  }
  std::cout << fmt::format("{} steps in {:.1f} s{}\n", summary.value("steps", 0),
                           summary.value("wall_seconds", 0.0),
                           out.empty() ? "" : "; run folder " + printable_utf8(out));
}

/// The run's config from the preset and the flags given (`overrides`). Every mistake in them is a
/// usage error (exit 2) naming the setting and what it allows: an unknown task, a combination
/// that cannot run (`--data` without `--predict`, `--init mask` without `--spec`), a setting of
/// another task family, and `--epochs 0`, which would train nothing (training::check_config).
training::TrainConfig config_of_flags(const TrainFlags& f, const nlohmann::json& overrides) {
  try {
    // --config FILE may name the task and preset; a flag typed beside it wins (overrides_of).
    auto config = training::resolve_config(overrides.value("task", f.config.task),
                                           overrides.value("preset", f.config.preset), overrides);
    tasks::family_of_run(training::to_json(config));  // an unknown task, with the known ones
    training::check_trains_a_step(config);
    return config;
  } catch (const InputError& e) {
    throw CLI::ValidationError(e.what());
  }
}

/// Trains or resumes as the flags say; returns the exit code.
int run_train(TrainFlags& f, bool resuming) {
  auto overrides = overrides_of(f);
  nlohmann::json summary;
  std::string out;
  const auto world = world_of(f);
  const training::World* in_world = world ? &*world : nullptr;
  if (resuming) {
    check_resume_flags(f);
    out = f.resume;
    summary = training::resume(f.resume, overrides, in_world);
  } else {
    auto given = [&](const char* key) {
      return overrides.contains(key) && overrides[key].is_string() &&
             !overrides[key].get<std::string>().empty();
    };
    if (!given("task") && !given("data") && !given("truth_table")) {
      throw CLI::RequiredError("--task (or --data, or --truth-table)");
    }
    auto config = config_of_flags(f, overrides);
    config.save_test_rows = f.save_test_rows;
    if (f.print_config) {  // every resolved setting, as config.json holds it, in --help's order
      // (without the settings the run's family does not read, as config.json leaves them out)
      const nlohmann::json values = training::run_config_json(config, nlohmann::json::object());
      nlohmann::ordered_json ordered;
      for (const auto& field : training::config_fields()) {
        if (values.contains(field.key)) ordered[field.key] = values[field.key];
      }
      ordered[training::kConfigFormatKey] = values[training::kConfigFormatKey];
      std::cout << ordered.dump(2) << '\n';
      return kExitOk;
    }
    out = config.out;
    summary = training::train(config, in_world);
  }
  if (summary.contains("rank") || (world && world->rank != 0)) {  // rank 0 reports
    const int signal = summary.value("signal", 0);
    return !summary.value("interrupted", false) ? kExitOk
           : signal != 0                        ? 128 + signal
                                                : kExitInterrupted;
  }
  if (summary.value("interrupted", false)) {
    std::cerr << fmt::format("maskc: training stopped at step {}{}\n", summary.value("steps", 0),
                             out.empty() ? " (no --out, nothing saved)"
                                         : "; continue with: maskc train --resume " + out);
    const int signal = summary.value("signal", 0);
    return signal != 0 ? 128 + signal : kExitInterrupted;
  }
  if (f.json) {
    std::cout << summary.dump(2) << '\n';
  } else {
    print_summary(summary, out);
  }
  return kExitOk;
}

}  // namespace

void add_train_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "train",
      "Train a masked Transformer on a task with a spec's prior.\n"
      "  maskc train --task parity2 --spec specs/gotu/parity2.mask --init mask --preset quick "
      "--out runs/m\n"
      "  maskc train --data train.txt --spec s.mask --predict c --init mask --preset quick "
      "--out runs/d\n"
      "  maskc train --truth-table t.csv --spec s.mask --init mask --preset quick --out runs/t\n"
      "  maskc train --resume runs/m");
  auto flags = std::make_shared<TrainFlags>();
  add_config_flags(*cmd, *flags);
  auto* resume = cmd->add_option(
      "--resume", flags->resume,
      fmt::format("continue the interrupted run in this folder (other settings come from its "
                  "config.json; only {} may be given)",
                  resumable_flags()));
  cmd->add_flag("--json", flags->json, "print the summary as JSON");
  cmd->add_flag("--print-config", flags->print_config,
                "print every resolved setting (the preset, then the flags given) as config.json "
                "would hold it, and exit without training")
      ->excludes(resume);
  cmd->add_flag("--save-test-rows", flags->save_test_rows,
                "also write test_rows.safetensors, the rows the test metrics read, into the run "
                "folder (maskprior.load_run in Python reproduces the metrics from them)")
      ->excludes(resume);
  add_world_flags(*cmd, *flags);
  cmd->callback(
      [flags, resume, &exit_code] { exit_code = run_train(*flags, resume->count() > 0); });
}

}  // namespace maskprior::cli
