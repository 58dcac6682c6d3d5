// Seeded randomness that gives the same numbers on every platform and standard library.
// std::mt19937_64 is fully specified by the standard; the distributions are not, so the mapping
// from engine output to a range is written out here.
#pragma once

#include <cstdint>
#include <random>

namespace maskprior::tasks {

/// A uniform integer in [0, bound) by rejection sampling (no modulo bias); bound must be > 0.
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  // Accept draws below the largest multiple of `bound` that fits in 2^64.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return draw % bound;
}

}  // namespace maskprior::tasks
