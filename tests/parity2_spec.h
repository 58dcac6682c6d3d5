// The parity2 mask of specs/gotu/parity2.mask, built by hand for the runtime and train tests.
#pragma once

#include <cstdint>

#include "core/compiled_mask.h"

namespace maskprior::testing {

/// The parity2 spec of specs/gotu/parity2.mask on n bits, built by hand: diagonal, cls → x0, x1,
/// x0 ↔ x1 open (+10), everything else closed (−10).
CompiledMask parity2_spec(int n, int64_t layers = 1, int64_t heads = 1) {
  CompiledMask spec;
  spec.name = "parity2";
  spec.n = 1 + n;
  spec.layers = layers;
  spec.heads = heads;
  spec.layout.spans = {{"cls", 0, 1, std::nullopt, std::nullopt},
                       {"x", 1, n, std::nullopt, std::nullopt}};
  spec.params = {{"n", n}};
  const auto cells = static_cast<size_t>(layers * heads * spec.n * spec.n);
  spec.mask.assign(cells, -10.0f);
  spec.provenance.assign(cells, 0);
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      auto open = [&](int64_t q, int64_t k) { spec.mask[spec.index(l, h, q, k)] = 10.0f; };
      for (int64_t t = 0; t < spec.n; ++t) open(t, t);
      open(0, 1);
      open(0, 2);
      open(1, 2);
      open(2, 1);
    }
  }
  return spec;
}

}  // namespace maskprior::testing
