// `maskc serve [DIR]`: the spec playground and run dashboard in the browser (serve/).
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/share_dir.h"
#include "core/error.h"
#include "serve/server.h"

namespace maskprior::cli {
namespace {

void run_serve(serve::ServerOptions options) {
  if (!serve::is_loopback(options.host)) {
    std::cerr << fmt::format(
        "maskc serve: warning: listening on {}: anyone who can reach this machine can read and "
        "write the specs under the served folder (the default, 127.0.0.1, is this machine only)\n",
        options.host);
  }
  try {
    options.serve.examples_dir = share_dir() + "/specs";
  } catch (const InputError&) {
    options.serve.examples_dir.clear();  // no shipped specs: the page offers the folder's own
  }
  serve::run_server(options, std::cout);
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<serve::ServerOptions>();
  options->serve.dir = ".";
  auto* cmd = app.add_subcommand(
      "serve",
      "Open a spec playground and a run dashboard in the browser, served from this machine");
  cmd->add_option("DIR", options->serve.dir,
                  "The folder served: its specs and truth tables in the playground, its run "
                  "folders in the dashboard; nothing outside it is read or written (default .)")
      ->type_name("DIR");
  cmd->add_option("--port", options->port, "Port to listen on; 0 picks a free one (default 8765)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", options->host,
                  "Address to listen on (default 127.0.0.1, this machine only; any other prints a "
                  "warning)");
  cmd->add_option("--allow-host", options->allow_hosts,
                  "A name this server may be reached by (the Host header) besides its IP "
                  "addresses, localhost and this machine's name; repeatable. Every other name is "
                  "refused (DNS rebinding)")
      ->type_name("NAME");
  cmd->add_option("--max-bytes", options->serve.max_bytes,
                  "Refuse a compile whose mask and provenance exceed this many bytes (as maskc "
                  "compile; default 4 GiB)")
      ->check(CLI::Range(uint64_t{0}, kMaxBytesCeiling));
  cmd->add_option("--time-limit", options->serve.time_limit_s,
                  "Seconds a compile or validation may take before it is stopped (default 20)")
      ->check(finite_range(0.1, 3600));
  cmd->footer(
      "Prints the URL to open, then serves until Ctrl-C (exit status 0). The page needs no\n"
      "network: everything it loads comes from maskc.\n"
      "Exit status: 0 stopped by Ctrl-C or SIGTERM, 1 cannot serve DIR or listen, 2 usage "
      "error.\n\n"
      "Examples:\n"
      "  maskc serve specs/                 # then open http://127.0.0.1:8765/\n"
      "  maskc serve runs/ --port 9000\n"
      "  maskc serve . --host 0.0.0.0       # reachable from other machines: a warning");
  cmd->callback([options, &exit_code] {
    run_serve(*options);
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
