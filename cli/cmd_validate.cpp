// `maskc validate SPEC (--task NAME | --truth-table FILE.csv | --depends DECL...) [--depth L]
//                     [--json] [--readout TOKEN[,TOKEN...]] [--feedback token|state]
//                     [-D name=value]... [--digits SPAN=ORDER]...`
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/spec_flags.h"
#include "compiler/compile.h"
#include "validate/declared_depends.h"
#include "validate/validate.h"

namespace maskprior::cli {
namespace {

struct ValidateArgs {
  std::string spec;
  std::string task;
  std::string truth_table;
  std::vector<std::string> depends;
  int64_t depth = 0;
  bool json = false;
  std::vector<std::string> readout;
  std::string feedback = "token";
  SpecFlags spec_flags;
};

/// --depends text that is no declaration is a usage error, found before the spec is compiled.
void check_depends_syntax(const std::vector<std::string>& depends) {
  for (size_t f = 0; f < depends.size(); ++f) {
    try {
      validate::parse_depends(depends[f], static_cast<int>(f) + 1);
    } catch (const SpecError& e) {
      const Diagnostic& d = e.diagnostic();
      throw CLI::ValidationError(
          "--depends", fmt::format("{}column {} of {}: {}",
                                   depends.size() > 1 ? fmt::format("flag {}, ", f + 1) : "",
                                   d.where.column, quote_input(depends[f]), d.message));
    }
  }
}

void run_validate(const ValidateArgs& args, bool depth_given, int& exit_code) {
  check_depends_syntax(args.depends);
  CompileOptions compile = compile_options(args.spec_flags);
  compile.provenance = false;  // the validator reads only M and the hard mask
  const CompiledMask mask = compile_file(args.spec, compile);
  print_warnings(mask, std::cerr);

  validate::ValidateOptions options;
  if (depth_given) options.depth = args.depth;
  options.readout = args.readout;
  options.feedback = *validate::parse_feedback(args.feedback);  // CLI::IsMember checked it
  auto given = [](const std::string& value) {
    return value.empty() ? std::nullopt : std::optional<std::string>(value);
  };
  const validate::Target target =
      validate::target_of(mask, given(args.task), given(args.truth_table), args.depends, options);
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
  target->add_option(
      "--task", args->task,
      fmt::format("built-in task: {}", fmt::join(validate::validatable_tasks(), ", ")));
  target->add_option("--truth-table", args->truth_table,
                     "CSV: input columns named after tokens (x0 or x[0]), outputs y or y0, y1...,"
                     " optional seen column");
  target
      ->add_option("--depends", args->depends,
                   "declared dependencies instead of a table: OUTPUT: INPUTS, e.g. \"c[i]: "
                   "a[..i+1]\" (c[i] needs a[0] to a[i]); several with ';' or more --depends "
                   "(docs/validate.md)")
      ->type_name("DECL")
      ->allow_extra_args(false);
  target->require_option(1);
  auto* depth = cmd->add_option("--depth", args->depth,
                                "layers to follow (default: the spec's layers, at least 1)");
  cmd->add_flag("--json", args->json, "print the report as JSON");
  cmd->add_option("--readout", args->readout,
                  "where outputs are read: tokens (x[3], cls), a span (c) or the rows before its "
                  "tokens (\"before c\"); one row for all outputs or one per output (default: the "
                  "task's; a causal spec: the rows that predict its last span, or each declared "
                  "output; else cls)")
      ->delimiter(',');
  cmd->add_option("--feedback", args->feedback,
                  "causal specs: what an answer token fed back carries: token = only itself, "
                  "state = what the row that predicted it could see (default token)")
      ->check(CLI::IsMember({"token", "state"}));
  add_define_flag(*cmd, args->spec_flags);
  add_digits_flag(*cmd, args->spec_flags);
  cmd->callback([args, depth, &exit_code] { run_validate(*args, depth->count() > 0, exit_code); });
}

}  // namespace maskprior::cli
