// Tensor files: safetensors (the default, readable from Python) and .npy, written atomically.
// Format of a compiled mask file: shared/LANGUAGE.md, "Output".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/compiled_mask.h"

namespace maskprior {

enum class TensorFormat { kSafetensors, kNpy };

/// One tensor: safetensors dtype name ("F32", "F64", "I32", "I64", "U8"), shape, little-endian bytes.
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

/// Writes `bytes` to `path` via a temporary file in the same folder and a rename, so a failed or
/// interrupted write never leaves a partial file at `path`. Throws InputError naming the path.
void write_file_atomic(const std::string& path, std::string_view bytes);
/// As above, writing the concatenation of `parts` (so large buffers need not be joined first).
void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts);

/// Serialises and writes a safetensors file atomically.
void write_safetensors(const std::string& path, const SafetensorsData& data);
/// Reads and validates a safetensors file (header JSON, dtypes, shapes, offsets, file size).
/// Throws InputError saying what is wrong and where for truncated or corrupt files.
SafetensorsData read_safetensors(const std::string& path);

/// Writes a compiled mask: safetensors with `mask`, `provenance`, optional `hard` and the metadata
/// of LANGUAGE.md; or .npy holding only the float32 `mask` tensor [L, H, N, N].
void write_mask_file(const CompiledMask& mask, const std::string& path,
                     TensorFormat format = TensorFormat::kSafetensors);
/// Reads a mask file written by write_mask_file (safetensors: everything; npy: mask only, with a
/// layout of one span `x` of length N). Throws InputError for corrupt files or wrong dtypes/shapes.
CompiledMask read_mask_file(const std::string& path);

}  // namespace maskprior
