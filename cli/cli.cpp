#include "cli/cli.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/commands.h"
#include "compiler/error.h"

namespace maskprior::cli {

int run(int argc, char** argv) {
  CLI::App app{"maskc — compile, inspect, validate and train with attention-mask priors"};
  app.set_version_flag("--version", std::string("maskc ") + MASKPRIOR_VERSION);
  app.require_subcommand(1);
  int exit_code = kExitOk;
  add_compile_command(app, exit_code);
  add_show_command(app, exit_code);
  add_validate_command(app, exit_code);
  add_train_command(app, exit_code);
  add_reproduce_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  } catch (const SpecError& e) {
    std::cerr << e.what() << '\n';
    return kExitInputError;
  } catch (const InputError& e) {
    std::cerr << "maskc: error: " << e.what() << '\n';
    return kExitInputError;
  } catch (const InternalError& e) {
    std::cerr << "maskc: " << e.what() << " (this is a bug in maskprior)\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "maskc: error: " << e.what() << '\n';
    return kExitInputError;
  }
  return exit_code;
}

}  // namespace maskprior::cli
