#include "render/png.h"

#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "render/grid.h"

namespace maskprior {
namespace {

/// RGB of one value on the diverging map: -scale blue, 0 white, +scale red.
void colour(double value, double scale, uint8_t* rgb) {
  const double t = std::clamp(value / scale, -1.0, 1.0);
  const auto fade = static_cast<uint8_t>(std::lround(255.0 * (1.0 - std::abs(t))));
  rgb[0] = t >= 0 ? 255 : fade;
  rgb[1] = fade;
  rgb[2] = t <= 0 ? 255 : fade;
}

/// Blocks of cells_per_pixel x cells_per_pixel cells along each side of the image.
int64_t blocks_per_side(int64_t n, int64_t cells_per_pixel) {
  return (n + cells_per_pixel - 1) / cells_per_pixel;
}

/// The image geometry and colour scale of one (layer, head) under `options`.
PngReport plan(const CompiledMask& mask, int64_t layer, int64_t head, const PngOptions& options) {
  PngReport report;
  // A block of b x b cells per pixel keeps the side at most max_side; small N is enlarged.
  report.cells_per_pixel = (mask.n + options.max_side - 1) / options.max_side;
  if (report.cells_per_pixel == 1)
    report.pixels_per_cell = std::max<int64_t>(1, options.min_side / mask.n);
  report.side = blocks_per_side(mask.n, report.cells_per_pixel) * report.pixels_per_cell;

  double largest = 0;
  for (int64_t q = 0; q < mask.n; ++q) {
    for (int64_t k = 0; k < mask.n; ++k) {
      if (!mask.is_hard(q, k))
        largest = std::max(largest, std::abs(double{mask.at(layer, head, q, k)}));
    }
  }
  report.scale = largest > 0 ? largest : 1.0;
  return report;
}

/// One RGB value per block of cells: the mean of its non-hard cells, black if all are hard.
std::vector<uint8_t> block_colours(const CompiledMask& mask, int64_t layer, int64_t head,
                                   const PngReport& report, int64_t cells_side) {
  const int64_t b = report.cells_per_pixel;
  std::vector<uint8_t> blocks(static_cast<size_t>(cells_side * cells_side * 3));
  for (int64_t bq = 0; bq < cells_side; ++bq) {
    for (int64_t bk = 0; bk < cells_side; ++bk) {
      const double mean = block_mean(mask, layer, head, bq, bk, b);
      uint8_t* rgb = &blocks[static_cast<size_t>((bq * cells_side + bk) * 3)];
      if (std::isnan(mean)) {
        rgb[0] = rgb[1] = rgb[2] = 0;
      } else {
        colour(mean, report.scale, rgb);
      }
    }
  }
  return blocks;
}

/// The image: each block drawn as a square of pixels_per_cell pixels a side.
RgbImage enlarge(const std::vector<uint8_t>& blocks, const PngReport& report, int64_t cells_side) {
  const int64_t p = report.pixels_per_cell;
  RgbImage image{report.side, report.side,
                 std::vector<uint8_t>(static_cast<size_t>(report.side * report.side * 3))};
  for (int64_t y = 0; y < report.side; ++y) {
    for (int64_t x = 0; x < report.side; ++x) {
      std::memcpy(&image.rgb[static_cast<size_t>((y * report.side + x) * 3)],
                  &blocks[static_cast<size_t>(((y / p) * cells_side + x / p) * 3)], 3);
    }
  }
  return image;
}

}  // namespace

std::string encode_png(const RgbImage& rgb, const std::string& path) {
  internal_check(rgb.rgb.size() == static_cast<size_t>(rgb.width * rgb.height * 3),
                 "RGB image of the wrong size");
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(rgb.width);
  image.height = static_cast<png_uint_32>(rgb.height);
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  const auto stride = static_cast<png_int_32>(rgb.width * 3);
  if (!png_image_write_to_memory(&image, nullptr, &size, /*convert_to_8_bit=*/0, rgb.rgb.data(),
                                 stride, /*colormap=*/nullptr)) {
    throw InputError(fmt::format("cannot draw '{}': {}", path, image.message));
  }
  std::string encoded(size, '\0');
  if (!png_image_write_to_memory(&image, encoded.data(), &size, /*convert_to_8_bit=*/0,
                                 rgb.rgb.data(), stride, /*colormap=*/nullptr)) {
    throw InputError(fmt::format("cannot draw '{}': {}", path, image.message));
  }
  encoded.resize(size);
  return encoded;
}

RgbImage decode_png(const std::string& bytes, const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&image, bytes.data(), bytes.size())) {
    throw InputError(fmt::format("cannot draw '{}': {}", path, image.message));
  }
  image.format = PNG_FORMAT_RGB;
  RgbImage rgb{image.width, image.height, std::vector<uint8_t>(PNG_IMAGE_SIZE(image))};
  if (!png_image_finish_read(&image, /*background=*/nullptr, rgb.rgb.data(), /*row_stride=*/0,
                             /*colormap=*/nullptr)) {
    throw InputError(fmt::format("cannot draw '{}': {}", path, image.message));
  }
  return rgb;
}

double block_mean(const CompiledMask& mask, int64_t layer, int64_t head, int64_t block_q,
                  int64_t block_k, int64_t b) {
  double sum = 0;
  int64_t count = 0;
  for (int64_t q = block_q * b; q < std::min(mask.n, (block_q + 1) * b); ++q) {
    for (int64_t k = block_k * b; k < std::min(mask.n, (block_k + 1) * b); ++k) {
      if (mask.is_hard(q, k)) continue;
      sum += mask.at(layer, head, q, k);
      ++count;
    }
  }
  return count > 0 ? sum / static_cast<double>(count) : NAN;
}

PngReport write_png_heatmap(const CompiledMask& mask, int64_t layer, int64_t head,
                            const std::string& path, const PngOptions& options) {
  check_layer_head(mask, layer, head);
  internal_check(options.max_side >= 1 && options.min_side >= 1, "PNG sides must be positive");
  if (mask.n == 0) throw InputError(fmt::format("cannot draw '{}': the mask has no tokens", path));
  const PngReport report = plan(mask, layer, head, options);
  const int64_t cells_side = blocks_per_side(mask.n, report.cells_per_pixel);
  const std::vector<uint8_t> blocks = block_colours(mask, layer, head, report, cells_side);
  write_file_atomic(path, encode_png(enlarge(blocks, report, cells_side), path));
  return report;
}

}  // namespace maskprior
