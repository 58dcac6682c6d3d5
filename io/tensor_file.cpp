// Safetensors and .npy files for compiled masks. Layouts:
//  - safetensors: u64 little-endian header length, JSON header (padded with spaces to 8 bytes)
//    {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {string: string}}, data.
//  - npy v1.0: "\x93NUMPY", 1, 0, u16 header length, Python dict literal, data (C order).
// Big tensors go from the CompiledMask's vectors straight to the file and back, never copied.
#include "io/tensor_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <system_error>
#include <tuple>

namespace maskprior {
namespace {

static_assert(std::endian::native == std::endian::little,
              "tensor files are little-endian; a big-endian host would need byte swapping");

using nlohmann::json;

constexpr std::string_view kMaskFormat = "mask/1";
constexpr std::string_view kMetadataKey = "__metadata__";
constexpr char kNpyMagic[] = "\x93NUMPY";
constexpr size_t kNpyMagicSize = 6;
// The reference implementation refuses headers above 100 MB; so do we, before allocating.
constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;
// write(2) moves at most about 2 GiB per call on Linux.
constexpr size_t kMaxWriteChunk = size_t{1} << 30;

std::string system_message(int error) {
  return std::generic_category().message(error);
}

/// Bytes per element of a safetensors dtype, or nullopt for an unknown dtype.
std::optional<uint64_t> dtype_size(std::string_view dtype) {
  struct Entry {
    std::string_view name;
    uint64_t size;
  };
  static constexpr Entry kDtypes[] = {{"BOOL", 1}, {"U8", 1},   {"I8", 1},  {"I16", 2}, {"U16", 2},
                                      {"F16", 2},  {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},
                                      {"I64", 8},  {"U64", 8},  {"F64", 8}};
  for (const Entry& e : kDtypes) {
    if (e.name == dtype) return e.size;
  }
  return std::nullopt;
}

/// Product of `shape` times `element_size`, or nullopt on a negative extent or overflow.
std::optional<uint64_t> byte_count(const std::vector<int64_t>& shape, uint64_t element_size) {
  uint64_t total = element_size;
  for (int64_t extent : shape) {
    if (extent < 0) return std::nullopt;
    const auto e = static_cast<uint64_t>(extent);
    if (e != 0 && total > std::numeric_limits<uint64_t>::max() / e) return std::nullopt;
    total *= e;
  }
  return total;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

template <typename T>
std::string_view as_bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

// ---------------------------------------------------------------------------------------------
// Atomic writes

/// Writes all of `bytes` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, std::string_view bytes) {
  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, std::min(left, kMaxWriteChunk));
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  return 0;
}

/// A uniquely named file next to the target; removed on destruction unless renamed onto it.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target) {
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
      path_ = fmt::format("{}.tmp-{}-{:08x}", target, ::getpid(), random());
      // 0666 so the final file gets the usual umask-derived permissions.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) return;
      if (errno != EEXIST) fail(errno);
    }
    throw InputError(fmt::format("cannot write '{}': no free temporary file name", target_));
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }

  void write(std::string_view bytes) {
    if (int error = write_all(fd_, bytes)) fail(error);
  }

  /// Flushes to disk and renames onto the target, replacing it atomically.
  void commit() {
    if (::fsync(fd_) != 0) fail(errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(errno);
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail(errno);
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(int error) const {
    throw InputError(fmt::format("cannot write '{}': {}", target_, system_message(error)));
  }

  std::string target_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Writes the concatenation of `parts` to `path` atomically.
void write_parts_atomic(const std::string& path, const std::vector<std::string_view>& parts) {
  TempFile file(path);
  for (std::string_view part : parts) file.write(part);
  file.commit();
}

// ---------------------------------------------------------------------------------------------
// Reading

/// A file opened for reading with its size; every read is checked.
class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path) {
    file_.reset(std::fopen(path.c_str(), "rb"));
    if (!file_) {
      throw InputError(fmt::format("cannot read '{}': {}", path, system_message(errno)));
    }
    struct stat info {};
    if (::fstat(::fileno(file_.get()), &info) != 0) {
      throw InputError(fmt::format("cannot read '{}': {}", path, system_message(errno)));
    }
    if (S_ISDIR(info.st_mode)) {
      throw InputError(fmt::format("cannot read '{}': it is a directory", path));
    }
    size_ = static_cast<uint64_t>(info.st_size);
  }

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  /// Reads `count` bytes at `offset` into `out`; the caller has checked the range.
  void read_at(uint64_t offset, void* out, uint64_t count) {
    if (count == 0) return;
    if (::fseeko(file_.get(), static_cast<off_t>(offset), SEEK_SET) != 0 ||
        std::fread(out, 1, count, file_.get()) != count) {
      throw InputError(fmt::format("cannot read '{}': read of {} bytes at offset {} failed", path_,
                                   count, offset));
    }
  }

  std::string read_string(uint64_t offset, uint64_t count) {
    std::string text(count, '\0');
    read_at(offset, text.data(), count);
    return text;
  }

  [[noreturn]] void corrupt(const std::string& what) const {
    throw InputError(fmt::format("'{}' is not a valid tensor file: {}", path_, what));
  }

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
  uint64_t size_ = 0;
};

