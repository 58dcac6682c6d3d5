// `maskc compile SPEC -o OUT`: compile a .mask spec and write the mask tensor file.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/spec_flags.h"
#include "compiler/compile.h"
#include "io/mask_file.h"

namespace maskprior::cli {
namespace {

struct CompileArgs {
  std::string spec;
  std::string output;
  std::string format;  // "safetensors", "npy", or empty: from the output's extension
  SpecFlags flags;
};

TensorFormat output_format(const CompileArgs& args) {
  if (args.format.empty()) {
    const bool npy =
        args.output.size() >= 4 && args.output.substr(args.output.size() - 4) == ".npy";
    return npy ? TensorFormat::kNpy : TensorFormat::kSafetensors;
  }
  return args.format == "npy" ? TensorFormat::kNpy : TensorFormat::kSafetensors;
}

void run_compile(const CompileArgs& args) {
  check_output_is_not_input(args.spec, args.output, "-o");
  const CompiledMask mask = compile_file(args.spec, compile_options(args.flags));
  print_warnings(mask, std::cerr);
  const TensorFormat format = output_format(args);
  if (format == TensorFormat::kNpy && mask.hard) {
    std::cerr << fmt::format(
        "maskc: warning: {}: .npy holds only the mask; the hard mask and provenance are not "
        "saved (use safetensors to keep them)\n",
        args.output);
  }
  write_mask_file(mask, args.output, format);
  std::cout << fmt::format("{}: mask [{}, {}, {}, {}]{} -> {}\n", mask.name, mask.layers,
                           mask.heads, mask.n, mask.n,
                           mask.hard && format == TensorFormat::kSafetensors
                               ? fmt::format(", hard [{}, {}]", mask.n, mask.n)
                               : "",
                           args.output);
}

}  // namespace

void add_compile_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompileArgs>();
  auto* cmd = app.add_subcommand("compile", "Compile a .mask spec to a mask tensor file");
  cmd->add_option("SPEC", args->spec, "The .mask spec to compile")->required()->type_name("FILE");
  cmd->add_option("-o,--output", args->output,
                  "Output file, written atomically (never left half-written); a missing or "
                  "regular file other than SPEC (symbolic links are not followed)")
      ->required()
      ->type_name("OUT");
  add_define_flag(*cmd, args->flags);
  add_digits_flag(*cmd, args->flags);
  add_scale_and_size_flags(*cmd, args->flags);
  cmd->add_option("--format", args->format,
                  "safetensors (default: mask, provenance, hard, metadata) or npy (float32 mask "
                  "only); default: npy if OUT ends in .npy")
      ->check(CLI::IsMember({"safetensors", "npy"}));
  cmd->footer(
      "Writes tensor `mask` float32 [L, H, N, N] (row = query, column = key), `provenance`\n"
      "int32 [L, H, N, N] (source line of the last rule to write each cell), `hard` uint8 [N, N]\n"
      "if the spec has `hard` rules, and the layout, scale and params as metadata.\n"
      "Warnings go to stderr, a one-line summary to stdout.\n"
      "Exit status: 0 ok, 1 error in the spec or an input, 2 usage error.\n\n"
      "Examples:\n"
      "  maskc compile specs/gotu/parity2.mask -o parity2.safetensors\n"
      "  maskc compile specs/gotu/parity2.mask -D n=20 --open 5 -o parity2_n20.npy\n"
      "  maskc compile specs/arith/addition.mask --digits c=msb_first -o addition_msb.safetensors");
  cmd->callback([args, &exit_code] {
    run_compile(*args);
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
