#include "cli/cli.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string_view>

#include "cli/commands.h"
#include "io/atomic_file.h"

namespace maskprior::cli {

namespace {

constexpr std::string_view kRuntimeProgram = "maskc-runtime";

bool is_runtime_command(std::string_view name) {
  return name == "train" || name == "reproduce" || name == "sweep" || name == "distill";
}

/// Replaces this process with maskc-runtime from maskc's own folder; returns only on failure.
int exec_runtime(char** argv) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  const auto program =
      (error ? std::filesystem::path(argv[0]) : self).parent_path() / std::string(kRuntimeProgram);
  ::execv(program.c_str(), argv);
  const int reason = errno;
  std::cerr << fmt::format(
      "maskc: error: `{}` runs in {}, which could not be started: {}\n"
      "(a build configured with -DMASKPRIOR_WITH_TORCH=OFF has no training runtime)\n",
      argv[1], program.string(), std::strerror(reason));
  return kExitUsage;
}

}  // namespace

int run(int argc, char** argv) {
  if (argc > 1 && is_runtime_command(argv[1])) return exec_runtime(argv);
  // Ctrl-C or SIGTERM during a write removes its temporary file, then ends maskc as usual.
  remove_temp_files_on_signals();
  CLI::App app{"maskc — compile, inspect, validate and train with attention-mask priors"};
  app.set_version_flag("--version", std::string("maskc ") + MASKPRIOR_VERSION);
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_compile_command(app, exit_code);
  add_show_command(app, exit_code);
  add_diff_command(app, exit_code);
  add_validate_command(app, exit_code);
  add_report_command(app, exit_code);
  add_launch_command(app, exit_code, argv[0]);
  add_serve_command(app, exit_code);
  add_export_command(app, exit_code);
  // Listed here for --help; they run in maskc-runtime (see exec_runtime).
  app.add_subcommand("train", "Train a masked Transformer on a task with a spec's prior");
  app.add_subcommand("reproduce", "Run a suite of training runs over seeds and tabulate them");
  app.add_subcommand("sweep", "Train a grid of settings over seeds, one table row per combination");
  app.add_subcommand("distill",
                     "Write what a finished run attends to (or its learned M) as a spec");
  return run_app(app, argc, argv, exit_code);
}

}  // namespace maskprior::cli