/// One tensor's entry in a safetensors header; `begin`/`end` are absolute file offsets.
struct TensorEntry {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

struct SafetensorsHeader {
  std::map<std::string, TensorEntry> tensors;
  std::map<std::string, std::string> metadata;
};

std::vector<int64_t> parse_shape(InputFile& file, const std::string& name, const json& value) {
  if (!value.is_array()) file.corrupt(fmt::format("tensor '{}': shape is not a list", name));
  std::vector<int64_t> shape;
  for (const json& extent : value) {
    if (!extent.is_number_unsigned()) {
      file.corrupt(
          fmt::format("tensor '{}': shape {} has an entry that is not a non-negative "
                      "integer",
                      name, value.dump()));
    }
    const auto e = extent.get<uint64_t>();
    if (e > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      file.corrupt(fmt::format("tensor '{}': shape {} is too large", name, value.dump()));
    }
    shape.push_back(static_cast<int64_t>(e));
  }
  return shape;
}

/// Reads and validates the header: every check that does not need the tensor data itself.
SafetensorsHeader read_safetensors_header(InputFile& file) {
  if (file.size() < 8) {
    file.corrupt(fmt::format(
        "file is {} bytes, too short for the 8-byte header length (truncated?)", file.size()));
  }
  uint64_t header_size = 0;
  file.read_at(0, &header_size, 8);
  if (header_size > file.size() - 8) {
    file.corrupt(fmt::format("header length {} runs past the end of the {}-byte file (truncated?)",
                             header_size, file.size()));
  }
  if (header_size > kMaxHeaderBytes) {
    file.corrupt(
        fmt::format("header length {} exceeds the {}-byte limit", header_size, kMaxHeaderBytes));
  }
  const std::string text = file.read_string(8, header_size);
  json header;
  try {
    header = json::parse(text);
  } catch (const json::parse_error& e) {
    file.corrupt(fmt::format("header is not valid JSON ({})", e.what()));
  }
  if (!header.is_object()) file.corrupt("header is not a JSON object");

  SafetensorsHeader result;
  const uint64_t data_start = 8 + header_size;
  const uint64_t data_size = file.size() - data_start;
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      if (!value.is_object()) file.corrupt("__metadata__ is not a JSON object");
      for (const auto& [meta_key, meta_value] : value.items()) {
        if (!meta_value.is_string()) {
          file.corrupt(fmt::format("metadata '{}' is not a string", meta_key));
        }
        result.metadata[meta_key] = meta_value.get<std::string>();
      }
      continue;
    }
    if (!value.is_object()) file.corrupt(fmt::format("tensor '{}' is not a JSON object", key));
    TensorEntry entry;
    entry.name = key;
    const auto dtype = value.find("dtype");
    if (dtype == value.end() || !dtype->is_string()) {
      file.corrupt(fmt::format("tensor '{}' has no dtype", key));
    }
    entry.dtype = dtype->get<std::string>();
    const std::optional<uint64_t> element_size = dtype_size(entry.dtype);
    if (!element_size)
      file.corrupt(fmt::format("tensor '{}' has unknown dtype '{}'", key, entry.dtype));
    const auto shape = value.find("shape");
    if (shape == value.end()) file.corrupt(fmt::format("tensor '{}' has no shape", key));
    entry.shape = parse_shape(file, key, *shape);
    const auto offsets = value.find("data_offsets");
    if (offsets == value.end() || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned()) {
      file.corrupt(fmt::format("tensor '{}': data_offsets must be two non-negative integers", key));
    }
    const auto begin = (*offsets)[0].get<uint64_t>();
    const auto end = (*offsets)[1].get<uint64_t>();
    if (begin > end || end > data_size) {
      file.corrupt(fmt::format(
          "tensor '{}': data_offsets [{}, {}] fall outside the {}-byte data section (truncated?)",
          key, begin, end, data_size));
    }
    const std::optional<uint64_t> expected = byte_count(entry.shape, *element_size);
    if (!expected || *expected != end - begin) {
      file.corrupt(
          fmt::format("tensor '{}': shape {} of {} needs {} bytes but data_offsets [{}, {}] "
                      "span {}",
                      key, shape_text(entry.shape), entry.dtype,
                      expected ? std::to_string(*expected) : "too many", begin, end, end - begin));
    }
    entry.begin = data_start + begin;
    entry.end = data_start + end;
    result.tensors.emplace(key, std::move(entry));
  }

  // The data section must be tiled exactly: no gaps, no overlaps, nothing trailing.
  std::vector<const TensorEntry*> by_offset;
  for (const auto& [name, entry] : result.tensors) by_offset.push_back(&entry);
  std::sort(by_offset.begin(), by_offset.end(), [](const TensorEntry* a, const TensorEntry* b) {
    return std::tie(a->begin, a->end) < std::tie(b->begin, b->end);
  });
  uint64_t expected_begin = data_start;
  for (const TensorEntry* entry : by_offset) {
    if (entry->begin < expected_begin) {
      file.corrupt(fmt::format("tensor '{}' overlaps the tensor before it", entry->name));
    }
    if (entry->begin > expected_begin) {
      file.corrupt(fmt::format("gap of {} bytes before tensor '{}'", entry->begin - expected_begin,
                               entry->name));
    }
    expected_begin = entry->end;
  }
  if (expected_begin != file.size()) {
    file.corrupt(fmt::format("{} bytes after the last tensor are not described by the header",
                             file.size() - expected_begin));
  }
  return result;
}

