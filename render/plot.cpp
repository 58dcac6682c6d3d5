#include "render/plot.h"

#include <fmt/format.h>
#include <plplot/plstream.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <sstream>

#include "core/error.h"
#include "core/text.h"
#include "io/atomic_file.h"
#include "render/grid.h"
#include "render/png.h"

namespace maskprior {

namespace {

// cmap0 colours we set: 0 background (white), 1 axes (black), then the series' colours, then
// the same at 20% opacity for bands.
constexpr int kBackground = 0, kInk = 1, kFirstSeries = 2;
constexpr int kPalette[][3] = {{31, 119, 180},  {214, 39, 40}, {44, 160, 44},   {255, 127, 14},
                               {148, 103, 189}, {140, 86, 75}, {227, 119, 194}, {127, 127, 127},
                               {188, 189, 34},  {23, 190, 207}};
constexpr int kColours = static_cast<int>(std::size(kPalette));
// Marker glyphs (plstring), the same in the plot and its legend.
constexpr const char* kSymbols[] = {"●", "■", "▲", "◆", "✚", "★"};
constexpr int kSymbolCount = static_cast<int>(std::size(kSymbols));

struct Range {
  double low = std::numeric_limits<double>::infinity();
  double high = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (!std::isfinite(v)) return;
    low = std::min(low, v);
    high = std::max(high, v);
  }
  bool empty() const { return low > high; }
  /// Widened by 5% on each side (or by 1 when flat), so markers are not on the frame.
  Range padded() const {
    const double span = high > low ? high - low : 1.0;
    return {low - 0.05 * span, high + 0.05 * span};
  }
};

double axis_x(double x, bool log_x) {
  return log_x ? (x > 0 ? std::log10(x) : NAN) : x;
}

void check_series(const PlotSpec& plot) {
  for (const PlotSeries& s : plot.series) {
    const bool bars = !s.low.empty() || !s.high.empty();
    if (s.x.size() != s.y.size() ||
        (bars && (s.low.size() != s.x.size() || s.high.size() != s.x.size()))) {
      throw InputError(
          fmt::format("[plot] series '{}' of '{}' has mismatched lengths", s.label, plot.title));
    }
  }
}

/// The plot's data ranges in axis coordinates; InputError when there is nothing finite to draw.
std::pair<Range, Range> ranges(const PlotSpec& plot) {
  Range x, y;
  for (const PlotSeries& s : plot.series) {
    for (size_t i = 0; i < s.x.size(); ++i) {
      const double ax = axis_x(s.x[i], plot.log_x);
      if (!std::isfinite(ax) || !std::isfinite(s.y[i])) continue;
      x.add(ax);
      y.add(s.y[i]);
      if (!s.low.empty()) {
        y.add(s.low[i]);
        y.add(s.high[i]);
      }
    }
  }
  if (x.empty())
    throw InputError(fmt::format("[plot] '{}' has no finite point to draw", plot.title));
  if (!plot.x_categories.empty()) {
    x = {-0.5, static_cast<double>(plot.x_categories.size()) - 0.5};
    return {x, y.padded()};
  }
  return {x.padded(), y.padded()};
}

/// Runs of finite points of `s` (NaN breaks a line).
/// The band between `low` and `high` of each run of finite points, in the series' colour at 20%
/// opacity (colour index kFirstSeries + kColours + k).
void draw_band(plstream& pls, const PlotSeries& s, int index, bool log_x) {
  pls.col0(kFirstSeries + kColours + index % kColours);
  std::vector<PLFLT> xs, lows, highs;
  auto flush = [&] {
    if (xs.size() > 1) {
      std::vector<PLFLT> px(xs), py(highs);
      px.insert(px.end(), xs.rbegin(), xs.rend());
      py.insert(py.end(), lows.rbegin(), lows.rend());
      pls.fill(static_cast<PLINT>(px.size()), px.data(), py.data());
    }
    xs.clear();
    lows.clear();
    highs.clear();
  };
  for (size_t i = 0; i < s.x.size(); ++i) {
    const double ax = axis_x(s.x[i], log_x);
    if (!std::isfinite(ax) || !std::isfinite(s.low[i]) || !std::isfinite(s.high[i])) {
      flush();
      continue;
    }
    xs.push_back(ax);
    lows.push_back(s.low[i]);
    highs.push_back(s.high[i]);
  }
  flush();
}

void draw_series(plstream& pls, const PlotSeries& s, int index, bool log_x) {
  if (s.band && !s.low.empty()) draw_band(pls, s, index, log_x);
  pls.col0(kFirstSeries + index % kColours);
  std::vector<PLFLT> xs, ys, lows, highs;
  auto flush_line = [&] {
    if (!s.points && xs.size() > 1) pls.line(static_cast<PLINT>(xs.size()), xs.data(), ys.data());
    xs.clear();
    ys.clear();
  };
  std::vector<PLFLT> px, py;
  for (size_t i = 0; i < s.x.size(); ++i) {
    const double ax = axis_x(s.x[i], log_x);
    if (!std::isfinite(ax) || !std::isfinite(s.y[i])) {
      flush_line();
      continue;
    }
    xs.push_back(ax);
    ys.push_back(s.y[i]);
    px.push_back(ax);
    py.push_back(s.y[i]);
    if (!s.band && !s.low.empty() && std::isfinite(s.low[i]) && std::isfinite(s.high[i])) {
      PLFLT x1 = ax, lo = s.low[i], hi = s.high[i];
      pls.erry(1, &x1, &lo, &hi);
    }
  }
  flush_line();
  const bool markers = s.points || px.size() <= 40;
  if (markers && !px.empty()) {
    pls.string(static_cast<PLINT>(px.size()), px.data(), py.data(), kSymbols[index % kSymbolCount]);
  }
}

void draw_categories(plstream& pls, const std::vector<std::string>& categories) {
  pls.col0(kInk);
  for (size_t i = 0; i < categories.size(); ++i) {
    const double pos = (static_cast<double>(i) + 0.5) / static_cast<double>(categories.size());
    pls.mtex("b", 1.5, pos, 0.5, categories[i].c_str());
  }
}

/// The x values of a log-scaled plot when there are few (a sweep's fractions), else empty: PLplot
/// labels only powers of ten, so 0.2, 0.4, 1, 2 would show as one "10⁰".
std::vector<double> log_x_ticks(const PlotSpec& plot) {
  constexpr size_t kMostTicks = 12;
  std::vector<double> ticks;
  if (!plot.log_x) return ticks;
  for (const PlotSeries& s : plot.series) {
    for (double x : s.x) {
      if (x > 0 && std::isfinite(x)) ticks.push_back(x);
    }
  }
  std::sort(ticks.begin(), ticks.end());
  ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
  if (ticks.size() > kMostTicks) ticks.clear();
  return ticks;
}

/// Labels each of `ticks` below the x axis, at its place on the log scale [low, high].
void draw_log_ticks(plstream& pls, const std::vector<double>& ticks, double low, double high) {
  pls.col0(kInk);
  for (double x : ticks) {
    const double pos = (std::log10(x) - low) / (high - low);
    pls.mtex("b", 1.5, pos, 0.5, fmt::format("{:g}", x).c_str());
  }
}

void draw_legend(plstream& pls, const PlotSpec& plot) {
  const auto n = static_cast<PLINT>(plot.series.size());
  if (n == 0) return;
  std::vector<PLINT> options(plot.series.size()), colours(plot.series.size()),
      styles(plot.series.size(), 1), text_colours(plot.series.size(), kInk),
      symbol_numbers(plot.series.size(), 1);
  std::vector<PLFLT> widths(plot.series.size(), 1.0), scales(plot.series.size(), 1.0);
  std::vector<const char*> texts(plot.series.size()), symbol_texts(plot.series.size());
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const int index = static_cast<int>(i);
    options[i] = plot.series[i].points ? PL_LEGEND_SYMBOL : (PL_LEGEND_LINE | PL_LEGEND_SYMBOL);
    colours[i] = kFirstSeries + index % kColours;
    texts[i] = plot.series[i].label.c_str();
    symbol_texts[i] = kSymbols[index % kSymbolCount];
  }
  PLFLT legend_width = 0, legend_height = 0;
  pls.legend(&legend_width, &legend_height, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX,
             PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.02, 0.0, 0.1, kBackground, kInk, 1, 0, 0, n,
             options.data(), 1.0, 0.8, 1.8, 0.0, text_colours.data(), texts.data(), nullptr,
             nullptr, nullptr, nullptr, colours.data(), styles.data(), widths.data(),
             colours.data(), scales.data(), symbol_numbers.data(), symbol_texts.data());
}

