// Line plots as PNG files (PLplot, cairo PNG driver): learning curves, accuracy per init with the
// spread over seeds, accuracy against a swept setting. One figure, or a grid of panels, per file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/compiled_mask.h"

namespace maskprior {

/// One curve or set of points. `low`/`high`, when given (same length as x), draw error bars, or
/// with `band` a shaded band around the line (the spread over seeds of a learning curve).
struct PlotSeries {
  std::string label;
  std::vector<double> x, y;
  std::vector<double> low, high;
  bool points = false;  // markers only (e.g. one marker per seed); otherwise a line with markers
  bool band = false;
};

struct PlotSpec {
  std::string title, x_label, y_label;
  std::vector<PlotSeries> series;
  bool log_x = false;
  /// Category names for x = 0, 1, ... (e.g. init methods); when set, x ticks show them.
  std::vector<std::string> x_categories;
  int width = 900, height = 560;  // pixels
};

/// Whether `plot`'s category names fit side by side below its x axis as write_plot_png lays it
/// out; when not, they would run into each other (a caller may number them instead).
bool categories_fit(const PlotSpec& plot);

/// About the characters a line of text takes across a plot image (text is sized by the page, a
/// character about 1% of its width).
inline constexpr size_t kTitleCharacters = 90;

/// A plot's title as drawn, centred over the whole image: one line, or two split at the space
/// nearest its middle when it has more than kTitleCharacters characters.
std::vector<std::string> title_lines(const std::string& title);

/// Draws `plot` into the PNG file `path`, written atomically (a temp file renamed into place).
/// Throws InputError for a plot with no finite point or mismatched series lengths, and
/// InputError naming the path when the file cannot be written.
void write_plot_png(const std::string& path, const PlotSpec& plot);

/// The largest side of a write_plots_png image, in pixels: 3 bytes a pixel in memory, and larger
/// images are more than browsers reliably show.
constexpr int kMostPlotPixels = 32000;

/// Draws `panels` into one PNG file `path` (small multiples), left to right and top to bottom in
/// `columns` columns (fewer when there are fewer panels), each panel as write_plot_png draws it
/// alone, in a cell of the largest width and height of the panels; written atomically. Throws
/// InputError as write_plot_png does for any panel, before anything is written, and for no
/// panels, columns < 1, or an image more than kMostPlotPixels a side.
void write_plots_png(const std::string& path, const std::vector<PlotSpec>& panels, int columns = 2);

/// What write_mask_figure drew.
struct MaskFigure {
  static constexpr int64_t kMostBlocks = 512;  // blocks a side; larger N is averaged
  int64_t cells_per_block = 1;  // > 1: each square is the mean of a block this many cells a side
  double scale = 0;             // |M| at full red (open) or full blue (closed)
};

/// A value a figure's cells take that stands for a category (maskc diff: "A only" at 1), named
/// in a legend of coloured boxes instead of a colour bar.
struct MaskCategory {
  double value;
  std::string label;
};

/// A labelled picture of one (layer, head) of a mask, as a PNG written atomically: the heatmap
/// (blue = closed, white = 0, red = open, black = hard; query 0 at the top), token labels on both
/// axes (span names at their middles, with span boundaries, when there are more than 40 tokens),
/// `title` above, and a colour bar of the values (`value_label`: M, or ΔM for a difference) or,
/// when `categories` are given, a legend of them (and of black = hard).
MaskFigure write_mask_figure(const CompiledMask& mask, int64_t layer, int64_t head,
                             const std::string& path, const std::string& title,
                             const std::string& value_label = "M",
                             const std::vector<MaskCategory>& categories = {});

}  // namespace maskprior
