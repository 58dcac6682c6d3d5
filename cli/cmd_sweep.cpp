// `maskc sweep`: a grid of training settings times seeds (experiments/sweep.h), its flags and the
// Slurm array script of --emit-slurm.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.h"
#include "cli/config_flags.h"
#include "cli/share_dir.h"
#include "cli/suggest.h"
#include "core/error.h"
#include "core/machine.h"
#include "core/text.h"
#include "experiments/placement.h"
#include "experiments/sweep.h"
#include "io/atomic_file.h"
#include "report/report.h"
#include "train/distributed.h"

namespace maskprior::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct SweepFlags {
  std::vector<std::string> grid;
  std::vector<std::string> points;  // --point: a list of combinations instead of a grid
  int seeds = 1;
  std::string out;
  int jobs = all_cores();
  int threads = 0;
  bool dry_run = false;
  bool report = false;
  std::string emit_slurm;
  int shards = 0;          // 0: one array task per run
  int status_every = 300;  // seconds
  std::vector<std::string> train_args;
};

/// The settings of every run: `maskc train`'s flags after `--` (a --config file's settings under
/// them), as config keys; the keys of the flags typed go to `typed`.
json base_settings(const std::vector<std::string>& args, std::set<std::string>* typed) {
  CLI::App train{"the flags of maskc train", "maskc sweep --"};
  ConfigFlags flags;
  add_config_flags(train, flags);
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // as CLI11 reads them
  try {
    train.parse(reversed);
  } catch (const CLI::ExtrasError& e) {
    std::string message = e.what();
    for (const std::string& arg : train.remaining()) {
      if (const std::string near = meant_flag(train, arg); !near.empty()) {
        message += fmt::format("; did you mean {} (not {})?", near, quote_input(arg));
      }
    }
    throw CLI::ValidationError("--", message);
  }
  json base = overrides_of(flags);
  for (const auto& [option, field] : flags.given) {  // the flags typed after --
    if (option->count() == 0) continue;
    typed->insert(field->key);
    if (field->key == "out") {
      throw CLI::ValidationError("--",
                                 "give the sweep's folder as --out before --: each run's "
                                 "folder is named by its settings under it");
    }
    if (field->key == "seed")
      throw CLI::ValidationError("--", "give --seeds N before --, not --seed");
  }
  // A --config file's folder and seed (a run's config.json holds both): the sweep sets them.
  base.erase("out");
  base.erase("seed");
  return base;
}

/// The sweep as the flags say: its grid and base checked (a usage error naming the key and what
/// it allows), every combination resolved before anything runs.
training::SweepOptions sweep_options(const SweepFlags& flags) {
  training::SweepOptions options;
  std::set<std::string> typed;  // the keys of flags typed after -- (not of a --config file)
  options.base = base_settings(flags.train_args, &typed);
  if (flags.threads > 0) options.base["threads"] = flags.threads;
  options.seeds = flags.seeds;
  options.out = flags.out;
  options.jobs = flags.jobs;
  options.status_every = std::chrono::seconds(flags.status_every);
  try {
    for (const std::string& text : flags.grid) {
      training::SweepAxis axis = training::parse_axis(text);
      const bool twice = std::any_of(options.grid.begin(), options.grid.end(),
                                     [&](const auto& a) { return a.key == axis.key; });
      if (twice) throw InputError(fmt::format("--grid {} is given twice", axis.key));
      if (typed.contains(axis.key)) {
        throw InputError(fmt::format("--grid {} is swept and also given after --", axis.key));
      }
      options.base.erase(axis.key);  // a --config file's value: the grid sweeps it
      options.grid.push_back(std::move(axis));
    }
    for (const std::string& text : flags.points) {
      training::SweepPoint point = training::parse_point(text);
      for (const auto& [key, value] : point.settings.items()) {
        if (typed.contains(key)) {
          throw InputError(fmt::format("--point {}: {} is also given after --", point.name, key));
        }
      }
      options.points.push_back(std::move(point));
    }
    // A --config file's values of the keys some combination sets: each combination says.
    for (const training::SweepPoint& point : options.points) {
      for (const auto& [key, value] : point.settings.items()) options.base.erase(key);
    }
    training::sweep_points(options);
  } catch (const InputError& e) {
    throw CLI::ValidationError(std::string(e.what()));  // each names --grid itself
  }
  return options;
}

/// A whole number from the environment variable `name`; nullopt when it is not set.
std::optional<int> env_number(const char* name, int low) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < low || value > (1 << 20)) {
    throw InputError(fmt::format("{}={} is not a whole number of at least {}", name, text, low));
  }
  return static_cast<int>(value);
}

