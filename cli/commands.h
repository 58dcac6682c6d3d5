// The subcommands of `maskc`. Each add_*_command registers one CLI11 subcommand whose callback
// does the work and sets `exit_code` (0 ok, 1 spec/input error found, 2 usage error).
// Errors are thrown (SpecError, InputError, ...); cli::run maps them to exit codes.
#pragma once

#include <CLI/CLI.hpp>

namespace maskprior::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInputError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;

void add_compile_command(CLI::App& app, int& exit_code);
void add_show_command(CLI::App& app, int& exit_code);
void add_validate_command(CLI::App& app, int& exit_code);
/// `maskc report DIR` (cmd_report.cpp).
void add_report_command(CLI::App& app, int& exit_code);
void add_train_command(CLI::App& app, int& exit_code);
void add_reproduce_command(CLI::App& app, int& exit_code);
/// `maskc sweep --grid KEY=V1,V2 ... -- TRAIN_FLAGS` (cmd_sweep.cpp).
void add_sweep_command(CLI::App& app, int& exit_code);
/// `maskc launch --nproc N -- train|reproduce ...` (cmd_launch.cpp); `argv0` finds maskc-runtime.
void add_launch_command(CLI::App& app, int& exit_code, const char* argv0);

}  // namespace maskprior::cli
