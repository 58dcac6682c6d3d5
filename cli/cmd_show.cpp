// `maskc show SPEC|FILE`: draw one (layer, head) of a mask as text, optionally as a PNG.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/spec_flags.h"
#include "compiler/compile.h"
#include "io/mask_file.h"
#include "render/grid.h"
#include "render/plot.h"
#include "render/png.h"

namespace maskprior::cli {
namespace {

struct ShowArgs {
  std::string input;
  int64_t layer = 0;
  int64_t head = 0;
  std::string png, png_cells, diff, query;
  double tolerance = 1e-3;
  SpecFlags flags;
  CLI::Option* define_option = nullptr;
  CLI::Option* digits_option = nullptr;
};

CompiledMask load(const ShowArgs& args, const std::string& input) {
  if (is_spec_path(input)) return load_spec_or_mask_file(input, args.flags, std::cerr);
  const bool other_is_spec = is_spec_path(input == args.input ? args.diff : args.input);
  for (const CLI::Option* option : {args.define_option, args.digits_option}) {
    if (option->count() > 0 && !other_is_spec) {  // with --diff: for the spec of the two
      const std::string why = "only applies to .mask specs, not to the tensor file '" + input + "'";
      throw CLI::ValidationError(option->get_name(), why);
    }
  }
  return load_spec_or_mask_file(input, args.flags, std::cerr);
}

void run_show(const ShowArgs& args) {
  for (const auto& [out, flag] : {std::pair{args.png, "--png"}, {args.png_cells, "--png-cells"}}) {
    if (out.empty()) continue;
    check_output_is_not_input(args.input, out, flag);
    if (!args.diff.empty()) check_output_is_not_input(args.diff, out, flag);
  }
  const bool difference = !args.diff.empty();
  const CompiledMask mask = difference
                                ? mask_difference(load(args, args.diff), load(args, args.input))
                                : load(args, args.input);
  std::cout << (difference ? render_difference(mask, args.layer, args.head, args.tolerance)
                           : render_grid(mask, args.layer, args.head));
  if (!args.query.empty()) std::cout << render_query_row(mask, args.layer, args.head, args.query);
  // Both pictures colour by sign: for a mask, whether a cell is open or closed; for a difference,
  // whether it rose or fell in training.
  const char* red = difference ? "rose" : "open";
  const char* blue = difference ? "fell" : "closed";
  const char* value = difference ? "ΔM" : "M";
  if (!args.png.empty()) {
    const std::string what = difference          ? fmt::format("{} − {}", args.input, args.diff)
                             : mask.name.empty() ? args.input
                                                 : mask.name;
    const std::string title = fmt::format("{}: layer {}, head {} ({} tokens{})", what, args.layer,
                                          args.head, mask.n, mask.hard ? "; black: hard" : "");
    const MaskFigure figure =
        write_mask_figure(mask, args.layer, args.head, args.png, title, value);
    std::cout << fmt::format(
        "wrote {} (token labels, colour bar: red = {}, blue = {}, white = 0, black = hard; "
        "full colour at |{}| = {:.4g}{})\n",
        args.png, red, blue, value, figure.scale,
        figure.cells_per_block > 1
            ? fmt::format("; each square is the mean of a {0}x{0} block of cells",
                          figure.cells_per_block)
            : "");
  }
  if (args.png_cells.empty()) return;
  const PngReport report = write_png_heatmap(mask, args.layer, args.head, args.png_cells);
  std::string detail;
  if (report.cells_per_pixel > 1) {
    detail = fmt::format("; downsampled: each pixel is the mean of a {0}x{0} block of cells",
                         report.cells_per_pixel);
  } else if (report.pixels_per_cell > 1) {
    detail = fmt::format("; each cell is {0}x{0} pixels", report.pixels_per_cell);
  }
  std::cout << fmt::format(
      "wrote {} ({}x{} pixels{}; red = {}, blue = {}, white = 0, black = hard; "
      "full colour at |{}| = {:.4g})\n",
      args.png_cells, report.side, report.side, detail, red, blue, value, report.scale);
}

}  // namespace

void add_show_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ShowArgs>();
  auto* cmd = app.add_subcommand(
      "show", "Draw one (layer, head) of a mask: a labelled text grid, or a PNG heatmap");
  cmd->add_option("INPUT", args->input,
                  "A .mask spec (compiled on the fly) or a tensor file written by `maskc compile`")
      ->required()
      ->type_name("SPEC|FILE");
  cmd->add_option("--layer", args->layer, "Layer to draw (default 0)");
  cmd->add_option("--head", args->head, "Head to draw (default 0)");
  cmd->add_option("--png", args->png,
                  "Also draw the (layer, head) to this PNG: a heatmap with token labels on both "
                  "axes, a title and a colour bar")
      ->type_name("OUT.png")
      ->check(png_path());
  cmd->add_option("--png-cells", args->png_cells,
                  "Also write the bare heatmap, one square of pixels per cell and nothing else "
                  "(for other tools)")
      ->type_name("OUT.png")
      ->check(png_path());
  cmd->add_option("--diff", args->diff,
                  "Show what changed from this mask to INPUT, cell by cell (INPUT − INIT: e.g. a "
                  "run's learned mask.safetensors against its spec); INIT may have one layer or "
                  "head for all")
      ->type_name("INIT");
  cmd->add_option("--query", args->query,
                  "Also draw this query's row (e.g. p[24]) laid out as its keys are: a grid span "
                  "(`grid SPAN H x W`) as its image")
      ->type_name("TOKEN");
  cmd->add_option("--tolerance", args->tolerance,
                  "--diff: changes within ± this count as unchanged (default 0.001)")
      ->check(finite_range(0.0, 1e30));
  args->define_option = add_define_flag(*cmd, args->flags);
  args->digits_option = add_digits_flag(*cmd, args->flags);
  add_scale_and_size_flags(*cmd, args->flags);
  cmd->footer(
      "Rows are queries, columns keys. Grid symbols: # open value, . close value, + - 0 other\n"
      "positive/negative/zero values, x hard-excluded. Masks with more than 64 tokens get a\n"
      "summary instead of a grid; use --png for those (large masks are averaged down to 512x512\n"
      "squares; --png-cells to at most 2048x2048 pixels).\n"
      "Exit status: 0 ok, 1 error in the spec or an input, 2 usage error.\n\n"
      "Examples:\n"
      "  maskc show specs/vision/local7x7.mask --head 2\n"
      "  maskc show parity2.safetensors --png parity2.png\n"
      "  maskc show specs/vision/local7x7.mask --query p[24]\n"
      "  maskc show --diff specs/gotu/parity2.mask runs/m/mask.safetensors --png changed.png");
  cmd->callback([args, &exit_code] {
    run_show(*args);
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
