#include "validate/walsh.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/error.h"

namespace maskprior::validate {
namespace {

constexpr size_t kSerialBelow = size_t{1} << 14;  // small transforms are not worth threads
constexpr size_t kCacheBlock = size_t{1} << 12;   // 32 KiB of doubles

/// One butterfly stage: pairs (i, i + half) inside blocks of 2·half.
void butterfly_range(double* a, size_t half, size_t begin, size_t end) {
  for (size_t k = begin; k < end; ++k) {
    // k enumerates the size/2 pairs; insert a zero bit at `half` to get the pair's lower index.
    const size_t i = ((k & ~(half - 1)) << 1) | (k & (half - 1));
    const double u = a[i];
    const double v = a[i + half];
    a[i] = u + v;
    a[i + half] = u - v;
  }
}

}  // namespace

void fast_walsh_hadamard(std::span<double> a) {
  const size_t size = a.size();
  internal_check(std::has_single_bit(size), "Walsh–Hadamard transform of a non-power-of-two size");
  // Stages with half < block stay inside one cache-sized block: run them block by block, so the
  // whole array is swept once for them instead of once per stage.
  const size_t block = std::min(size, kCacheBlock);
  auto small_stages = [&](size_t first_block, size_t last_block) {
    for (size_t b = first_block; b < last_block; ++b) {
      for (size_t half = 1; half < block; half *= 2) {
        butterfly_range(a.data() + b * block, half, 0, block / 2);
      }
    }
  };
  const size_t blocks = size / block;
  if (size < kSerialBelow) {
    small_stages(0, blocks);
  } else {
    tbb::parallel_for(
        tbb::blocked_range<size_t>(0, blocks),
        [&](const tbb::blocked_range<size_t>& r) { small_stages(r.begin(), r.end()); });
  }
  for (size_t half = block; half < size; half *= 2) {
    tbb::parallel_for(tbb::blocked_range<size_t>(0, size / 2, 4096),
                      [&](const tbb::blocked_range<size_t>& r) {
                        butterfly_range(a.data(), half, r.begin(), r.end());
                      });
  }
}

std::vector<double> walsh_spectrum(std::span<const double> f) {
  std::vector<double> spectrum(f.begin(), f.end());
  fast_walsh_hadamard(spectrum);
  const double scale = 1.0 / static_cast<double>(spectrum.size());
  for (double& c : spectrum) c *= scale;
  return spectrum;
}

std::vector<double> evaluate_on_cube(std::span<const double> coefficients) {
  std::vector<double> values(coefficients.begin(), coefficients.end());
  fast_walsh_hadamard(values);
  return values;
}

std::vector<Monomial> spectrum_support(std::span<const double> spectrum, double tolerance) {
  std::vector<Monomial> support;
  for (size_t s = 0; s < spectrum.size(); ++s) {
    if (std::abs(spectrum[s]) > tolerance) support.push_back({s, spectrum[s]});
  }
  std::stable_sort(support.begin(), support.end(), [](const Monomial& a, const Monomial& b) {
    return std::popcount(a.variables) < std::popcount(b.variables);
  });
  return support;
}

}  // namespace maskprior::validate
