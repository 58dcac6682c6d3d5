#include "cli/cli.h"
#include "cli/commands.h"

namespace maskprior::cli {

int run_runtime(int argc, char** argv) {
  CLI::App app{
      "maskc — train, reproduce, sweep and distill with attention-mask priors (LibTorch runtime)",
      "maskc"};
  app.set_version_flag("--version", std::string("maskc ") + MASKPRIOR_VERSION);
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_train_command(app, exit_code);
  add_reproduce_command(app, exit_code);
  add_sweep_command(app, exit_code);
  add_distill_command(app, exit_code);
  return run_app(app, argc, argv, exit_code);
}

}  // namespace maskprior::cli
