// `maskc distill RUN_DIR -o learned.mask`: what a trained model attends to, as a spec.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <system_error>

#include "cli/commands.h"
#include "cli/spec_flags.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "train/distill.h"

namespace maskprior::cli {
namespace {

struct DistillArgs {
  std::string run_dir, output;
  training::DistillOptions options;
};

void run_distill(const DistillArgs& args) {
  check_output_is_not_input(args.run_dir + "/spec.mask", args.output, "-o");
  const training::Distillation distilled = training::distill_run(args.run_dir, args.options);
  // Its folder is made as `maskc train --out` makes its own, once there is something to write.
  const std::filesystem::path folder = std::filesystem::path(args.output).parent_path();
  std::error_code error;
  if (!folder.empty()) std::filesystem::create_directories(folder, error);
  if (error) {
    throw InputError(fmt::format("-o {}: cannot create its folder {}: {}", args.output,
                                 folder.string(), error.message()));
  }
  write_file_atomic(args.output, distilled.spec);
  std::cout << fmt::format("wrote {} ({} from {}", args.output,
                           args.options.from == "mask" ? "the learned M" : "attention",
                           args.run_dir);
  if (args.options.from == "attention") {
    std::cout << fmt::format(" over {} probe rows; the pattern holds", distilled.rows);
    for (size_t l = 0; l < distilled.layer_mass.size(); ++l) {
      std::cout << fmt::format("{} {:.3f} (layer {})", l == 0 ? "" : ",", distilled.layer_mass[l],
                               l);
    }
    std::cout << " of the attention";
  }
  std::cout << ")\n";
  if (!distilled.no_prior.empty()) std::cerr << "maskc: warning: " << distilled.no_prior << "\n";
}

}  // namespace

void add_distill_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DistillArgs>();
  auto* cmd = app.add_subcommand(
      "distill",
      "Write what a finished run's model attends to (or the M it learned) as a .mask "
      "spec, in the language's own shapes where they fit");
  cmd->add_option("RUN_DIR", args->run_dir, "A finished run folder of `maskc train --out`")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("-o,--output", args->output, "The spec to write (atomically)")
      ->required()
      ->type_name("OUT.mask");
  cmd->add_option("--from", args->options.from,
                  "attention: the model's attention maps over the run's probe rows, averaged "
                  "per layer and head; mask: the learned M (its cells nearer the open value than "
                  "the close value) (default attention)")
      ->check(CLI::IsMember({"attention", "mask"}));
  cmd->add_option("--rows", args->options.rows,
                  "--from attention: probe rows to average (the fixed rows the run's attention "
                  "metrics read; default 256)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--mass", args->options.mass,
                  "--from attention: each query row keeps the fewest keys that hold this share "
                  "of its attention; the rest close (default 0.9)")
      ->check(finite_range(1e-6, 1.0));
  cmd->add_option("--per", args->options.per,
                  "head: a pattern per layer and head; layer: the union of each layer's heads; "
                  "model: the union of all (default head)")
      ->check(CLI::IsMember({"head", "layer", "model"}));
  cmd->footer(
      "The spec keeps the run's tokens, digit orders and grids, opens what the pattern holds and\n"
      "closes the rest (`default close`), with the run's hard mask; compiling it gives exactly "
      "the\n"
      "pattern. A comment header names the run, the settings and the attention each layer's\n"
      "pattern holds. Data files and a tensor spec in the run's config are read from where it\n"
      "names them (run from the folder you trained in).\n"
      "Exit status: 0 ok, 1 error in the run folder or an input, 2 usage error.\n\n"
      "Examples:\n"
      "  maskc distill runs/addition-rich -o learned.mask\n"
      "  maskc distill runs/m --from mask -o back.mask && maskc diff back.mask specs/gotu/"
      "parity2.mask");
  cmd->callback([args, &exit_code] {
    run_distill(*args);
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
