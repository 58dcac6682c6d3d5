// Mean and sample standard deviation over seeds, skipping missing (NaN) values.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace maskprior::report {

struct Summary {
  double mean = NAN;
  double std = NAN;  // sample standard deviation; 0 for one value
  size_t n = 0;      // finite values
};

inline Summary summarize(const std::vector<double>& values) {
  Summary s;
  double sum = 0;
  for (double v : values) {
    if (std::isfinite(v)) {
      sum += v;
      ++s.n;
    }
  }
  if (s.n == 0) return s;
  s.mean = sum / static_cast<double>(s.n);
  double squares = 0;
  for (double v : values) {
    if (std::isfinite(v)) squares += (v - s.mean) * (v - s.mean);
  }
  s.std = s.n > 1 ? std::sqrt(squares / static_cast<double>(s.n - 1)) : 0.0;
  return s;
}

}  // namespace maskprior::report