/// Reads the data of `entry` into `out`, which must hold exactly its bytes.
template <typename T>
void read_tensor_into(InputFile& file, const TensorEntry& entry, std::vector<T>& out) {
  out.resize((entry.end - entry.begin) / sizeof(T));
  file.read_at(entry.begin, out.data(), entry.end - entry.begin);
}

// ---------------------------------------------------------------------------------------------
// Mask files

/// A tensor to write without copying its bytes.
struct TensorView {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

/// Writes a safetensors file whose tensor data stays in the caller's buffers.
void write_safetensors_views(const std::string& path, std::vector<TensorView> tensors,
                             const std::map<std::string, std::string>& metadata) {
  for (const TensorView& t : tensors) {
    const std::optional<uint64_t> element_size = dtype_size(t.dtype);
    if (!element_size) {
      throw InputError(fmt::format("cannot write '{}': tensor '{}' has unknown dtype '{}'", path,
                                   t.name, t.dtype));
    }
    if (t.name == kMetadataKey) {
      throw InputError(fmt::format("cannot write '{}': '{}' is reserved and cannot name a tensor",
                                   path, t.name));
    }
    const std::optional<uint64_t> expected = byte_count(t.shape, *element_size);
    if (!expected || *expected != t.bytes.size()) {
      throw InputError(
          fmt::format("cannot write '{}': tensor '{}' of shape {} and dtype {} holds "
                      "{} bytes",
                      path, t.name, shape_text(t.shape), t.dtype, t.bytes.size()));
    }
  }
  // Larger elements first keeps every tensor aligned to its element size (as safetensors does).
  std::sort(tensors.begin(), tensors.end(), [](const TensorView& a, const TensorView& b) {
    const uint64_t sa = *dtype_size(a.dtype), sb = *dtype_size(b.dtype);
    return sa != sb ? sa > sb : a.name < b.name;
  });

  json header = json::object();
  if (!metadata.empty()) header[std::string(kMetadataKey)] = metadata;
  uint64_t offset = 0;
  for (const TensorView& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& e) {
    throw InputError(fmt::format("cannot write '{}': {}", path, e.what()));
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  const uint64_t header_size = text.size();
  std::string prefix(8, '\0');
  std::memcpy(prefix.data(), &header_size, 8);
  prefix += text;

  std::vector<std::string_view> parts{prefix};
  for (const TensorView& t : tensors) parts.push_back(t.bytes);
  write_parts_atomic(path, parts);
}

std::string digit_order_name(DigitOrder order) {
  return order == DigitOrder::kLsbFirst ? "lsb_first" : "msb_first";
}

std::string format_number(double value) {
  return fmt::format("{}", value);
}

json params_json(const std::map<std::string, double>& params) {
  json out = json::object();
  for (const auto& [name, value] : params) {
    // Integer parameters stay integers, so Python reads `15`, not `15.0`.
    if (std::trunc(value) == value && std::abs(value) < 9.0e15) {
      out[name] = static_cast<int64_t>(value);
    } else {
      out[name] = value;
    }
  }
  return out;
}

json layout_json(const Layout& layout) {
  json spans = json::array();
  for (const Span& s : layout.spans) {
    json span = {{"name", s.name}, {"offset", s.offset}, {"length", s.length}};
    if (s.grid) span["grid"] = {s.grid->first, s.grid->second};
    if (s.digits) span["digits"] = digit_order_name(*s.digits);
    spans.push_back(std::move(span));
  }
  return spans;
}

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

void write_npy_mask(const CompiledMask& m, const std::string& path) {
  const std::string header = npy_header({m.layers, m.heads, m.n, m.n});
  write_parts_atomic(path, {header, as_bytes(m.mask)});
}

void write_safetensors_mask(const CompiledMask& m, const std::string& path) {
  const std::vector<int64_t> shape{m.layers, m.heads, m.n, m.n};
  std::vector<TensorView> tensors{{"mask", "F32", shape, as_bytes(m.mask)},
                                  {"provenance", "I32", shape, as_bytes(m.provenance)}};
  if (m.hard) tensors.push_back({"hard", "U8", {m.n, m.n}, as_bytes(*m.hard)});
  const std::map<std::string, std::string> metadata{
      {"format", std::string(kMaskFormat)},     {"name", m.name},
      {"source_sha256", m.source_sha256},       {"layout", layout_json(m.layout).dump()},
      {"open", format_number(m.open_value)},    {"close", format_number(m.close_value)},
      {"params", params_json(m.params).dump()},
  };
  write_safetensors_views(path, std::move(tensors), metadata);
}

/// Parses one metadata value as a number; `what` names it in the error.
double parse_number(InputFile& file, const std::string& what, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    file.corrupt(fmt::format("metadata '{}' = '{}' is not a number", what, text));
  }
  return value;
}

json parse_metadata_json(InputFile& file, const std::string& key, const std::string& text) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    file.corrupt(fmt::format("metadata '{}' is not valid JSON ({})", key, e.what()));
  }
}

