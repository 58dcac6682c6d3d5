#include "io/npy.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "core/error.h"
#include "io/atomic_file.h"

namespace maskprior {
namespace {

constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;

/// The value of `key` in a .npy header dict (`'key': value`), as raw text up to `,` or `)`.
std::string npy_field(InputFile& file, const std::string& dict, const std::string& key) {
  const std::string quoted = "'" + key + "':";
  const size_t at = dict.find(quoted);
  if (at == std::string::npos) file.corrupt(fmt::format("npy header has no '{}'", key));
  size_t begin = dict.find_first_not_of(' ', at + quoted.size());
  if (begin == std::string::npos) file.corrupt(fmt::format("npy header '{}' has no value", key));
  const size_t end =
      dict[begin] == '(' ? dict.find(')', begin) + 1 : dict.find_first_of(",}", begin);
  if (end == std::string::npos || end == 0)
    file.corrupt(fmt::format("npy header '{}' is cut off", key));
  return dict.substr(begin, end - begin);
}

std::vector<int64_t> parse_npy_shape(InputFile& file, const std::string& text) {
  std::vector<int64_t> shape;
  size_t pos = 1;  // after '('
  while (pos < text.size()) {
    pos = text.find_first_not_of(" ,", pos);
    if (pos == std::string::npos || text[pos] == ')') break;
    int64_t extent = 0;
    const auto [ptr, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), extent);
    if (ec != std::errc() || extent < 0) {
      file.corrupt(fmt::format("npy shape {} is not a tuple of non-negative integers", text));
    }
    shape.push_back(extent);
    pos = static_cast<size_t>(ptr - text.data());
  }
  return shape;
}

/// Reads the version and header length; returns the header length and where the header starts.
std::pair<uint64_t, uint64_t> read_header_size(InputFile& file) {
  if (file.size() < kNpyMagicSize + 4) file.corrupt("npy file is too short for its header");
  uint8_t version[2];
  file.read_at(kNpyMagicSize, version, 2);
  uint64_t header_size = 0;
  uint64_t prefix = 0;
  if (version[0] == 1) {
    uint16_t size16 = 0;
    file.read_at(kNpyMagicSize + 2, &size16, 2);
    header_size = size16;
    prefix = kNpyMagicSize + 4;
  } else if (version[0] == 2 || version[0] == 3) {
    uint32_t size32 = 0;
    if (file.size() < kNpyMagicSize + 6) file.corrupt("npy file is too short for its header");
    file.read_at(kNpyMagicSize + 2, &size32, 4);
    header_size = size32;
    prefix = kNpyMagicSize + 6;
  } else {
    file.corrupt(fmt::format("unsupported npy version {}.{}", version[0], version[1]));
  }
  if (header_size > file.size() - prefix || header_size > kMaxHeaderBytes) {
    file.corrupt(fmt::format("npy header length {} runs past the end of the {}-byte file",
                             header_size, file.size()));
  }
  return {header_size, prefix};
}

}  // namespace

std::string npy_header(const std::vector<int64_t>& shape) {
  std::string dict = fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': ({}{}), }}",
                                 fmt::join(shape, ", "), shape.size() == 1 ? "," : "");
  // Magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64.
  const size_t unpadded = kNpyMagicSize + 4 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  internal_check(dict.size() <= std::numeric_limits<uint16_t>::max(), "npy header too long");
  std::string out(kNpyMagic, kNpyMagicSize);
  out += '\x01';
  out += '\x00';
  const auto length = static_cast<uint16_t>(dict.size());
  out.append(reinterpret_cast<const char*>(&length), 2);
  out += dict;
  return out;
}

void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape,
                   std::string_view data) {
  const std::string header = npy_header(shape);
  write_file_atomic(path, std::vector<std::string_view>{header, data});
}

bool is_npy(InputFile& file) {
  if (file.size() < kNpyMagicSize) return false;
  char magic[kNpyMagicSize];
  file.read_at(0, magic, kNpyMagicSize);
  return std::memcmp(magic, kNpyMagic, kNpyMagicSize) == 0;
}

NpyHeader read_npy_f32_header(InputFile& file) {
  const auto [header_size, prefix] = read_header_size(file);
  const std::string dict = file.read_string(prefix, header_size);
  const std::string descr = npy_field(file, dict, "descr");
  if (descr != "'<f4'") {
    file.corrupt(fmt::format("npy dtype is {}, expected '<f4' (little-endian float32)", descr));
  }
  if (npy_field(file, dict, "fortran_order") != "False") {
    file.corrupt("npy data is in Fortran order, expected C order");
  }
  return {parse_npy_shape(file, npy_field(file, dict, "shape")), prefix + header_size};
}

std::vector<float> read_npy_f32_data(InputFile& file, const std::vector<int64_t>& shape,
                                     uint64_t data_start, uint64_t max_bytes) {
  const std::optional<uint64_t> expected = byte_count(shape, 4);
  if (expected) file.check_claim(*expected, max_bytes, "float32 data");
  if (!expected || *expected != file.size() - data_start) {
    file.corrupt(fmt::format("npy shape {} needs {} bytes of data but the file has {} (truncated?)",
                             shape_text(shape), expected ? std::to_string(*expected) : "too many",
                             file.size() - data_start));
  }
  std::vector<float> data;
  allocate_or_throw(*expected, "the npy data of " + file.path(),
                    [&] { data.resize(*expected / 4); });
  file.read_at(data_start, data.data(), *expected);
  return data;
}

}  // namespace maskprior
