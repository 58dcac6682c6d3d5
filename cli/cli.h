#pragma once

namespace maskprior::cli {

/// Parses the command line, runs the subcommand, and maps every error to an exit code:
/// 0 ok, 1 spec/input error, 2 usage error, 3 internal error. The only top-level catch.
int run(int argc, char** argv);

}  // namespace maskprior::cli
