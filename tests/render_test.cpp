// Rendering: the text grid and summary, the PNG heatmap, and plot panels, on a hand-built
// CompiledMask.
#include <gtest/gtest.h>
#include <png.h>

#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "render/grid.h"
#include "render/plot.h"
#include "render/png.h"
#include "tests/mask_fixture.h"

namespace maskprior {
namespace {

using testing::example_mask;
using testing::expect_input_error;
using testing::TempDir;

TEST(Render, GridOfSmallMask) {
  const CompiledMask m = example_mask(/*with_hard=*/true);
  const std::string expected =
      "mask parity2: 2 layers, 2 heads, N = 4; layer 1, head 1 (rows = query, columns = key)\n"
      "layout: cls @0, x[3] @1..3 msb_first\n"
      "cells: 8 open, 6 closed, 1 other, 1 hard-excluded; values -10 to 10\n"
      "legend: # open (10)  . closed (-10)  other values = 0.5 (+ > 0)  x hard-excluded\n"
      "\n"
      "      c x x x\n"
      "      l [ [ [\n"
      "      s 0 1 2\n"
      "        ] ] ]\n"
      " cls  # # # .\n"
      "x[0]  . # # x\n"
      "x[1]  . # # .\n"
      "x[2]  + . . #\n";
  EXPECT_EQ(render_grid(m, /*layer=*/1, /*head=*/1), expected);
  // Layer 0, head 0 has no 0.5 cell.
  EXPECT_NE(render_grid(m, 0, 0).find("x[2]  . . . #\n"), std::string::npos);
}

TEST(Render, LargeMaskGetsASummaryAndOutOfRangeHeadsAreErrors) {
  const CompiledMask m = example_mask(/*with_hard=*/false);
  const std::string text = render_grid(m, 0, 0, /*max_tokens=*/3);
  EXPECT_NE(text.find("N = 4 is too large to draw as text"), std::string::npos) << text;
  EXPECT_NE(text.find("--png"), std::string::npos);
  EXPECT_EQ(text.find("legend"), std::string::npos);
  expect_input_error([&] { render_grid(m, 2, 0); }, {"layer 2 is out of range", "2 layers (0..1)"});
  expect_input_error([&] { render_grid(m, 0, -1); }, {"head -1 is out of range", "2 heads"});
}

// Names come from tensor files too: their control characters are escaped, never echoed raw.
TEST(Render, ControlCharactersInNamesAreEscaped) {
  CompiledMask m = example_mask(/*with_hard=*/false);
  m.name = "evil\x1b[2J";
  m.layout.spans[0].name = "c\x07";
  const std::string text = render_grid(m, 0, 0);
  for (char c : text) {
    EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20) << static_cast<int>(c);
  }
  EXPECT_NE(text.find("mask evil\\x1b[2J: 2 layers"), std::string::npos) << text;
  EXPECT_NE(text.find("layout: c\\x07 @0"), std::string::npos) << text;
  EXPECT_NE(text.find("c\\x07  # # # ."), std::string::npos) << text;
  expect_input_error([&] { render_grid(m, 5, 0); }, {"mask 'evil\\x1b[2J'"});
}

/// Width, height and the RGB of pixel (x, y) of an 8-bit RGB PNG, decoded with libpng.
struct Decoded {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
  std::array<int, 3> at(uint32_t x, uint32_t y) const {
    const size_t i = (static_cast<size_t>(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Decoded decode_png(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  Decoded out;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << "cannot decode " << path << ": " << image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  out.width = image.width;
  out.height = image.height;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) {
    ADD_FAILURE() << "cannot decode " << path << ": " << image.message;
  }
  return out;
}

TEST(Render, PngHeatmap) {
  TempDir dir;
  const CompiledMask m = example_mask(/*with_hard=*/true);
  const PngReport report = write_png_heatmap(m, 1, 1, dir.file("h.png"));
  EXPECT_EQ(report.cells_per_pixel, 1);
  EXPECT_EQ(report.pixels_per_cell, 64);  // 256 / 4
  EXPECT_EQ(report.side, 256);
  EXPECT_EQ(report.scale, 10.0);
  const Decoded png = decode_png(dir.file("h.png"));
  ASSERT_EQ(png.width, 256u);
  ASSERT_EQ(png.height, 256u);
  const auto cell = [&](int q, int k) { return png.at(k * 64 + 10, q * 64 + 10); };
  EXPECT_EQ(cell(0, 0), (std::array<int, 3>{255, 0, 0}));      // open: full red
  EXPECT_EQ(cell(0, 3), (std::array<int, 3>{0, 0, 255}));      // closed: full blue
  EXPECT_EQ(cell(1, 3), (std::array<int, 3>{0, 0, 0}));        // hard: black
  EXPECT_EQ(cell(3, 0), (std::array<int, 3>{255, 242, 242}));  // 0.5 of 10: faint red

  // Capping the side averages blocks: 2x2 blocks of the 4x4 head.
  const PngReport small =
      write_png_heatmap(m, 1, 1, dir.file("s.png"), {.max_side = 2, .min_side = 1});
  EXPECT_EQ(small.cells_per_pixel, 2);
  EXPECT_EQ(small.side, 2);
  const Decoded s = decode_png(dir.file("s.png"));
  // Top-left block: 10, 10, -10, 10 -> mean 5 -> half red.
  EXPECT_EQ(s.at(0, 0), (std::array<int, 3>{255, 128, 128}));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"h.png", "s.png"}));
}

// One query's row on the image grid: the keys of a `grid` span drawn as their H × W picture, the
// query itself as @; a label that names no token is an error listing the layout.
TEST(Render, QueryRowOnTheGrid) {
  CompiledMask m;
  m.name = "local";
  m.n = 10;
  m.layout.spans = {testing::make_span("cls", 0, 1), testing::make_span("p", 1, 9)};
  m.layout.spans[1].grid = std::pair<int64_t, int64_t>{3, 3};
  m.mask.assign(100, -10.0f);
  const int64_t q = 1 + 4;  // p[4], the middle of the 3 × 3 grid
  for (int64_t k : {0, 2, 4, 5, 6, 8}) m.mask[static_cast<size_t>(q * 10 + k)] = 10.0f;
  const std::string text = render_query_row(m, 0, 0, "p[4]");
  EXPECT_NE(text.find("query p[4] (token 5)"), std::string::npos) << text;
  EXPECT_NE(text.find("cls: #\np (3 x 3 grid):\n  . # .\n  # @ #\n  . # .\n"), std::string::npos)
      << text;
  expect_input_error([&] { render_query_row(m, 0, 0, "q[1]"); }, {"'q[1]'", "p[9] @1..9"});
}

// What training changed: LEARNED − INIT per cell, a one-layer, one-head INIT repeated over the
// learned mask's layers and heads, hard where either is; as text, + rose, - fell, . within the
// tolerance. Masks of other layouts are refused, naming both.
TEST(Render, DifferenceOfTwoMasks) {
  CompiledMask init = example_mask(/*with_hard=*/true);
  init.layers = init.heads = 1;
  init.mask.resize(16);
  CompiledMask learned = example_mask(/*with_hard=*/false);
  learned.mask[learned.index(1, 0, 0, 0)] += 0.5f;   // rose
  learned.mask[learned.index(1, 0, 2, 1)] -= 0.25f;  // fell
  learned.mask[learned.index(1, 0, 3, 3)] += 1e-5f;  // within the tolerance
  const CompiledMask d = mask_difference(init, learned);
  EXPECT_EQ(d.layers, 2);
  EXPECT_EQ(d.heads, 2);
  EXPECT_FLOAT_EQ(d.at(1, 0, 0, 0), 0.5f);
  EXPECT_FLOAT_EQ(d.at(1, 0, 2, 1), -0.25f);
  EXPECT_FLOAT_EQ(d.at(1, 1, 3, 0), 10.5f);  // the learned head's 0.5 against the spec's -10
  EXPECT_FLOAT_EQ(d.at(0, 0, 0, 0), 0.0f);
  EXPECT_TRUE(d.is_hard(1, 3));  // the init's hard cell
  const std::string text = render_difference(d, 1, 0, 1e-3);
  EXPECT_NE(text.find("cells: 1 rose, 1 fell, 13 within ±0.001; largest |Δ| 0.5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n cls  + . . .\n"), std::string::npos) << text;
  EXPECT_NE(text.find("x[0]  . . . x"), std::string::npos) << text;
  EXPECT_NE(text.find("x[1]  . - . ."), std::string::npos) << text;
  CompiledMask other = learned;
  other.layout.spans[1].name = "y";
  EXPECT_THROW(mask_difference(init, other), InputError);
  CompiledMask three = learned;
  three.heads = 3;
  EXPECT_THROW(mask_difference(learned, three), InputError);
}

// `maskc diff` counts what a prior decides: a causal decoder's last row predicts no token, so
// cells it alone opens count nowhere; the same change on an earlier row counts.
TEST(Render, PatternDiffLeavesOutACausalDecodersLastRow) {
  CompiledMask a = example_mask(/*with_hard=*/false);
  a.hard = std::vector<uint8_t>(16, 0);
  for (int64_t q = 0; q < 4; ++q) {
    for (int64_t k = q + 1; k < 4; ++k) (*a.hard)[static_cast<size_t>(q * 4 + k)] = 1;
  }
  CompiledMask b = a;
  for (int64_t l = 0; l < 2; ++l) {
    for (int64_t h = 0; h < 2; ++h) b.mask[b.index(l, h, 3, 0)] = 10.0f;  // last row: open
  }
  const PatternDiff last = compare_patterns(a, b);
  EXPECT_EQ(last.counted_rows, 3);
  for (const PatternDiff::Plane& plane : last.planes) {
    EXPECT_EQ(plane.only_a + plane.only_b, 0) << plane.layer << "," << plane.head;
  }
  EXPECT_NE(render_pattern_diff(last, "a", "b").find("the causal decoder's last row"),
            std::string::npos);
  b.mask[b.index(0, 0, 2, 0)] = 10.0f;  // a row that predicts a token
  EXPECT_EQ(compare_patterns(a, b).planes[0].only_b, 1);
  a.hard.reset();  // an encoder: every row counts
  b.hard.reset();
  const PatternDiff encoder = compare_patterns(a, b);
  EXPECT_EQ(encoder.counted_rows, 4);
  EXPECT_EQ(encoder.planes[1].only_b, 1);  // layer 0, head 1: the last row's cell
}

// The labelled figure: a 900x820 picture whose heatmap has the map's colours (full red open, full
// blue closed) and black hard cells; drawn for a large N by span (no per-token labels), and
// refused for a layer the mask lacks, writing nothing.
TEST(Render, MaskFigureHasTheMapsColours) {
  TempDir dir;
  auto count = [](const Decoded& png, std::array<int, 3> colour) {
    int64_t n = 0;
    for (uint32_t y = 0; y < png.height; ++y) {
      for (uint32_t x = 0; x < png.width; ++x) n += png.at(x, y) == colour;
    }
    return n;
  };
  ::testing::internal::CaptureStderr();
  const MaskFigure figure =
      write_mask_figure(example_mask(/*with_hard=*/true), 1, 1, dir.file("hard.png"), "t");
  write_mask_figure(example_mask(/*with_hard=*/false), 1, 1, dir.file("soft.png"), "t");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");  // PLplot had nothing to complain of
  EXPECT_EQ(figure.scale, 10.0);
  EXPECT_EQ(figure.cells_per_block, 1);
  const Decoded hard = decode_png(dir.file("hard.png")), soft = decode_png(dir.file("soft.png"));
  ASSERT_EQ(hard.width, 900u);
  ASSERT_EQ(hard.height, 820u);
  EXPECT_GT(count(hard, {255, 0, 0}), 1000);  // open cells
  EXPECT_GT(count(hard, {0, 0, 255}), 1000);  // closed cells
  // The hard cell (1, 3), one of 16, is black: a sixteenth of the heatmap more than without it.
  EXPECT_GT(count(hard, {0, 0, 0}) - count(soft, {0, 0, 0}), 5000);
  EXPECT_THROW(write_mask_figure(example_mask(true), 7, 0, dir.file("none.png"), "t"), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.png")));
}

// A panel of write_plots_png is write_plot_png's picture of its plot alone, pixel for pixel, and
// stays in its place: a legend taller than the plot (30 series) is cut at the panel's edge, as at
// the edge of the plot alone, and runs into no other panel.
// A legend of long labels (a sweep over two settings) is not cut at the image's right edge: the
// plot area narrows to leave it room, so the last columns of the image hold no ink. With the
// plot area at its usual width the same labels ran past the edge.
TEST(Render, LongLegendLabelsStayInsideTheImage) {
  TempDir dir;
  PlotSpec plot;
  plot.title = "accuracy against step";
  for (const char* label : {"init=vanilla,norm=post,lr=0.001", "init=mask,norm=post,lr=0.001"}) {
    plot.series.push_back({label, {0, 100, 200}, {0.1, 0.5, 0.7}, {}, {}});
  }
  write_plot_png(dir.file("long.png"), plot);
  const Decoded png = decode_png(dir.file("long.png"));
  ASSERT_EQ(png.width, 900u);
  int ink = 0;
  for (uint32_t y = 0; y < png.height; ++y) {
    for (uint32_t x = png.width - 12; x < png.width; ++x) {
      const auto [r, g, b] = png.at(x, y);
      ink += r + g + b < 3 * 128 ? 1 : 0;
    }
  }
  EXPECT_EQ(ink, 0);
}

TEST(Render, APanelIsItsPlotAlone) {
  TempDir dir;
  PlotSpec plot;
  plot.title = "accuracy against step";
  plot.x_label = "step";
  plot.y_label = "accuracy";
  for (int s = 0; s < 30; ++s) {
    plot.series.push_back({"series " + std::to_string(s),
                           {0, 100, 200, 300},
                           {0.01 * s, 0.2 + 0.01 * s, 0.5 + 0.01 * s, 0.6 + 0.01 * s},
                           {},
                           {}});
  }
  write_plot_png(dir.file("alone.png"), plot);
  write_plots_png(dir.file("grid.png"), std::vector<PlotSpec>(5, plot));
  const Decoded alone = decode_png(dir.file("alone.png")), grid = decode_png(dir.file("grid.png"));
  ASSERT_EQ(alone.width, 900u);
  ASSERT_EQ(alone.height, 560u);
  ASSERT_EQ(grid.width, 1800u);
  ASSERT_EQ(grid.height, 1680u);
  auto same = [&](uint32_t left, uint32_t top) {
    for (uint32_t y = 0; y < alone.height; ++y) {
      for (uint32_t x = 0; x < alone.width; ++x) {
        if (alone.at(x, y) != grid.at(left + x, top + y)) return false;
      }
    }
    return true;
  };
  for (uint32_t i = 0; i < 5; ++i) EXPECT_TRUE(same(i % 2 * 900, i / 2 * 560)) << "panel " << i;
  // The sixth place is empty.
  for (uint32_t y = 1120; y < 1680; ++y) {
    for (uint32_t x = 900; x < 1800; ++x) {
      ASSERT_EQ(grid.at(x, y), (std::array<int, 3>{255, 255, 255})) << x << ", " << y;
    }
  }
}

}  // namespace
}  // namespace maskprior

// A long title (a data file, a spec, a metric, what the band shows) takes two lines split at a
// space near its middle, none longer than the image holds; a short one stays one line.
TEST(Render, LongTitlesTakeTwoLines) {
  const std::string title =
      "train.txt with reverse.mask: sequence_accuracy (test) against step (seeds: mean, band ± "
      "std)";
  const std::vector<std::string> lines = maskprior::title_lines(title);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0] + " " + lines[1], title);
  for (const std::string& line : lines) EXPECT_LE(line.size(), maskprior::kTitleCharacters) << line;
  EXPECT_EQ(maskprior::title_lines("addition: sequence_accuracy per run"),
            std::vector<std::string>{"addition: sequence_accuracy per run"});
}
