// What a mistyped command line most likely meant: the flag or command nearest to an unknown one
// by edit distance, for "did you mean --lr?".
#pragma once

#include <CLI/CLI.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace maskprior::cli {

/// Levenshtein distance: the fewest insertions, deletions and substitutions from `a` to `b`.
size_t edit_distance(std::string_view a, std::string_view b);

/// The names of `candidates` nearest to `unknown`, if any is near enough to be a typo (at most a
/// third of its length of edits, and at least 2) or starts with it; "" if none.
std::string nearest(const std::vector<std::string>& candidates, const std::string& unknown);

/// The flags of `cmd` as typed: "--lr", "-q", "--quiet", ...
std::vector<std::string> flag_names(const CLI::App& cmd);

/// The names of the subcommands of `app`.
std::vector<std::string> command_names(const CLI::App& app);

/// The flag of `cmd` that the unknown flag `arg` most likely meant ("--lr" for "--lrr"); "" when
/// nothing is near or `arg` is no flag.
std::string meant_flag(const CLI::App& cmd, const std::string& arg);

/// Prints the usage error `e` of `app` to stderr as CLI11 does, with what the user most likely
/// meant: an unknown command named with the commands (and the nearest), an unknown flag with
/// the nearest flag of the command it was given to.
void print_usage_error(CLI::App& app, const CLI::ParseError& e);

}  // namespace maskprior::cli
