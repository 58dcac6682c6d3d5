// The result of compiling a .mask spec: raw logits M [L, H, N, N], provenance, hard mask, layout.
// This is the contract between the compiler, the tensor files, the validator and the runtime.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/layout.h"

namespace maskprior {

/// A compiled spec. Tensors are dense, row-major, float32/int32/uint8 as in
/// docs/language-reference.md, "Output".
struct CompiledMask {
  std::string name;           // from `mask NAME`
  std::string source_sha256;  // hex digest of the spec's bytes
  int64_t layers = 1;
  int64_t heads = 1;
  int64_t n = 0;  // tokens; equals layout.size()
  Layout layout;
  double open_value = 10.0;  // the values `open` / `close` wrote (after --open/--close)
  double close_value = -10.0;
  std::map<std::string, double> params;  // resolved parameter values

  std::vector<float> mask;  // [L, H, N, N]: M, row = query, column = key
  // [L, H, N, N]: 1-based source line of the last writer, 0 = default; empty when compiled
  // without it (CompileOptions::provenance = false)
  std::vector<int32_t> provenance;
  std::optional<std::vector<uint8_t>>
      hard;  // [N, N]: 1 = hard-excluded; present iff spec has `hard`

  std::vector<Diagnostic> warnings;  // compiler warnings (not saved in tensor files)

  size_t index(int64_t layer, int64_t head, int64_t q, int64_t k) const {
    return static_cast<size_t>(((layer * heads + head) * n + q) * n + k);
  }
  float at(int64_t layer, int64_t head, int64_t q, int64_t k) const {
    return mask[index(layer, head, q, k)];
  }
  bool is_hard(int64_t q, int64_t k) const {
    return hard.has_value() && (*hard)[static_cast<size_t>(q * n + k)] != 0;
  }
};

/// True when every cell above the diagonal (key after query) is hard-excluded, as `hard causal`
/// makes it: the spec of a causal decoder, whose row q predicts token q + 1.
bool is_causal(const CompiledMask& mask);

/// Throws InternalError unless the tensors have the sizes of [L, H, N, N] (mask; provenance, or
/// empty), [N, N] (hard) and the layout covers N tokens: the invariant every producer must keep.
void check_invariants(const CompiledMask& mask);

}  // namespace maskprior
