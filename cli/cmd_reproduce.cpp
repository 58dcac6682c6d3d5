// `maskc reproduce`: runs a suite of training runs (experiments/reproduce.h) and prints its tables.
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "cli/config_flags.h"
#include "cli/share_dir.h"
#include "core/machine.h"
#include "core/text.h"
#include "experiments/placement.h"
#include "experiments/reproduce.h"
#include "report/report.h"
#include "tasks/family.h"
#include "train/config.h"
#include "train/distributed.h"
#include "train/presets.h"

namespace maskprior::cli {

namespace {

struct ReproduceFlags {
  std::string suite;
  std::string out;
  std::string preset = "quick";
  int seeds = 0;
  int threads = 0;
  std::string device = "auto";
  std::string precision;  // "": the config's (fp32)
  int64_t epochs = 0;
  int64_t eval_every = -1;  // -1: the preset's
  std::vector<std::string> only;
  std::string data_dir;
  bool list = false;
  int jobs = all_cores();
  int status_every = 300;  // seconds
  bool report = false;
  bool dry_run = false;
};

/// The suite's options as the flags say; `jobs_given`: --jobs was given.
training::SuiteOptions suite_options(const ReproduceFlags& flags, bool jobs_given) {
  training::SuiteOptions options;
  options.suite = flags.suite;
  options.out =
      flags.out.empty() ? fmt::format("runs/{}-{}", flags.suite, flags.preset) : flags.out;
  options.preset = flags.preset;
  options.seeds = flags.seeds;
  options.share_dir = share_dir();
  options.only = flags.only;
  options.overrides = nlohmann::json::object();
  options.overrides["device"] = flags.device;
  if (!flags.precision.empty()) options.overrides["precision"] = flags.precision;
  if (flags.threads > 0) options.overrides["threads"] = flags.threads;
  if (flags.epochs > 0) options.overrides["epochs"] = flags.epochs;
  if (flags.eval_every >= 0) options.overrides["eval_every"] = flags.eval_every;
  options.jobs = flags.jobs;
  options.status_every = std::chrono::seconds(flags.status_every);
  if (!flags.data_dir.empty()) options.overrides["data_dir"] = flags.data_dir;
  // Under `maskc launch`, torchrun or Slurm: this rank's share of the runs
  // (experiments/reproduce.h), with the machine's cores shared among its ranks unless --jobs or
  // --threads say otherwise.
  options.world = training::world_from_environment();
  const training::Placement placement = training::place_on_cores(
      options.world, all_cores(), options.jobs, jobs_given, options.overrides.contains("threads"));
  options.jobs = placement.jobs;
  if (placement.threads) options.overrides["threads"] = *placement.threads;
  return options;
}

}  // namespace

void add_reproduce_command(CLI::App& app, int& exit_code) {
  auto flags = std::make_shared<ReproduceFlags>();
  std::string suites_help;
  std::vector<std::string> suites;
  for (const tasks::Suite& suite : tasks::suites()) {
    suites_help += fmt::format("\n  {:<11} {}", suite.name, suite.description);
    suites.push_back(suite.name);
  }
  CLI::App* cmd = app.add_subcommand(
      "reproduce",
      "Run a suite of training runs (the paper's comparisons, the reviewers' questions) over\n"
      "seeds and print mean ± std tables. Finished runs are reused and interrupted ones resumed,\n"
      "so rerunning the same command continues where it stopped. Suites:" +
          suites_help);
  cmd->add_option("suite", flags->suite, "Suite to run")->required()->check(CLI::IsMember(suites));
  cmd->add_option("--out", flags->out, "Results folder (default runs/<suite>-<preset>)");
  cmd->add_option("--preset", flags->preset, "Training preset for every run")
      ->check(CLI::IsMember(training::preset_names()));
  cmd->add_option("--seeds", flags->seeds, "Seeds per row, 0..K-1 (default: 1 for demo, else 5)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--threads", flags->threads, "CPU threads for LibTorch (0 = every core)")
      ->check(CLI::Range(0, kMaxThreads));
  const auto& device = training::config_field("device");
  cmd->add_option("--device", flags->device, device.help)->check(CLI::IsMember(device.allowed));
  const auto& precision = training::config_field("precision");
  cmd->add_option("--precision", flags->precision, precision.help)
      ->check(CLI::IsMember(precision.allowed));
  cmd->add_option("--epochs", flags->epochs, "Override the preset's epochs for every run")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  cmd->add_option("--eval-every", flags->eval_every,
                  "Override the preset's steps between evaluations for every run (0 = every "
                  "epoch): a finer learning curve, at the cost of more evaluations")
      ->check(CLI::Range(int64_t{0}, int64_t{1000000000}));
  cmd->add_option("--only", flags->only, "Keep only rows whose label contains one of these");
  auto* jobs_option =
      cmd->add_option(
             "--jobs,-j", flags->jobs,
             "Runs at once, each in its own process with cores / jobs threads (default: the "
             "number of cores; 1 = one after another in this process, with a progress bar)")
          ->check(CLI::Range(1, 1024));
  add_status_every_option(*cmd, flags->status_every);
  cmd->add_flag("--dry-run", flags->dry_run,
                "List every run (finished, or to run) and estimate the time the runs to run take, "
                "from a few steps of one run of each row timed here; nothing is written");
  cmd->add_flag("--report", flags->report,
                "Also write REPORT.md and plots into the results folder (as `maskc report`)");
  cmd->add_option("--data-dir", flags->data_dir,
                  "vision, language: folder of the data files (default: the Debian package's)");
  cmd->callback([flags, jobs_option, &exit_code] {
    const training::SuiteOptions options = suite_options(*flags, jobs_option->count() > 0);
    if (flags->dry_run) {
      // Under maskc launch or torchrun every rank is asked; one answer is enough.
      if (const auto world = training::world_from_environment(); world && world->rank != 0) {
        exit_code = kExitOk;
        return;
      }
      training::dry_run_suite(options, std::cout);
      exit_code = kExitOk;
      return;
    }
    const nlohmann::json results = training::run_suite(options, std::cout);
    const bool interrupted = results.value("interrupted", false);
    if (flags->report && !interrupted && !results.contains("rank")) {
      std::cout << "report: "
                << printable_utf8(
                       report::write_report({options.out, options.share_dir, /*metric=*/""}))
                << "\n";
    }
    exit_code = interrupted ? kExitInputError : kExitOk;
  });
}

}  // namespace maskprior::cli