/// Where this process's runs come from: a Slurm array task's share, or the ranks of `maskc
/// launch` / torchrun / srun (with the machine's cores shared among its ranks unless --jobs or
/// --threads say otherwise), or all of them.
void place(training::SweepOptions& options, bool jobs_given) {
  const auto task = env_number("SLURM_ARRAY_TASK_ID", 0);
  const auto tasks = env_number("SLURM_ARRAY_TASK_COUNT", 1);
  if (task && tasks) {
    if (*task >= *tasks) {
      throw InputError(
          fmt::format("SLURM_ARRAY_TASK_ID={} is not below SLURM_ARRAY_TASK_COUNT={} "
                      "(the script of --emit-slurm numbers its tasks from 0)",
                      *task, *tasks));
    }
    options.shard_index = *task;
    options.shard_count = *tasks;
    return;
  }
  options.world = training::world_from_environment();
  const training::Placement placement = training::place_on_cores(
      options.world, all_cores(), options.jobs, jobs_given, options.base.contains("threads"));
  options.jobs = placement.jobs;
  if (placement.threads) options.base["threads"] = *placement.threads;
}

/// Slurm's default MaxArraySize: an array's task indices must be below it.
constexpr size_t kSlurmMaxArraySize = 1001;

/// The array tasks of --emit-slurm: --shards, or one per run up to Slurm's default limit.
size_t array_tasks(const SweepFlags& flags, size_t runs) {
  return flags.shards > 0 ? std::min<size_t>(flags.shards, runs)
                          : std::min(runs, kSlurmMaxArraySize);
}

std::string shell_quote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

/// The Slurm array script: task i of N runs `maskc sweep` with the same flags, which trains its
/// share (SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT).
std::string slurm_script(const SweepFlags& flags, size_t runs, bool jobs_given) {
  const size_t shards = array_tasks(flags, runs);
  std::vector<std::string> args = {"sweep"};
  for (const std::string& axis : flags.grid) args.insert(args.end(), {"--grid", axis});
  for (const std::string& point : flags.points) args.insert(args.end(), {"--point", point});
  args.insert(args.end(), {"--seeds", std::to_string(flags.seeds), "--out",
                           fs::absolute(flags.out).lexically_normal().string()});
  if (jobs_given) args.insert(args.end(), {"--jobs", std::to_string(flags.jobs)});
  if (flags.threads > 0) args.insert(args.end(), {"--threads", std::to_string(flags.threads)});
  if (flags.report) args.push_back("--report");
  args.push_back("--");
  args.insert(args.end(), flags.train_args.begin(), flags.train_args.end());
  std::string command =
      shell_quote((fs::read_symlink("/proc/self/exe").parent_path() / "maskc").string());
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  return fmt::format(
      "#!/bin/bash\n#SBATCH --job-name=maskc-sweep\n#SBATCH --array=0-{}\n"
      "#SBATCH --output=maskc-sweep-%A_%a.out\n"
      "# Written by `maskc sweep --emit-slurm`: {} runs in {} array tasks. Task i trains runs i, "
      "i + {}, ... of the sweep\n# (SLURM_ARRAY_TASK_ID of SLURM_ARRAY_TASK_COUNT) into the shared "
      "folder; the task that finishes the last\n# run writes results.md. Finished runs are never "
      "redone and stopped ones resume: submit again to\n# continue. Submit with: sbatch FILE\n"
      "set -euo pipefail\ncd {}\nexec {}\n",
      shards - 1, runs, shards, shards, shell_quote(fs::current_path().string()), command);
}

/// --emit-slurm: the sweep checked as a run of it would be, then the array script written.
void emit_slurm(const SweepFlags& flags, const training::SweepOptions& options, size_t runs,
                bool jobs_given) {
  const std::vector<training::SweepPoint> points = training::sweep_points(options);
  training::check_sweep_inputs(points, options);
  training::check_sweep_runs(points, options);
  write_file_atomic(flags.emit_slurm, slurm_script(flags, runs, jobs_given));
  std::cout << fmt::format("slurm: {} (sbatch it)\n", flags.emit_slurm);
  const size_t tasks = array_tasks(flags, runs);
  if (tasks < runs) {
    std::cout << fmt::format(
        "{} runs in {} array tasks (task i trains runs i, i + {}, ...){}; --shards K sets how "
        "many tasks share them\n",
        runs, tasks, tasks,
        flags.shards > 0
            ? ""
            : fmt::format(" (Slurm's default MaxArraySize is {})", kSlurmMaxArraySize));
  } else if (tasks > kSlurmMaxArraySize) {
    std::cerr << fmt::format(
        "maskc: warning: {} array tasks: above Slurm's default MaxArraySize ({}), sbatch "
        "refuses the script unless the cluster allows more; a smaller --shards lets each task "
        "train several runs\n",
        tasks, kSlurmMaxArraySize);
  }
}

