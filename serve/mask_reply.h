// The binary reply that carries one (layer, head) of a mask to the page: far smaller and faster
// to read than JSON numbers (a 1,024-token head is 4 MiB of float32, not 10 MiB of text).
//   u32 (little-endian) header length | header JSON | spaces to a multiple of 4 bytes |
//   float32 M [N, N] | int32 provenance [N, N] (when `has_provenance`) | uint8 hard [N, N]
//   (when `hard`)
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "core/compiled_mask.h"

namespace maskprior::serve {

/// The header: name, layers, heads, n, layer, head, labels, spans (with grids), params, open,
/// close, causal, hard, has_provenance, warnings (formatted diagnostics).
nlohmann::json mask_header(const CompiledMask& mask, int64_t layer, int64_t head);

/// The reply body for (layer, head) of `mask` with `header` (mask_header and more).
std::string mask_reply_body(const CompiledMask& mask, int64_t layer, int64_t head,
                            const nlohmann::json& header);

}  // namespace maskprior::serve