/// The characters of UTF-8 `text` (its bytes that do not continue a character): what a label's
/// width on a plot goes by.
size_t characters(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char byte) {
    return (static_cast<unsigned char>(byte) & 0xC0) != 0x80;
  }));
}

/// Where the plot area begins, as a share of the width.
constexpr double kPlotLeftEdge = 0.09;

/// Where the plot area ends, as a share of the width: at 0.72, leaving the legend room for labels
/// of about 15 characters (text is sized by the page: a character takes about 1% of its width);
/// narrower for longer labels, so that the legend is not cut at the image's edge, down to 0.45.
double plot_right_edge(const PlotSpec& plot) {
  size_t longest = 0;
  for (const PlotSeries& s : plot.series) longest = std::max(longest, characters(s.label));
  return std::clamp(0.878 - 0.0105 * static_cast<double>(longest), 0.45, 0.72);
}

/// The title centred over the whole image, not the plot area (which narrows for a legend of long
/// labels), in the lines title_lines gives. Leaves the viewport at the whole width.
void draw_title(plstream& pls, const std::string& title) {
  pls.vpor(0.0, 1.0, 0.14, 0.9);
  pls.col0(kInk);
  const std::vector<std::string> lines = title_lines(title);
  for (size_t i = 0; i < lines.size(); ++i) {
    pls.mtex("t", 1.5 + 1.2 * static_cast<double>(lines.size() - 1 - i), 0.5, 0.5,
             lines[i].c_str());
  }
}

