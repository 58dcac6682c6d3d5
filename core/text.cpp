#include "core/text.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

namespace maskprior {

/// The length of the well-formed UTF-8 character at text[i] (RFC 3629: no overlong forms, no
/// surrogates, nothing above U+10FFFF); 0 when the bytes there are not one.
size_t utf8_length(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  size_t length = 0;
  unsigned char low = 0x80, high = 0xbf;  // the allowed range of the second byte
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    length = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    length = 3;
    if (b0 == 0xe0) low = 0xa0;   // overlong
    if (b0 == 0xed) high = 0x9f;  // surrogates
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    length = 4;
    if (b0 == 0xf0) low = 0x90;   // overlong
    if (b0 == 0xf4) high = 0x8f;  // above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  }
  return length;
}

std::string human_bytes(uint64_t bytes) {
  if (bytes == std::numeric_limits<uint64_t>::max()) return "more than 16 EiB";
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024.0 && unit < 6) {
    v /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, units[unit]);
}

std::string human_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  if (seconds < 120) return fmt::format("{:.0f} s", seconds);
  if (seconds < 2 * 3600) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

bool is_invisible(char32_t c) {
  // Sorted, closed ranges: Unicode's White_Space characters beyond ASCII (U+0085 is a C1
  // control, escaped as one), and its Default_Ignorable_Code_Point characters but the combining
  // grapheme joiner and the variation selectors, which belong to the visible character before
  // them (U+FE0F to an emoji).
  static constexpr std::pair<char32_t, char32_t> kRanges[] = {
      {0x00a0, 0x00a0},   {0x00ad, 0x00ad},   {0x061c, 0x061c},  {0x115f, 0x1160}, {0x1680, 0x1680},
      {0x17b4, 0x17b5},   {0x180e, 0x180e},   {0x2000, 0x200f},  {0x2028, 0x202f}, {0x205f, 0x206f},
      {0x3000, 0x3000},   {0x3164, 0x3164},   {0xfeff, 0xfeff},  {0xffa0, 0xffa0}, {0xfff0, 0xfffb},
      {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a}, {0xe0000, 0xe007f}};
  for (const auto& [first, last] : kRanges) {
    if (c < first) return false;
    if (c <= last) return true;
  }
  return false;
}

std::string printable_utf8(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_length(text, i);
    const auto b0 = static_cast<unsigned char>(text[i]);
    const bool c1 = length == 2 && b0 == 0xc2 && static_cast<unsigned char>(text[i + 1]) < 0xa0;
    const bool kept = b0 == '\t' || (keep_newlines && b0 == '\n');
    const bool control = length == 1 && (b0 < 0x20 || b0 == 0x7f) && !kept;
    if (length == 0 || control || c1) {
      const size_t bytes = length == 0 ? 1 : length;
      for (size_t k = 0; k < bytes; ++k) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i + k]));
      }
      i += bytes;
      continue;
    }
    if (length > 1) {
      // The code point: the lead byte's payload bits, then 6 bits from each continuation byte.
      char32_t c = b0 & (0xff >> (length + 1));
      for (size_t k = 1; k < length; ++k) {
        c = (c << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3f);
      }
      if (is_invisible(c)) {
        out += c > 0xffff ? fmt::format("\\U{:08x}", static_cast<uint32_t>(c))
                          : fmt::format("\\u{:04x}", static_cast<uint32_t>(c));
        i += length;
        continue;
      }
    }
    out.append(text.substr(i, length));
    i += length;
  }
  return out;
}

}  // namespace maskprior
