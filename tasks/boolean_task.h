// Boolean "generalization on the unseen" (GOTU) tasks of the paper (docs/paper.md).
// Inputs x ∈ {±1}^n; a CLS token is prepended, so the layout is `cls, x[n]` (N = 1 + n).
//
// Cube indexing convention (used everywhere): point p ∈ [0, 2^n) has x_i = 1 - 2·bit_i(p),
// i.e. bit 0 ↔ +1 and bit 1 ↔ −1; p = 0 is the all-(+1) point.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/layout.h"

namespace maskprior::tasks {

struct BooleanTask {
  std::string name;            // parity2, maj3, cyclic3, threesym
  int n = 15;                  // number of input bits
  std::vector<int> variables;  // the input indices f depends on (Fourier analysis is over these)
  std::vector<double> values;  // every value f can take, ascending (accuracy rounds to these)
  std::function<double(std::span<const int8_t>)> target;  // f(x), x ∈ {±1}^n
  std::function<bool(std::span<const int8_t>)> seen;      // training domain
  std::string description;                                // formula, for reports

  /// `cls, x[n]`.
  Layout layout() const;
  /// x of cube point p (see the indexing convention above).
  std::vector<int8_t> point(uint64_t p) const;
  /// The attainable value nearest to y (ties go to the smaller value).
  double nearest_value(double y) const;
};

/// Names of the built-in Boolean tasks.
std::vector<std::string> boolean_task_names();
/// True if `name` is a built-in Boolean task.
bool is_boolean_task(const std::string& name);
/// The task called `name` on n bits. Throws InputError for an unknown name or n too small.
BooleanTask make_boolean_task(const std::string& name, int n = 15);

/// Rows of ±1 inputs with real targets, row-major [rows, n].
struct BooleanDataset {
  int n = 0;
  std::vector<int8_t> x;      // rows * n
  std::vector<float> y;       // rows
  std::vector<uint8_t> seen;  // rows; 1 if the point is in the seen domain
  size_t rows() const { return y.size(); }
};

/// Every point of the cube, in index order.
BooleanDataset full_cube(const BooleanTask& task);
/// The training set: every seen point (maj3: 2^n seen points sampled with replacement, seeded);
/// with `every_point`, every point of the cube once (nothing unseen; maj3 too), each marked seen
/// or not as in the cube.
BooleanDataset training_set(const BooleanTask& task, uint64_t seed, bool every_point = false);

}  // namespace maskprior::tasks