int64_t layout_int(InputFile& file, const json& span, const char* key) {
  const auto it = span.find(key);
  if (it == span.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    file.corrupt(fmt::format("layout span {} needs a non-negative integer '{}'", span.dump(), key));
  }
  return it->get<int64_t>();
}

Layout parse_layout(InputFile& file, const std::string& text, int64_t n) {
  const json spans = parse_metadata_json(file, "layout", text);
  if (!spans.is_array()) file.corrupt("metadata 'layout' is not a JSON list");
  Layout layout;
  int64_t next_offset = 0;
  for (const json& entry : spans) {
    if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) {
      file.corrupt(fmt::format("layout span {} has no name", entry.dump()));
    }
    Span span;
    span.name = entry["name"].get<std::string>();
    span.offset = layout_int(file, entry, "offset");
    span.length = layout_int(file, entry, "length");
    if (span.offset != next_offset) {
      file.corrupt(fmt::format("layout span '{}' starts at {}, expected {}", span.name, span.offset,
                               next_offset));
    }
    next_offset += span.length;
    if (const auto grid = entry.find("grid"); grid != entry.end()) {
      if (!grid->is_array() || grid->size() != 2 || !(*grid)[0].is_number_integer() ||
          !(*grid)[1].is_number_integer() ||
          (*grid)[0].get<int64_t>() * (*grid)[1].get<int64_t>() != span.length) {
        file.corrupt(fmt::format("layout span '{}' has a grid {} that does not tile its {} tokens",
                                 span.name, grid->dump(), span.length));
      }
      span.grid = std::pair{(*grid)[0].get<int64_t>(), (*grid)[1].get<int64_t>()};
    }
    if (const auto digits = entry.find("digits"); digits != entry.end()) {
      if (*digits == "lsb_first") {
        span.digits = DigitOrder::kLsbFirst;
      } else if (*digits == "msb_first") {
        span.digits = DigitOrder::kMsbFirst;
      } else {
        file.corrupt(
            fmt::format("layout span '{}' has digits {}, expected \"lsb_first\" or "
                        "\"msb_first\"",
                        span.name, digits->dump()));
      }
    }
    layout.spans.push_back(std::move(span));
  }
  if (next_offset != n) {
    file.corrupt(fmt::format("layout covers {} tokens but the mask has N = {}", next_offset, n));
  }
  return layout;
}