/// Draws `plot` on a stream write_png_with has set up.
void render(plstream& pls, const PlotSpec& plot) {
  const auto [x, y] = ranges(plot);
  pls.adv(0);
  pls.vpor(kPlotLeftEdge, plot_right_edge(plot), 0.14, 0.9);
  pls.wind(x.low, x.high, y.low, y.high);
  pls.col0(kInk);
  const bool categorical = !plot.x_categories.empty();
  const std::vector<double> ticks = log_x_ticks(plot);
  const char* x_box = categorical     ? "bc"
                      : !plot.log_x   ? "bcnst"
                      : ticks.empty() ? "bcnstl"
                                      : "bcstl";
  pls.box(x_box, 0.0, 0, "bcnstv", 0.0, 0);
  pls.lab(categorical ? "" : plot.x_label.c_str(), plot.y_label.c_str(), "");
  if (categorical) draw_categories(pls, plot.x_categories);
  draw_log_ticks(pls, ticks, x.low, x.high);
  for (size_t i = 0; i < plot.series.size(); ++i) {
    draw_series(pls, plot.series[i], static_cast<int>(i), plot.log_x);
  }
  draw_legend(pls, plot);
  draw_title(pls, plot.title);
}

/// Text as PLplot draws it literally: valid UTF-8 without control characters (PLplot aborts the
/// process on invalid UTF-8), and '#', PLplot's escape character, doubled.
std::string plot_text(const std::string& text) {
  std::string out;
  for (char c : printable_utf8(text)) {
    out += c;
    if (c == '#') out += '#';
  }
  return out;
}

/// `plot` with every text plot_text'ed: titles and labels come from folder and file names.
PlotSpec literal_texts(PlotSpec plot) {
  for (std::string* text : {&plot.title, &plot.x_label, &plot.y_label}) *text = plot_text(*text);
  for (PlotSeries& s : plot.series) s.label = plot_text(s.label);
  for (std::string& c : plot.x_categories) c = plot_text(c);
  return plot;
}

std::string read_bytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

}  // namespace

std::vector<std::string> title_lines(const std::string& title) {
  if (characters(title) <= kTitleCharacters) return {title};
  size_t split = std::string::npos, best = title.size();
  for (size_t i = 0; i < title.size(); ++i) {
    const size_t distance = i > title.size() / 2 ? i - title.size() / 2 : title.size() / 2 - i;
    if (title[i] == ' ' && distance < best) {
      split = i;
      best = distance;
    }
  }
  if (split == std::string::npos) return {title};
  return {title.substr(0, split), title.substr(split + 1)};
}

