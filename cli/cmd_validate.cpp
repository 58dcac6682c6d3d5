#include "cli/commands.h"

namespace maskprior::cli {

void add_validate_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("validate", "(not yet implemented)");
  cmd->callback([&exit_code] { exit_code = kExitUsage; });
}

}  // namespace maskprior::cli