/// `maskc sweep` as `flags` say (`jobs_given`: --jobs was typed); its exit status.
int run_sweep_command(const SweepFlags& flags, bool jobs_given) {
  if (flags.grid.empty() && flags.points.empty()) {
    throw CLI::RequiredError("--grid KEY=V1,V2,... or --point KEY=V,KEY=V,...");
  }
  training::SweepOptions options = sweep_options(flags);
  const size_t runs = training::sweep_points(options).size() * static_cast<size_t>(flags.seeds);
  if (!flags.emit_slurm.empty()) {
    emit_slurm(flags, options, runs, jobs_given);
    return kExitOk;
  }
  if (flags.dry_run) {
    // Under maskc launch or torchrun every rank is asked; one answer is enough.
    if (const auto world = training::world_from_environment(); world && world->rank != 0) {
      return kExitOk;
    }
    training::dry_run_sweep(options, std::cout);
    return kExitOk;
  }
  place(options, jobs_given);
  const json results = training::run_sweep(options, std::cout);
  const bool interrupted = results.value("interrupted", false);
  if (flags.report && !interrupted && results.value("tabulated", true) &&
      !results.contains("rank")) {
    std::cout << "report: "
              << printable_utf8(report::write_report({options.out, share_dir(), /*metric=*/""}))
              << "\n";
  }
  return interrupted ? kExitInputError : kExitOk;
}

}  // namespace

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Train a grid of settings over seeds and tabulate it, one row per combination (only seeds\n"
      "are averaged). Every flag after -- is a flag of maskc train, for every run:\n"
      "  maskc sweep --grid init=vanilla,mask --grid lr=1e-4,1e-3 --seeds 3 --out runs/s \\\n"
      "    -- --task addition --preset quick\n"
      "or a list of combinations, each --point one (keys may differ between them):\n"
      "  maskc sweep --point init=vanilla --point init=mask,lr=0.01 --seeds 3 --out runs/l -- ...\n"
      "Runs go to OUT/<settings>/seedK (e.g. runs/s/init=mask,lr=0.001/seed0); finished runs are\n"
      "reused and stopped ones resumed, so rerunning the same command continues. Under maskc\n"
      "launch, torchrun or srun the runs split across the ranks; in a Slurm array (see\n"
      "--emit-slurm) across its tasks.");
  cmd->add_option("--grid", flags->grid,
                  "KEY=V1,V2,...: a config.json key of maskc train (init, lr, spec, data, n, "
                  "pos_init_std, ... — any row of its config table but seed, out, -D and the "
                  "execution settings) and its values (\\, for a comma inside one); repeat for "
                  "more keys")
      ->allow_extra_args(false);
  cmd->add_option("--point", flags->points,
                  "KEY=V,KEY=V,...: one combination of a list to run instead of a grid (config "
                  "keys as --grid takes, one value each; \\, for a comma inside one); repeat for "
                  "more")
      ->allow_extra_args(false)
      ->excludes("--grid");
  cmd->add_option("--seeds", flags->seeds, "Seeds per combination, 0..K-1 (default 1)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--out", flags->out, "Results folder")->required();
  auto* jobs = cmd->add_option("--jobs,-j", flags->jobs,
                               "Runs at once, each in its own process with cores / jobs threads "
                               "(default: the number of cores; 1 = one after another)")
                   ->check(CLI::Range(1, 1024));
  cmd->add_option("--threads", flags->threads, "CPU threads per run (0 = cores / jobs)")
      ->check(CLI::Range(0, kMaxThreads));
  add_status_every_option(*cmd, flags->status_every);
  cmd->add_flag("--dry-run", flags->dry_run,
                "List every run and estimate the time the unfinished ones take (a few steps of "
                "each combination are timed here; nothing is written)");
  cmd->add_flag("--report", flags->report,
                "Also write REPORT.md and plots (the metric against each swept setting, one line "
                "per init) into the results folder");
  cmd->add_option("--emit-slurm", flags->emit_slurm,
                  "Write a Slurm array script to FILE whose tasks each run a share of the sweep "
                  "(nothing is trained now)");
  cmd->add_option("--shards", flags->shards,
                  "--emit-slurm: array tasks (default: one per run, at most 1001, Slurm's default "
                  "MaxArraySize)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("TRAIN_FLAGS", flags->train_args, "after --: maskc train's flags for every run");
  cmd->callback(
      [flags, jobs, &exit_code] { exit_code = run_sweep_command(*flags, jobs->count() > 0); });
}

}  // namespace maskprior::cli