std::map<std::string, double> parse_params(InputFile& file, const std::string& text) {
  const json params = parse_metadata_json(file, "params", text);
  if (!params.is_object()) file.corrupt("metadata 'params' is not a JSON object");
  std::map<std::string, double> out;
  for (const auto& [name, value] : params.items()) {
    if (!value.is_number()) file.corrupt(fmt::format("param '{}' is not a number", name));
    out[name] = value.get<double>();
  }
  return out;
}

const TensorEntry& require_tensor(InputFile& file, const SafetensorsHeader& header,
                                  const std::string& name, const std::string& dtype) {
  const auto it = header.tensors.find(name);
  if (it == header.tensors.end()) file.corrupt(fmt::format("no tensor '{}' in a mask file", name));
  if (it->second.dtype != dtype) {
    file.corrupt(
        fmt::format("tensor '{}' has dtype {}, expected {}", name, it->second.dtype, dtype));
  }
  return it->second;
}

const std::string& require_metadata(InputFile& file, const SafetensorsHeader& header,
                                    const std::string& key) {
  const auto it = header.metadata.find(key);
  if (it == header.metadata.end()) file.corrupt(fmt::format("metadata '{}' is missing", key));
  return it->second;
}

CompiledMask read_safetensors_mask(InputFile& file) {
  const SafetensorsHeader header = read_safetensors_header(file);
  const std::string& format = require_metadata(file, header, "format");
  if (format != kMaskFormat) {
    file.corrupt(fmt::format("metadata 'format' is '{}', expected '{}'", format, kMaskFormat));
  }
  const TensorEntry& mask = require_tensor(file, header, "mask", "F32");
  const TensorEntry& provenance = require_tensor(file, header, "provenance", "I32");
  if (mask.shape.size() != 4 || mask.shape[2] != mask.shape[3] || mask.shape[0] < 1 ||
      mask.shape[1] < 1) {
    file.corrupt(fmt::format("tensor 'mask' has shape {}, expected [L, H, N, N] with L, H >= 1",
                             shape_text(mask.shape)));
  }
  if (provenance.shape != mask.shape) {
    file.corrupt(fmt::format("tensor 'provenance' has shape {}, but 'mask' has {}",
                             shape_text(provenance.shape), shape_text(mask.shape)));
  }

  CompiledMask m;
  m.layers = mask.shape[0];
  m.heads = mask.shape[1];
  m.n = mask.shape[2];
  m.name = require_metadata(file, header, "name");
  m.source_sha256 = require_metadata(file, header, "source_sha256");
  m.layout = parse_layout(file, require_metadata(file, header, "layout"), m.n);
  m.open_value = parse_number(file, "open", require_metadata(file, header, "open"));
  m.close_value = parse_number(file, "close", require_metadata(file, header, "close"));
  m.params = parse_params(file, require_metadata(file, header, "params"));

  const TensorEntry* hard = nullptr;
  if (header.tensors.count("hard") != 0) {
    hard = &require_tensor(file, header, "hard", "U8");
    if (hard->shape != std::vector<int64_t>{m.n, m.n}) {
      file.corrupt(fmt::format("tensor 'hard' has shape {}, expected [{}, {}]",
                               shape_text(hard->shape), m.n, m.n));
    }
  }
  read_tensor_into(file, mask, m.mask);
  read_tensor_into(file, provenance, m.provenance);
  if (hard) read_tensor_into(file, *hard, m.hard.emplace());
  return m;
}

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

