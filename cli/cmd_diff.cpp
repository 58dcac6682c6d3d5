// `maskc diff A B`: which cells two masks of one layout open, per layer and head.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/spec_flags.h"
#include "core/cells.h"
#include "render/grid.h"
#include "render/plot.h"

namespace maskprior::cli {
namespace {

struct DiffArgs {
  std::string a, b, png;
  int64_t layer = 0;
  int64_t head = 0;
  SpecFlags flags;
};

void run_diff(const DiffArgs& args) {
  if (!args.png.empty()) {
    check_output_is_not_input(args.a, args.png, "--png");
    check_output_is_not_input(args.b, args.png, "--png");
  }
  const CompiledMask a = load_spec_or_mask_file(args.a, args.flags, std::cerr);
  const CompiledMask b = load_spec_or_mask_file(args.b, args.flags, std::cerr);
  check_finite_cells(a, args.a);
  check_finite_cells(b, args.b);
  const PatternDiff diff = compare_patterns(a, b);
  std::cout << render_pattern_diff(diff, args.a, args.b);
  if (args.png.empty()) return;
  check_layer_head(diff.cells, args.layer, args.head);
  const std::string title = fmt::format(
      "A = {} vs B = {}: layer {}, head {}", std::filesystem::path(args.a).filename().string(),
      std::filesystem::path(args.b).filename().string(), args.layer, args.head);
  write_mask_figure(diff.cells, args.layer, args.head, args.png, title, "A vs B",
                    {{1, "A only"}, {0.5, "both"}, {-1, "B only"}, {0, "neither"}});
  std::cout << fmt::format(
      "wrote {} (red: open in A only, pale red: open in both, blue: open in B only, white: "
      "closed in both, black: hard)\n",
      args.png);
}

}  // namespace

void add_diff_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DiffArgs>();
  auto* cmd = app.add_subcommand(
      "diff",
      "Compare the open cells of two masks of one layout: per layer and head, the cells "
      "open in one and not the other, their Jaccard overlap, and side-by-side grids");
  cmd->add_option("A", args->a, "A .mask spec or a tensor file written by `maskc compile`")
      ->required()
      ->type_name("SPEC|FILE");
  cmd->add_option("B", args->b,
                  "The mask to compare with A (same layout; one layer or head "
                  "stands for all)")
      ->required()
      ->type_name("SPEC|FILE");
  auto* png = cmd->add_option("--png", args->png,
                              "Also draw the difference of one (layer, head) to this PNG")
                  ->type_name("OUT.png")
                  ->check(png_path());
  // The text compares every layer and head: --layer and --head choose only what --png draws.
  cmd->add_option("--layer", args->layer, "--png: the layer to draw (default 0)")->needs(png);
  cmd->add_option("--head", args->head, "--png: the head to draw (default 0)")->needs(png);
  add_define_flag(*cmd, args->flags);
  add_digits_flag(*cmd, args->flags);
  add_scale_and_size_flags(*cmd, args->flags);
  cmd->footer(
      "A cell is open when it is not hard-excluded and its value lies nearer the open value than\n"
      "the close value (the pattern a run trains against and measures prior mass on). -D, "
      "--digits,\n"
      "--open and --close apply to whichever of A and B are specs.\n"
      "Exit status: 0 ok, 1 error in a spec or an input, 2 usage error.\n\n"
      "Examples:\n"
      "  maskc diff learned.mask specs/arith/addition.mask\n"
      "  maskc diff runs/m/mask.safetensors specs/gotu/parity2.mask --png diff.png");
  cmd->callback([args, &exit_code] {
    run_diff(*args);
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