namespace {

/// The PNG that `draw` draws on a plstream set up for a pngcairo file of the given size; `path`
/// (the file it is for) names it in errors.
std::string draw_png(const std::string& path, int width, int height,
                     const std::function<void(plstream&)>& draw) {
  namespace fs = std::filesystem;
  const fs::path scratch =
      fs::temp_directory_path() /
      fmt::format("maskprior-plot-{}-{}.png", ::getpid(), std::hash<std::string>{}(path));
  {
    plstream pls;
    pls.sdev("pngcairo");
    pls.sfnam(scratch.c_str());
    pls.setopt("geometry", fmt::format("{}x{}", width, height).c_str());
    pls.scmap0n(kFirstSeries + 2 * kColours);  // the series' colours, then their bands'
    pls.scol0(kBackground, 255, 255, 255);
    pls.scol0(kInk, 0, 0, 0);
    for (int i = 0; i < kColours; ++i) {
      pls.scol0(kFirstSeries + i, kPalette[i][0], kPalette[i][1], kPalette[i][2]);
      pls.scol0a(kFirstSeries + kColours + i, kPalette[i][0], kPalette[i][1], kPalette[i][2], 0.2);
    }
    pls.init();
    draw(pls);
  }  // the stream ends: the file is complete
  std::string bytes = read_bytes(scratch.string());
  std::error_code ignored;
  fs::remove(scratch, ignored);
  if (bytes.size() < 8 || bytes.compare(1, 3, "PNG") != 0) {
    throw InputError(
        fmt::format("[plot] PLplot did not write a PNG for {} (is the cairo driver, Debian package "
                    "plplot-driver-cairo, installed?)",
                    path));
  }
  return bytes;
}

/// Draws with `draw` as draw_png does and writes the PNG to `path` atomically.
void write_png_with(const std::string& path, int width, int height,
                    const std::function<void(plstream&)>& draw) {
  write_file_atomic(path, draw_png(path, width, height, draw));
}

/// The mean of the non-hard cells of each block of `b` × `b` cells (NaN where all are hard), as
/// PLplot's image wants it: column (key block) first.
std::vector<std::vector<PLFLT>> block_means(const CompiledMask& mask, int64_t layer, int64_t head,
                                            int64_t b) {
  const int64_t side = (mask.n + b - 1) / b;
  std::vector<std::vector<PLFLT>> means(static_cast<size_t>(side),
                                        std::vector<PLFLT>(static_cast<size_t>(side), NAN));
  for (int64_t bk = 0; bk < side; ++bk) {
    for (int64_t bq = 0; bq < side; ++bq) means[bk][bq] = block_mean(mask, layer, head, bq, bk, b);
  }
  return means;
}

/// Token labels along one axis of the mask figure: every token's when there are few, else each
/// span's name at its middle, with a line at each span boundary.
void draw_token_axis(plstream& pls, const CompiledMask& mask, const char* side, double n) {
  constexpr int64_t kMostTokenLabels = 40;
  const bool x = side[0] == 'b';
  auto position = [&](double t) { return x ? t / n : 1.0 - t / n; };
  if (mask.n <= kMostTokenLabels) {
    for (int64_t t = 0; t < mask.n; ++t) {
      const std::string text = plot_text(mask.layout.token_label(t));
      if (x) {
        pls.mtex("bv", 0.5, position(static_cast<double>(t) + 0.5), 1.0, text.c_str());
      } else {
        pls.mtex("lv", 0.5, position(static_cast<double>(t) + 0.5), 1.0, text.c_str());
      }
    }
    return;
  }
  for (const Span& span : mask.layout.spans) {
    const std::string text = plot_text(span.name);
    const double middle = static_cast<double>(span.offset) + 0.5 * static_cast<double>(span.length);
    pls.mtex(x ? "b" : "lv", x ? 1.0 : 0.5, position(middle), x ? 0.5 : 1.0, text.c_str());
    if (span.offset > 0) {
      const PLFLT at = static_cast<PLFLT>(span.offset);
      PLFLT xs[2], ys[2];
      if (x) {
        xs[0] = xs[1] = at;
        ys[0] = 0;
        ys[1] = n;
      } else {
        ys[0] = ys[1] = at;
        xs[0] = 0;
        xs[1] = n;
      }
      pls.col0(kInk);
      pls.line(2, xs, ys);
    }
  }
}

}  // namespace

bool categories_fit(const PlotSpec& plot) {
  if (plot.x_categories.empty()) return true;
  size_t longest = 0;
  for (const std::string& c : plot.x_categories) longest = std::max(longest, characters(c));
  // A category's room in pixels against its name at about 8 pixels a character, and a gap.
  const double room = (plot_right_edge(plot) - kPlotLeftEdge) * plot.width /
                      static_cast<double>(plot.x_categories.size());
  return 8.0 * static_cast<double>(longest) + 8.0 <= room;
}

