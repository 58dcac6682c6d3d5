// The subcommands of `maskc`. Each add_*_command registers one CLI11 subcommand whose callback
// does the work and sets `exit_code` (0 ok, 1 spec/input error found, 2 usage error).
// Errors are thrown (SpecError, InputError, ...); cli::run maps them to exit codes.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "core/text.h"

namespace maskprior::cli {

/// CLI::Range for a real-valued flag that also refuses NaN and infinities (CLI::Range compares,
/// and every comparison with NaN is false, so NaN passed it).
inline CLI::Validator finite_range(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        double value = 0;
        if (!CLI::detail::lexical_cast(text, value)) return "not a number: " + text;
        if (!std::isfinite(value) || value < low || value > high) {
          return "value " + text + " not in range [" + CLI::detail::to_string(low) + " - " +
                 CLI::detail::to_string(high) + "]";
        }
        return {};
      },
      "FLOAT in [" + CLI::detail::to_string(low) + " - " + CLI::detail::to_string(high) + "]");
}

inline constexpr int kExitOk = 0;
inline constexpr int kExitInputError = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInternal = 3;

void add_compile_command(CLI::App& app, int& exit_code);
void add_export_command(CLI::App& app, int& exit_code);
void add_show_command(CLI::App& app, int& exit_code);
/// `maskc diff A B` (cmd_diff.cpp): the open patterns of two masks compared.
void add_diff_command(CLI::App& app, int& exit_code);
void add_validate_command(CLI::App& app, int& exit_code);
/// `maskc report DIR` (cmd_report.cpp).
void add_report_command(CLI::App& app, int& exit_code);
/// `maskc serve [DIR]` (cmd_serve.cpp): the playground and dashboard in the browser.
void add_serve_command(CLI::App& app, int& exit_code);
void add_train_command(CLI::App& app, int& exit_code);
void add_reproduce_command(CLI::App& app, int& exit_code);
/// `maskc sweep --grid KEY=V1,V2 ... -- TRAIN_FLAGS` (cmd_sweep.cpp).
void add_sweep_command(CLI::App& app, int& exit_code);
/// `maskc distill RUN_DIR -o OUT.mask` (cmd_distill.cpp, in maskc-runtime).
void add_distill_command(CLI::App& app, int& exit_code);
/// `maskc launch --nproc N -- train|reproduce ...` (cmd_launch.cpp); `argv0` finds maskc-runtime.
void add_launch_command(CLI::App& app, int& exit_code, const char* argv0);

/// An output path for a PNG file: its name must end in .png (any case), so that `--png x.jpg`
/// does not write a PNG that every viewer will take for a JPEG.
inline CLI::Validator png_path() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        std::string end = path.size() >= 4 ? path.substr(path.size() - 4) : path;
        std::transform(end.begin(), end.end(), end.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (end == ".png") return {};
        return "'" + printable_utf8(path) + "' does not end in .png: this writes PNG images only";
      },
      "");
}

}  // namespace maskprior::cli
