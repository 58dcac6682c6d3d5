#include "io/safetensors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"

namespace maskprior {
namespace {

using nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";

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

// ---------------------------------------------------------------------------------------------
// Writing

/// Throws InputError unless `t` has a known dtype, a free name, and exactly its shape's bytes.
void check_view(const std::string& path, const TensorView& t) {
  const std::optional<uint64_t> element_size = dtype_size(t.dtype);
  if (!element_size) {
    throw InputError(fmt::format("cannot write '{}': tensor '{}' has unknown dtype '{}'", path,
                                 t.name, t.dtype));
  }
  if (t.name == kMetadataKey) {
    throw InputError(
        fmt::format("cannot write '{}': '{}' is reserved and cannot name a tensor", path, t.name));
  }
  const std::optional<uint64_t> expected = byte_count(t.shape, *element_size);
  if (!expected || *expected != t.bytes.size()) {
    throw InputError(
        fmt::format("cannot write '{}': tensor '{}' of shape {} and dtype {} holds "
                    "{} bytes",
                    path, t.name, shape_text(t.shape), t.dtype, t.bytes.size()));
  }
}

/// The 8-byte header length and the JSON header, padded with spaces to a multiple of 8 bytes.
std::string header_prefix(const std::string& path, const std::vector<TensorView>& tensors,
                          const std::map<std::string, std::string>& metadata) {
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
  return prefix;
}

// ---------------------------------------------------------------------------------------------
// Reading

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

/// The JSON header and its length in bytes, after checking the length against the file.
std::pair<json, uint64_t> read_header_json(InputFile& file) {
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
    header = parse_json(text, "header");
  } catch (const InputError& e) {
    file.corrupt(e.what());
  }
  if (!header.is_object()) file.corrupt("header is not a JSON object");
  return {std::move(header), header_size};
}

std::map<std::string, std::string> parse_metadata(InputFile& file, const json& value) {
  if (!value.is_object()) file.corrupt("__metadata__ is not a JSON object");
  std::map<std::string, std::string> metadata;
  for (const auto& [meta_key, meta_value] : value.items()) {
    if (!meta_value.is_string()) {
      file.corrupt(fmt::format("metadata '{}' is not a string", meta_key));
    }
    metadata[meta_key] = meta_value.get<std::string>();
  }
  return metadata;
}

/// One tensor's header entry, checked against the `data_size` bytes that start at `data_start`.
TensorEntry parse_tensor_entry(InputFile& file, const std::string& key, const json& value,
                               uint64_t data_start, uint64_t data_size) {
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
  return entry;
}

/// The data section must be tiled exactly: no gaps, no overlaps, nothing trailing.
void check_tiling(InputFile& file, const SafetensorsHeader& header, uint64_t data_start) {
  std::vector<const TensorEntry*> by_offset;
  for (const auto& [name, entry] : header.tensors) by_offset.push_back(&entry);
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
}

}  // namespace

void write_safetensors_views(const std::string& path, std::vector<TensorView> tensors,
                             const std::map<std::string, std::string>& metadata) {
  for (const TensorView& t : tensors) check_view(path, t);
  // Larger elements first keeps every tensor aligned to its element size (as safetensors does).
  std::sort(tensors.begin(), tensors.end(), [](const TensorView& a, const TensorView& b) {
    const uint64_t sa = *dtype_size(a.dtype), sb = *dtype_size(b.dtype);
    return sa != sb ? sa > sb : a.name < b.name;
  });
  const std::string prefix = header_prefix(path, tensors, metadata);
  std::vector<std::string_view> parts{prefix};
  for (const TensorView& t : tensors) parts.push_back(t.bytes);
  write_file_atomic(path, parts);
}

SafetensorsHeader read_safetensors_header(InputFile& file, uint64_t max_data_bytes) {
  const auto [header, header_size] = read_header_json(file);
  SafetensorsHeader result;
  const uint64_t data_start = 8 + header_size;
  const uint64_t data_size = file.size() - data_start;
  uint64_t claimed = 0;  // each entry lies inside the data section; the sum may still overflow
  for (const auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      result.metadata = parse_metadata(file, value);
    } else {
      const TensorEntry& entry =
          result.tensors.emplace(key, parse_tensor_entry(file, key, value, data_start, data_size))
              .first->second;
      const uint64_t bytes = entry.end - entry.begin;
      claimed = bytes > kNoByteLimit - claimed ? kNoByteLimit : claimed + bytes;
    }
  }
  file.check_claim(claimed, max_data_bytes, "tensor data");
  check_tiling(file, result, data_start);
  return result;
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

SafetensorsData read_safetensors(const std::string& path, uint64_t max_data_bytes) {
  InputFile file(path);
  const SafetensorsHeader header = read_safetensors_header(file, max_data_bytes);
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

}  // namespace maskprior