void write_plot_png(const std::string& path, const PlotSpec& plot) {
  write_plots_png(path, {plot}, /*columns=*/1);
}

void write_plots_png(const std::string& path, const std::vector<PlotSpec>& panels, int columns) {
  if (panels.empty()) throw InputError(fmt::format("[plot] no panel to draw into {}", path));
  if (columns < 1) {
    throw InputError(fmt::format("[plot] {} columns of panels for {}: at least 1", columns, path));
  }
  int width = 0, height = 0;
  std::vector<PlotSpec> literal;
  for (const PlotSpec& plot : panels) {
    check_series(plot);
    ranges(plot);  // throws before anything is drawn
    width = std::max(width, plot.width);
    height = std::max(height, plot.height);
    literal.push_back(literal_texts(plot));
  }
  const int64_t count = static_cast<int64_t>(panels.size());
  const int64_t across = std::min<int64_t>(columns, count), down = (count + across - 1) / across;
  if (across * width > kMostPlotPixels || down * height > kMostPlotPixels) {
    throw InputError(fmt::format(
        "[plot] {} panels of {}x{} pixels in {} columns would make {} a {}x{} pixel image, more "
        "than {} a side: draw fewer panels per file",
        count, width, height, across, path, across * width, down * height, kMostPlotPixels));
  }
  if (count == 1) {
    write_png_with(path, width, height, [&](plstream& pls) { render(pls, literal.front()); });
    return;
  }
  // Each panel is drawn as a page of its own and copied into its place: on PLplot's subpages text
  // is sized by the whole page, and a long legend runs into the next panel.
  RgbImage page;
  page.width = across * width;
  page.height = down * height;
  const auto bytes = static_cast<uint64_t>(page.width * page.height * 3);
  allocate_or_throw(bytes, "a figure of plots", [&] { page.rgb.assign(bytes, 255); });
  for (int64_t i = 0; i < count; ++i) {
    const PlotSpec& plot = literal[static_cast<size_t>(i)];
    const RgbImage panel = decode_png(
        draw_png(path, plot.width, plot.height, [&](plstream& pls) { render(pls, plot); }), path);
    internal_check(panel.width <= width && panel.height <= height, "a panel larger than asked");
    const int64_t left = i % across * width, top = i / across * height;
    for (int64_t y = 0; y < panel.height; ++y) {
      std::memcpy(&page.rgb[static_cast<size_t>(((top + y) * page.width + left) * 3)],
                  &panel.rgb[static_cast<size_t>(y * panel.width * 3)],
                  static_cast<size_t>(panel.width * 3));
    }
  }
  write_file_atomic(path, encode_png(page, path));
}

namespace {

/// The colour bar right of a mask figure: M from −scale (blue) to +scale (red), labelled
/// `value_label`; black = hard.
void draw_colour_bar(plstream& pls, const std::string& value_label, double scale) {
  PLFLT width = 0, height = 0;
  PLINT label_opts[] = {PL_COLORBAR_LABEL_TOP};
  const std::string bar_label = plot_text(value_label);
  const char* labels[] = {bar_label.c_str()};
  const char* axis_opts[] = {"bcvtm"};
  PLFLT ticks[] = {0};
  PLINT sub_ticks[] = {0}, n_values[] = {2};
  const PLFLT range[] = {-scale, scale};
  const PLFLT* values[] = {range};
  pls.colorbar(&width, &height, PL_COLORBAR_IMAGE, PL_POSITION_RIGHT | PL_POSITION_OUTSIDE, 0.04, 0,
               0.04, 0.8, kBackground, kInk, 1, 0, 0, 0, 0, 1, label_opts, labels, 1, axis_opts,
               ticks, sub_ticks, n_values, values);
}

/// A legend of coloured boxes right of a mask figure: each category's colour as the heatmap draws
/// its value at `scale`, and black for hard cells.
void draw_category_legend(plstream& pls, const std::vector<MaskCategory>& categories,
                          double scale) {
  const auto rows = static_cast<double>(categories.size() + 1);
  pls.vpor(0.85, 0.99, 0.5 - 0.04 * rows, 0.5 + 0.04 * rows);
  pls.wind(0, 1, rows, 0);
  pls.schr(0, 0.8);
  for (size_t i = 0; i <= categories.size(); ++i) {
    const double top = static_cast<double>(i) + 0.2, bottom = static_cast<double>(i) + 0.8;
    const PLFLT xs[] = {0, 0.18, 0.18, 0}, ys[] = {top, top, bottom, bottom};
    if (i < categories.size()) {
      pls.col1(0.5 + 0.5 * std::clamp(categories[i].value / scale, -1.0, 1.0));
    } else {
      pls.col0(kInk);
    }
    pls.fill(4, xs, ys);
    pls.col0(kInk);
    const PLFLT outline_x[] = {0, 0.18, 0.18, 0, 0}, outline_y[] = {top, top, bottom, bottom, top};
    pls.line(5, outline_x, outline_y);
    const std::string label = plot_text(i < categories.size() ? categories[i].label : "hard");
    pls.ptex(0.26, static_cast<double>(i) + 0.5, 1, 0, 0, label.c_str());
  }
  pls.schr(0, 1.0);
}

}  // namespace

