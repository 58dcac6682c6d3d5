#include "cli/suggest.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <numeric>

#include "core/error.h"

namespace maskprior::cli {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string nearest(const std::vector<std::string>& candidates, const std::string& unknown) {
  const std::string name = unknown.substr(0, unknown.find('='));  // "--lrr=0.1": "--lrr"
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const std::string& candidate : candidates) {
    const size_t distance = edit_distance(name, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  if (!best.empty() || name.size() < 4) return best;
  // Else the one candidate it begins ("--log" for "--log-every"), if only one.
  std::vector<std::string> longer;
  std::copy_if(candidates.begin(), candidates.end(), std::back_inserter(longer),
               [&](const std::string& candidate) { return candidate.starts_with(name); });
  return longer.size() == 1 ? longer.front() : std::string();
}

std::vector<std::string> flag_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* option : cmd.get_options()) {
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

std::vector<std::string> command_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!sub->get_name().empty()) names.push_back(sub->get_name());
  }
  return names;
}

std::string meant_flag(const CLI::App& cmd, const std::string& arg) {
  return arg.starts_with("-") ? nearest(flag_names(cmd), arg) : std::string();
}

void print_usage_error(CLI::App& app, const CLI::ParseError& e) {
  const std::vector<std::string> extras = app.remaining(/*recurse=*/true);
  if (app.get_subcommands().empty() && !extras.empty() && !extras.front().starts_with("-")) {
    const std::vector<std::string> commands = command_names(app);
    const std::string near = nearest(commands, extras.front());
    std::cerr << fmt::format("maskc: error: unknown command {}{}; the commands are {}\n",
                             quote_input(extras.front()),
                             near.empty() ? "" : fmt::format(" (did you mean {}?)", near),
                             fmt::join(commands, ", "))
              << "Run with --help for more information.\n";
    return;
  }
  // An unknown flag may also come with another error (a required flag missing, reported
  // first): name what it most likely meant either way, for the command it was given to (the
  // deepest one the command line chose).
  const CLI::App* cmd = &app;
  for (auto chosen = app.get_subcommands(); !chosen.empty(); chosen = cmd->get_subcommands()) {
    cmd = chosen.front();
  }
  std::cerr << escape_control_chars(e.what()) << "\n";
  for (const std::string& arg : extras) {
    // What follows `--` is another command's (sweep's train flags), and a parse stopped by an
    // error leaves known flags unread: neither is a misspelling.
    if (arg == "--") break;
    if (const std::string near = meant_flag(*cmd, arg); !near.empty() && near != arg) {
      std::cerr << fmt::format("did you mean {} (not {})?\n", near, quote_input(arg));
    }
  }
  std::cerr << "Run with --help for more information.\n";
}

}  // namespace maskprior::cli
