#include "core/cells.h"

#include <fmt/format.h>

#include <cmath>

#include "core/error.h"

namespace maskprior {

void check_finite_cells(const CompiledMask& mask, const std::string& source) {
  for (int64_t l = 0; l < mask.layers; ++l) {
    for (int64_t h = 0; h < mask.heads; ++h) {
      for (int64_t q = 0; q < mask.n; ++q) {
        for (int64_t k = 0; k < mask.n; ++k) {
          const float v = mask.mask[mask.index(l, h, q, k)];
          if (mask.is_hard(q, k) || std::isfinite(v)) continue;
          throw InputError(fmt::format(
              "{}: the cell of layer {}, head {}, query {}, key {} is {}: a mask that is not "
              "finite is neither open nor closed there (a diverged run?)",
              source, l, h, mask.layout.token_label(q), mask.layout.token_label(k),
              std::isnan(v) ? "nan" : fmt::format("{}", v)));
        }
      }
    }
  }
}

CellClass classify_cell(const CompiledMask& mask, int64_t layer, int64_t head, int64_t q,
                        int64_t k) {
  if (mask.is_hard(q, k)) return CellClass::kHard;
  const float v = mask.at(layer, head, q, k);
  if (v == static_cast<float>(mask.open_value)) return CellClass::kOpen;
  if (v == static_cast<float>(mask.close_value)) return CellClass::kClosed;
  return CellClass::kOther;
}

bool leans_open(const CompiledMask& mask, double value) {
  const double midpoint = 0.5 * (mask.open_value + mask.close_value);
  return mask.open_value >= mask.close_value ? value > midpoint : value < midpoint;
}

bool leans_closed(const CompiledMask& mask, double value) {
  const double midpoint = 0.5 * (mask.open_value + mask.close_value);
  return mask.open_value >= mask.close_value ? value < midpoint : value > midpoint;
}

std::vector<uint8_t> open_pattern(const CompiledMask& mask) {
  check_invariants(mask);
  check_finite_cells(mask, fmt::format("mask '{}'", mask.name));
  std::vector<uint8_t> pattern(mask.mask.size(), 0);
  for (int64_t l = 0; l < mask.layers; ++l) {
    for (int64_t h = 0; h < mask.heads; ++h) {
      for (int64_t q = 0; q < mask.n; ++q) {
        for (int64_t k = 0; k < mask.n; ++k) {
          const size_t i = mask.index(l, h, q, k);
          pattern[i] = !mask.is_hard(q, k) && leans_open(mask, mask.mask[i]) ? 1 : 0;
        }
      }
    }
  }
  return pattern;
}

}  // namespace maskprior
