#include "render/render.h"

#include <fmt/format.h>
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "io/tensor_file.h"

namespace maskprior {
namespace {

constexpr size_t kMaxListedValues = 4;  // "other" values listed one by one in the legend

enum class CellKind { kOpen, kClosed, kPositive, kNegative, kZero, kHard };

CellKind classify(const CompiledMask& m, int64_t layer, int64_t head, int64_t q, int64_t k) {
  if (m.is_hard(q, k)) return CellKind::kHard;
  const float v = m.at(layer, head, q, k);
  if (v == static_cast<float>(m.open_value)) return CellKind::kOpen;
  if (v == static_cast<float>(m.close_value)) return CellKind::kClosed;
  if (v > 0) return CellKind::kPositive;
  if (v < 0) return CellKind::kNegative;
  return CellKind::kZero;
}

char symbol(CellKind kind) {
  switch (kind) {
    case CellKind::kOpen:
      return '#';
    case CellKind::kClosed:
      return '.';
    case CellKind::kPositive:
      return '+';
    case CellKind::kNegative:
      return '-';
    case CellKind::kZero:
      return '0';
    case CellKind::kHard:
      return 'x';
  }
  return '?';
}

/// Cell counts of one (layer, head) and the range of its non-hard values.
struct HeadStats {
  int64_t open = 0, closed = 0, other = 0, hard = 0;
  bool has_positive = false, has_negative = false, has_zero = false;
  float min = 0, max = 0;
  std::set<float> other_values;  // at most kMaxListedValues + 1 kept
};

HeadStats head_stats(const CompiledMask& m, int64_t layer, int64_t head) {
  HeadStats s;
  bool any = false;
  for (int64_t q = 0; q < m.n; ++q) {
    for (int64_t k = 0; k < m.n; ++k) {
      const CellKind kind = classify(m, layer, head, q, k);
      if (kind == CellKind::kHard) {
        ++s.hard;
        continue;
      }
      const float v = m.at(layer, head, q, k);
      s.min = any ? std::min(s.min, v) : v;
      s.max = any ? std::max(s.max, v) : v;
      any = true;
      if (kind == CellKind::kOpen) {
        ++s.open;
      } else if (kind == CellKind::kClosed) {
        ++s.closed;
      } else {
        ++s.other;
        s.has_positive |= kind == CellKind::kPositive;
        s.has_negative |= kind == CellKind::kNegative;
        s.has_zero |= kind == CellKind::kZero;
        if (s.other_values.size() <= kMaxListedValues) s.other_values.insert(v);
      }
    }
  }
  return s;
}

std::string plural(int64_t count, const char* noun) {
  return fmt::format("{} {}{}", count, noun, count == 1 ? "" : "s");
}

std::string layout_with_offsets(const Layout& layout) {
  std::vector<std::string> spans;
  for (const Span& s : layout.spans) {
    std::string text = s.length == 1 ? fmt::format("{} @{}", s.name, s.offset)
                                     : fmt::format("{}[{}] @{}..{}", s.name, s.length, s.offset,
                                                   s.offset + s.length - 1);
    if (s.grid) text += fmt::format(" grid {}x{}", s.grid->first, s.grid->second);
    if (s.digits) text += s.digits == DigitOrder::kLsbFirst ? " lsb_first" : " msb_first";
    spans.push_back(std::move(text));
  }
  return fmt::format("{}", fmt::join(spans, ", "));
}

std::string legend(const CompiledMask& m, const HeadStats& s) {
  std::string out = fmt::format("legend: # open ({})  . closed ({})", m.open_value, m.close_value);
  if (s.other > 0) {
    std::string values;
    if (s.other_values.size() <= kMaxListedValues) {
      values = fmt::format(" = {}", fmt::join(s.other_values, ", "));
    }
    std::vector<std::string> symbols;
    if (s.has_positive) symbols.push_back("+ > 0");
    if (s.has_negative) symbols.push_back("- < 0");
    if (s.has_zero) symbols.push_back("0 = 0");
    out += fmt::format("  other values{} ({})", values, fmt::join(symbols, ", "));
  }
  out += "  x hard-excluded";
  return out;
}

/// Column labels written vertically, one character per line, top-aligned.
std::string column_header(const CompiledMask& m, size_t label_width) {
  std::vector<std::string> labels;
  size_t height = 0;
  for (int64_t k = 0; k < m.n; ++k) {
    labels.push_back(m.layout.token_label(k));
    height = std::max(height, labels.back().size());
  }
  std::string out;
  for (size_t line = 0; line < height; ++line) {
    std::string text(label_width + 1, ' ');
    for (const std::string& label : labels) {
      text += ' ';
      text += line < label.size() ? label[line] : ' ';
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + '\n';
  }
  return out;
}

/// RGB of one value on the diverging map: -scale blue, 0 white, +scale red.
void colour(double value, double scale, uint8_t* rgb) {
  const double t = std::clamp(value / scale, -1.0, 1.0);
  const auto fade = static_cast<uint8_t>(std::lround(255.0 * (1.0 - std::abs(t))));
  rgb[0] = t >= 0 ? 255 : fade;
  rgb[1] = fade;
  rgb[2] = t <= 0 ? 255 : fade;
}

}  // namespace

void check_layer_head(const CompiledMask& mask, int64_t layer, int64_t head) {
  if (layer < 0 || layer >= mask.layers) {
    throw InputError(fmt::format("layer {} is out of range: mask '{}' has {} (0..{})", layer,
                                 mask.name, plural(mask.layers, "layer"), mask.layers - 1));
  }
  if (head < 0 || head >= mask.heads) {
    throw InputError(fmt::format("head {} is out of range: mask '{}' has {} (0..{})", head,
                                 mask.name, plural(mask.heads, "head"), mask.heads - 1));
  }
}

std::string render_summary(const CompiledMask& mask, int64_t layer, int64_t head) {
  check_layer_head(mask, layer, head);
  const HeadStats s = head_stats(mask, layer, head);
  std::string out = fmt::format(
      "mask {}: {}, {}, N = {}; layer {}, head {} (rows = query, columns = key)\n", mask.name,
      plural(mask.layers, "layer"), plural(mask.heads, "head"), mask.n, layer, head);
  out += fmt::format("layout: {}\n", layout_with_offsets(mask.layout));
  out += fmt::format("cells: {} open, {} closed, {} other, {} hard-excluded", s.open, s.closed,
                     s.other, s.hard);
  if (s.open + s.closed + s.other > 0) out += fmt::format("; values {} to {}", s.min, s.max);
  out += '\n';
  return out;
}

std::string render_grid(const CompiledMask& mask, int64_t layer, int64_t head, int64_t max_tokens) {
  std::string out = render_summary(mask, layer, head);
  if (mask.n > max_tokens) {
    out += fmt::format(
        "N = {} is too large to draw as text (at most {} tokens); use --png FILE.png for a "
        "heatmap\n",
        mask.n, max_tokens);
    return out;
  }
  size_t label_width = 0;
  for (int64_t t = 0; t < mask.n; ++t) {
    label_width = std::max(label_width, mask.layout.token_label(t).size());
  }
  out += legend(mask, head_stats(mask, layer, head)) + "\n\n";
  out += column_header(mask, label_width);
  for (int64_t q = 0; q < mask.n; ++q) {
    out += fmt::format("{:>{}} ", mask.layout.token_label(q), label_width);
    for (int64_t k = 0; k < mask.n; ++k) {
      out += ' ';
      out += symbol(classify(mask, layer, head, q, k));
    }
    out += '\n';
  }
  return out;
}

PngReport write_png_heatmap(const CompiledMask& mask, int64_t layer, int64_t head,
                            const std::string& path, const PngOptions& options) {
  check_layer_head(mask, layer, head);
  internal_check(options.max_side >= 1 && options.min_side >= 1, "PNG sides must be positive");
  if (mask.n == 0) throw InputError(fmt::format("cannot draw '{}': the mask has no tokens", path));
  PngReport report;
  // A block of b x b cells per pixel keeps the side at most max_side; small N is enlarged.
  report.cells_per_pixel = (mask.n + options.max_side - 1) / options.max_side;
  if (report.cells_per_pixel == 1)
    report.pixels_per_cell = std::max<int64_t>(1, options.min_side / mask.n);
  const int64_t cells_side = (mask.n + report.cells_per_pixel - 1) / report.cells_per_pixel;
  report.side = cells_side * report.pixels_per_cell;

  double largest = 0;
  for (int64_t q = 0; q < mask.n; ++q) {
    for (int64_t k = 0; k < mask.n; ++k) {
      if (!mask.is_hard(q, k))
        largest = std::max(largest, std::abs(double{mask.at(layer, head, q, k)}));
    }
  }
  report.scale = largest > 0 ? largest : 1.0;

  // One RGB value per block of cells: the mean of its non-hard cells, black if all are hard.
  const int64_t b = report.cells_per_pixel;
  std::vector<uint8_t> blocks(static_cast<size_t>(cells_side * cells_side * 3));
  for (int64_t bq = 0; bq < cells_side; ++bq) {
    for (int64_t bk = 0; bk < cells_side; ++bk) {
      double sum = 0;
      int64_t count = 0;
      for (int64_t q = bq * b; q < std::min(mask.n, (bq + 1) * b); ++q) {
        for (int64_t k = bk * b; k < std::min(mask.n, (bk + 1) * b); ++k) {
          if (mask.is_hard(q, k)) continue;
          sum += mask.at(layer, head, q, k);
          ++count;
        }
      }
      uint8_t* rgb = &blocks[static_cast<size_t>((bq * cells_side + bk) * 3)];
      if (count == 0) {
        rgb[0] = rgb[1] = rgb[2] = 0;
      } else {
        colour(sum / static_cast<double>(count), report.scale, rgb);
      }
    }
  }
  const int64_t p = report.pixels_per_cell;
  std::vector<uint8_t> pixels(static_cast<size_t>(report.side * report.side * 3));
  for (int64_t y = 0; y < report.side; ++y) {
    for (int64_t x = 0; x < report.side; ++x) {
      std::memcpy(&pixels[static_cast<size_t>((y * report.side + x) * 3)],
                  &blocks[static_cast<size_t>(((y / p) * cells_side + x / p) * 3)], 3);
    }
  }

  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(report.side);
  image.height = static_cast<png_uint_32>(report.side);
  image.format = PNG_FORMAT_RGB;
  png_alloc_size_t size = 0;
  const auto stride = static_cast<png_int_32>(report.side * 3);
  if (!png_image_write_to_memory(&image, nullptr, &size, /*convert_to_8_bit=*/0, pixels.data(),
                                 stride, /*colormap=*/nullptr)) {
    throw InputError(fmt::format("cannot draw '{}': {}", path, image.message));
  }
  std::string encoded(size, '\0');
  if (!png_image_write_to_memory(&image, encoded.data(), &size, /*convert_to_8_bit=*/0,
                                 pixels.data(), stride, /*colormap=*/nullptr)) {
    throw InputError(fmt::format("cannot draw '{}': {}", path, image.message));
  }
  encoded.resize(size);
  write_file_atomic(path, encoded);
  return report;
}

}  // namespace maskprior
