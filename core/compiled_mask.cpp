#include "core/compiled_mask.h"

namespace maskprior {

bool is_causal(const CompiledMask& mask) {
  if (!mask.hard) return mask.n <= 1;
  for (int64_t q = 0; q < mask.n; ++q) {
    for (int64_t k = q + 1; k < mask.n; ++k) {
      if (!mask.is_hard(q, k)) return false;
    }
  }
  return true;
}

void check_invariants(const CompiledMask& m) {
  const auto cells = static_cast<size_t>(m.layers * m.heads * m.n * m.n);
  internal_check(m.layers >= 1 && m.heads >= 1 && m.n >= 0, "mask has a non-positive shape");
  internal_check(m.mask.size() == cells, "mask tensor size does not match [L, H, N, N]");
  internal_check(m.provenance.empty() || m.provenance.size() == cells,
                 "provenance size does not match [L, H, N, N]");
  internal_check(!m.hard || m.hard->size() == static_cast<size_t>(m.n * m.n),
                 "hard mask size does not match [N, N]");
  internal_check(m.layout.size() == m.n, "layout size does not match N");
}

}  // namespace maskprior
