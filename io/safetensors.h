// Safetensors files (readable from Python), written atomically and read with full validation.
// Layout: u64 little-endian header length, JSON header (padded with spaces to 8 bytes)
//   {name: {dtype, shape, data_offsets: [begin, end]}, "__metadata__": {string: string}}, data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

#include "io/input_file.h"

namespace maskprior {

/// One tensor: safetensors dtype name ("F32", "F64", "I32", "I64", "U8"), shape, little-endian
/// bytes.
struct Tensor {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// A whole safetensors file: named tensors plus string metadata (`__metadata__`).
struct SafetensorsData {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
};

/// Serialises and writes a safetensors file atomically.
void write_safetensors(const std::string& path, const SafetensorsData& data);
/// Reads and validates a safetensors file (header JSON, dtypes, shapes, offsets, file size).
/// Throws InputError saying what is wrong and where for truncated or corrupt files, and before
/// allocating anything when the header claims more than `max_data_bytes` of tensor data.
SafetensorsData read_safetensors(const std::string& path, uint64_t max_data_bytes = kNoByteLimit);

// Zero-copy access, for callers whose tensors live in their own buffers (the mask-file schema):
// big tensors go from those buffers straight to the file and back, never copied.

/// A tensor to write without copying its bytes.
struct TensorView {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string_view bytes;
};

/// Writes a safetensors file whose tensor data stays in the caller's buffers, atomically.
/// Throws InputError naming the path for unknown dtypes, a reserved name or a size mismatch.
void write_safetensors_views(const std::string& path, std::vector<TensorView> tensors,
                             const std::map<std::string, std::string>& metadata);

/// One tensor's entry in a safetensors header; `begin`/`end` are absolute file offsets.
struct TensorEntry {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

/// A validated safetensors header: where each tensor lies, and the metadata.
struct SafetensorsHeader {
  std::map<std::string, TensorEntry> tensors;
  std::map<std::string, std::string> metadata;
};

/// Reads and validates the header: every check that does not need the tensor data itself
/// (dtypes, shapes against data_offsets, a data section tiled exactly, the file size), and that
/// its tensors claim at most `max_data_bytes` in all (InputError naming the claim and the cap).
SafetensorsHeader read_safetensors_header(InputFile& file, uint64_t max_data_bytes = kNoByteLimit);

/// Reads the data of `entry` (from a validated header) into `out`, resized to hold exactly it.
template <typename T>
void read_tensor_into(InputFile& file, const TensorEntry& entry, std::vector<T>& out) {
  allocate_or_throw(entry.end - entry.begin, "a tensor of " + file.path(),
                    [&] { out.resize((entry.end - entry.begin) / sizeof(T)); });
  file.read_at(entry.begin, out.data(), entry.end - entry.begin);
}

}  // namespace maskprior
