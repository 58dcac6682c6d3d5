// `maskc validate SPEC (--task NAME | --truth-table FILE.csv) [--depth L] [--json]
//                     [--readout TOKEN[,TOKEN...]] [-D name=value]... [--digits SPAN=ORDER]...`
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/spec_flags.h"
#include "compiler/compile.h"
#include "validate/validate.h"

namespace maskprior::cli {
namespace {

struct ValidateArgs {
  std::string spec;
  std::string task;
  std::string truth_table;
  int64_t depth = 0;
  bool json = false;
  std::vector<std::string> readout;
  SpecFlags spec_flags;
};

void run_validate(const ValidateArgs& args, bool depth_given, int& exit_code) {
  CompileOptions compile = compile_options(args.spec_flags);
  compile.provenance = false;  // the validator reads only M and the hard mask
  const CompiledMask mask = compile_file(args.spec, compile);
  print_warnings(mask, std::cerr);

  validate::ValidateOptions options;
  if (depth_given) options.depth = args.depth;
  options.readout = args.readout;
  const validate::Target target =
      args.task.empty() ? validate::target_of(mask, std::nullopt, args.truth_table, options)
                        : validate::target_of(mask, args.task, std::nullopt, options);
  const validate::ValidationReport report = validate::validate_target(mask, target, options);
  std::cout << (args.json ? validate::report_json(report) : validate::format_report(report));
  exit_code = report.ok() ? kExitOk : kExitInputError;
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ValidateArgs>();
  auto* cmd = app.add_subcommand(
      "validate",
      "Check that a spec can express a target: what each output depends on, whether the readout "
      "can see it through the mask, and the min-degree interpolator. Exit 1 if a required input "
      "is unreachable.");
  cmd->add_option("SPEC", args->spec, "the .mask spec")->required();
  auto* target = cmd->add_option_group("target", "what the spec should express (exactly one)");
  target->add_option("--task", args->task,
                     "built-in task: parity2, maj3, cyclic3, threesym, addition, multiplication");
  target->add_option("--truth-table", args->truth_table,
                     "CSV: input columns named after tokens (x0 or x[0]), outputs y or y0, y1...,"
                     " optional seen column");
  target->require_option(1);
  auto* depth = cmd->add_option("--depth", args->depth,
                                "layers to follow (default: the spec's layers, at least 1)");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->add_option("--readout", args->readout,
                  "token(s) where outputs are read: one for all, or one per output (default: "
                  "the task's; cls for CSV)")
      ->delimiter(',');
  add_define_flag(*cmd, args->spec_flags);
  add_digits_flag(*cmd, args->spec_flags);
  cmd->callback([args, depth, &exit_code] { run_validate(*args, depth->count() > 0, exit_code); });
}

}  // namespace maskprior::cli