CompiledMask read_npy_mask(InputFile& file) {
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
  const std::string dict = file.read_string(prefix, header_size);
  const std::string descr = npy_field(file, dict, "descr");
  if (descr != "'<f4'") {
    file.corrupt(fmt::format("npy dtype is {}, expected '<f4' (little-endian float32)", descr));
  }
  if (npy_field(file, dict, "fortran_order") != "False") {
    file.corrupt("npy data is in Fortran order, expected C order");
  }
  std::vector<int64_t> shape = parse_npy_shape(file, npy_field(file, dict, "shape"));
  if (shape.size() == 2) shape.insert(shape.begin(), {1, 1});
  if (shape.size() != 4 || shape[2] != shape[3] || shape[0] < 1 || shape[1] < 1) {
    file.corrupt(fmt::format("npy shape {} is not [L, H, N, N] or [N, N]", shape_text(shape)));
  }
  const uint64_t data_start = prefix + header_size;
  const std::optional<uint64_t> expected = byte_count(shape, 4);
  if (!expected || *expected != file.size() - data_start) {
    file.corrupt(fmt::format("npy shape {} needs {} bytes of data but the file has {} (truncated?)",
                             shape_text(shape), expected ? std::to_string(*expected) : "too many",
                             file.size() - data_start));
  }

  CompiledMask m;
  m.name = std::filesystem::path(file.path()).stem().string();
  m.layers = shape[0];
  m.heads = shape[1];
  m.n = shape[2];
  Span whole;
  whole.name = "x";
  whole.length = m.n;
  m.layout.spans.push_back(std::move(whole));
  m.mask.resize(*expected / 4);
  file.read_at(data_start, m.mask.data(), *expected);
  // npy carries no provenance: every cell reads as "default" (0).
  m.provenance.assign(m.mask.size(), 0);
  return m;
}

bool is_npy(InputFile& file) {
  if (file.size() < kNpyMagicSize) return false;
  char magic[kNpyMagicSize];
  file.read_at(0, magic, kNpyMagicSize);
  return std::memcmp(magic, kNpyMagic, kNpyMagicSize) == 0;
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_parts_atomic(path, {bytes});
}

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts) {
  write_parts_atomic(path, parts);
}

void write_safetensors(const std::string& path, const SafetensorsData& data) {
  std::vector<TensorView> views;
  for (const auto& [name, tensor] : data.tensors) {
    views.push_back({name,
                     tensor.dtype,
                     tensor.shape,
                     {reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size()}});
  }
  write_safetensors_views(path, std::move(views), data.metadata);
}

SafetensorsData read_safetensors(const std::string& path) {
  InputFile file(path);
  const SafetensorsHeader header = read_safetensors_header(file);
  SafetensorsData data;
  data.metadata = header.metadata;
  for (const auto& [name, entry] : header.tensors) {
    Tensor& tensor = data.tensors[name];
    tensor.dtype = entry.dtype;
    tensor.shape = entry.shape;
    read_tensor_into(file, entry, tensor.bytes);
  }
  return data;
}

void write_mask_file(const CompiledMask& mask, const std::string& path, TensorFormat format) {
  check_invariants(mask);
  if (format == TensorFormat::kNpy) {
    write_npy_mask(mask, path);
  } else {
    write_safetensors_mask(mask, path);
  }
}

CompiledMask read_mask_file(const std::string& path) {
  InputFile file(path);
  return is_npy(file) ? read_npy_mask(file) : read_safetensors_mask(file);
}

}  // namespace maskprior
