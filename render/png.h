// A PNG heatmap of one (layer, head) of a compiled mask, and RGB images to and from PNG.
// Rows are queries, columns are keys, as everywhere in maskprior.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/compiled_mask.h"

namespace maskprior {

/// Size limits of a PNG heatmap.
struct PngOptions {
  int64_t max_side = 2048;  // larger N is averaged over blocks of cells
  int64_t min_side = 256;   // smaller N draws each cell as a square of pixels
};

/// What `write_png_heatmap` drew, for the caller to report.
struct PngReport {
  int64_t side = 0;             // image width = height, in pixels
  int64_t cells_per_pixel = 1;  // > 1: each pixel is the mean of a block of this many cells a side
  int64_t pixels_per_cell = 1;  // > 1: each cell is a square of this many pixels a side
  double scale = 1.0;           // |M| that maps to full red (positive) or full blue (negative)
};

/// The mean of the non-hard cells of the block of `b` × `b` cells whose first query is
/// block_q · b and first key block_k · b (cut at N); NaN when all of them are hard.
double block_mean(const CompiledMask& mask, int64_t layer, int64_t head, int64_t block_q,
                  int64_t block_k, int64_t b);

/// Writes a heatmap of one (layer, head) as a PNG, atomically: a diverging blue-white-red map
/// centred at 0 (white), scaled by the largest |M|, hard-excluded cells black.
PngReport write_png_heatmap(const CompiledMask& mask, int64_t layer, int64_t head,
                            const std::string& path, const PngOptions& options = {});

/// An RGB image: 3 bytes a pixel, rows top to bottom.
struct RgbImage {
  int64_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

/// The PNG encoding of `image`; InputError naming `path` (the file it is for) when libpng fails.
std::string encode_png(const RgbImage& image, const std::string& path);

/// The pixels of the PNG `bytes` (any colour type, as RGB); InputError naming `path` when they
/// are not a PNG.
RgbImage decode_png(const std::string& bytes, const std::string& path);

}  // namespace maskprior
