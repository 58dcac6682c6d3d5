// Seeded randomness that gives the same numbers on every platform and standard library.
// std::mt19937_64 is fully specified by the standard; the distributions (and std::shuffle) are
// not, so the mapping from engine output to a range, and the shuffles, are written out here.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace maskprior::tasks {

/// A uniform integer in [0, bound) by rejection sampling (no modulo bias); bound must be > 0.
inline uint64_t uniform_below(std::mt19937_64& rng, uint64_t bound) {
  // Accept draws below the largest multiple of `bound` that fits in 2^64.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t draw = rng();
  while (draw >= limit) draw = rng();
  return draw % bound;
}

/// One Fisher–Yates step: swaps items[slot] with an item drawn uniformly from items[first, last)
/// (first < last; the draw may be `slot` itself).
template <class T>
void swap_with_uniform(std::vector<T>& items, size_t slot, size_t first, size_t last,
                       std::mt19937_64& rng) {
  using std::swap;
  swap(items[slot], items[first + static_cast<size_t>(uniform_below(rng, last - first))]);
}

/// A uniformly random permutation of `items` (Fisher–Yates from the back: slot i, from the last
/// down to 1, swaps with a uniform slot in [0, i]). One draw per slot i ≥ 1.
template <class T>
void shuffle_in_place(std::vector<T>& items, std::mt19937_64& rng) {
  for (size_t i = items.size(); i-- > 1;) swap_with_uniform(items, i, 0, i + 1, rng);
}

/// A partial Fisher–Yates from the front: afterwards items[0, count) is a uniform sample without
/// replacement, in random order, and the rest holds the unpicked items. One draw per picked slot.
/// Unlike shuffle_in_place it stops after `count` draws, which sampling a few of many items needs
/// (arithmetic splits pick thousands of a million problems); count ≤ items.size().
template <class T>
void shuffle_prefix(std::vector<T>& items, size_t count, std::mt19937_64& rng) {
  for (size_t i = 0; i < count; ++i) swap_with_uniform(items, i, i, items.size(), rng);
}

/// `count` rows of [0, total): all, in order, when count is 0 or ≥ total; else a seeded sample
/// without replacement, sorted (subsets of a training set: vision, language).
inline std::vector<int64_t> sample_rows(int64_t total, int64_t count, uint64_t seed) {
  std::vector<int64_t> rows(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) rows[static_cast<size_t>(i)] = i;
  if (count <= 0 || count >= total) return rows;
  std::mt19937_64 engine(seed);
  shuffle_prefix(rows, static_cast<size_t>(count), engine);
  rows.resize(static_cast<size_t>(count));
  std::sort(rows.begin(), rows.end());
  return rows;
}

/// The first `count` (all when count ≥ total) of [0, total) shuffled whole with `seed`, in that
/// order: a fixed probe batch (Boolean tasks, truth tables, sequence files).
inline std::vector<int64_t> shuffled_rows(int64_t total, int64_t count, uint64_t seed) {
  std::vector<int64_t> rows(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) rows[static_cast<size_t>(i)] = i;
  std::mt19937_64 engine(seed);
  shuffle_in_place(rows, engine);
  rows.resize(static_cast<size_t>(std::min(count, total)));
  return rows;
}

/// `count` evenly spaced rows of [0, total) (all when count ≥ total): a fixed test subset.
inline std::vector<int64_t> spaced_rows(int64_t total, int64_t count) {
  const int64_t n = std::min(count, total);
  std::vector<int64_t> rows;
  for (int64_t i = 0; i < n; ++i) rows.push_back(i * total / n);
  return rows;
}

}  // namespace maskprior::tasks