MaskFigure write_mask_figure(const CompiledMask& mask, int64_t layer, int64_t head,
                             const std::string& path, const std::string& title,
                             const std::string& value_label,
                             const std::vector<MaskCategory>& categories) {
  check_layer_head(mask, layer, head);
  if (mask.n == 0) throw InputError(fmt::format("cannot draw '{}': the mask has no tokens", path));
  MaskFigure figure;
  figure.cells_per_block = (mask.n + MaskFigure::kMostBlocks - 1) / MaskFigure::kMostBlocks;
  const auto means = block_means(mask, layer, head, figure.cells_per_block);
  for (const auto& column : means) {
    for (double v : column) {
      if (std::isfinite(v)) figure.scale = std::max(figure.scale, std::abs(v));
    }
  }
  if (figure.scale == 0) figure.scale = 1;
  const double n = static_cast<double>(mask.n);
  write_png_with(path, 900, 820, [&](plstream& pls) {
    // cmap1: blue (closed) – white (0) – red (open); hard cells black.
    const PLFLT where[] = {0, 0.5, 1}, red[] = {0, 1, 1}, green[] = {0, 1, 0}, blue[] = {1, 1, 0};
    pls.scmap1l(true, 3, where, red, green, blue, nullptr);
    pls.adv(0);
    pls.vpas(0.14, 0.82, 0.12, 0.9, 1.0);
    pls.wind(0, n, n, 0);  // query 0 at the top, as in the text grid
    // One rectangle per run of equal blocks along a row (structured masks have few).
    const double b = static_cast<double>(figure.cells_per_block);
    for (size_t q = 0; q < means.size(); ++q) {
      for (size_t k = 0; k < means.size();) {
        const double v = means[k][q];
        size_t end = k + 1;
        while (end < means.size() &&
               (means[end][q] == v || (std::isnan(v) && std::isnan(means[end][q]))))
          ++end;
        const PLFLT x0 = static_cast<double>(k) * b, x1 = std::min(n, static_cast<double>(end) * b);
        const PLFLT y0 = static_cast<double>(q) * b,
                    y1 = std::min(n, static_cast<double>(q + 1) * b);
        const PLFLT xs[] = {x0, x1, x1, x0}, ys[] = {y0, y0, y1, y1};
        if (std::isnan(v)) {
          pls.col0(kInk);
        } else {
          pls.col1(0.5 + 0.5 * std::clamp(v / figure.scale, -1.0, 1.0));
        }
        pls.fill(4, xs, ys);
        k = end;
      }
    }
    pls.col0(kInk);
    pls.box("bc", 0, 0, "bc", 0, 0);
    draw_token_axis(pls, mask, "b", n);
    draw_token_axis(pls, mask, "l", n);
    // Clear of the token labels (about 0.6 character heights per character of the longest).
    size_t longest = 0;
    if (mask.n <= 40) {
      for (int64_t t = 0; t < mask.n; ++t) {
        longest = std::max(longest, mask.layout.token_label(t).size());
      }
    } else {
      for (const Span& span : mask.layout.spans) longest = std::max(longest, span.name.size());
    }
    const double clear = 1.5 + 0.6 * static_cast<double>(std::min<size_t>(longest, 20));
    pls.mtex("b", mask.n <= 40 ? clear + 0.5 : 2.5, 0.5, 0.5, "key");
    pls.mtex("l", clear + 0.5, 0.5, 0.5, "query");
    if (categories.empty()) {
      draw_colour_bar(pls, value_label, figure.scale);
    } else {
      draw_category_legend(pls, categories, figure.scale);
    }
    draw_title(pls, plot_text(title));
  });
  return figure;
}

}  // namespace maskprior
