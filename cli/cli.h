// The two entry points of `maskc`. `maskc` itself (compile, show, validate) never loads
// LibTorch; `train` and `reproduce` run in `maskc-runtime`, which `maskc` executes in its place.
#pragma once

#include <CLI/CLI.hpp>

namespace maskprior::cli {

/// `maskc`: parses the command line and runs the subcommand; for `train` and `reproduce` it
/// replaces itself with maskc-runtime (same arguments). Returns the exit code.
int run(int argc, char** argv);

/// `maskc-runtime`: the LibTorch subcommands `train` and `reproduce`.
int run_runtime(int argc, char** argv);

/// Parses and runs `app`, mapping every error to an exit code: 0 ok, 1 spec/input error,
/// 2 usage error, 3 internal error. The only top-level catch; `exit_code` is what the
/// subcommand's callback set.
int run_app(CLI::App& app, int argc, char** argv, const int& exit_code);

}  // namespace maskprior::cli
