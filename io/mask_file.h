// Compiled mask files: the schema of docs/language-reference.md, "Output", on top of safetensors (the
// default, readable from Python) or .npy (the mask tensor only).
#pragma once

#include <cstdint>
#include <string>

#include "core/compiled_mask.h"

namespace maskprior {

enum class TensorFormat { kSafetensors, kNpy };

/// Writes a compiled mask: safetensors with `mask`, `provenance`, optional `hard` and the metadata
/// of docs/language-reference.md; or .npy holding only the float32 `mask` tensor [L, H, N, N]. Throws InputError
/// for safetensors of a mask compiled without provenance.
void write_mask_file(const CompiledMask& mask, const std::string& path,
                     TensorFormat format = TensorFormat::kSafetensors);
/// The default cap of read_mask_file, the same as `maskc compile --max-bytes`'s default.
inline constexpr uint64_t kDefaultMaxMaskBytes = uint64_t{4} << 30;

/// Reads a mask file written by write_mask_file (safetensors: everything; npy: mask only, with a
/// layout of one span `x` of length N). Throws InputError for corrupt files or wrong dtypes/shapes,
/// and, before allocating, for a mask that would take more than `max_bytes` (safetensors: its
/// tensor data; npy: 8 bytes a cell, float32 mask and int32 provenance, as compile counts them).
CompiledMask read_mask_file(const std::string& path, uint64_t max_bytes = kDefaultMaxMaskBytes);

}  // namespace maskprior
