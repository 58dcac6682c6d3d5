#include "tasks/boolean_task.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <random>

#include "core/error.h"
#include "tasks/random.h"

namespace maskprior::tasks {
namespace {

constexpr int kMaxBits = 24;  // 2^24 cube points: the largest cube we enumerate

using Target = std::function<double(std::span<const int8_t>)>;
using Domain = std::function<bool(std::span<const int8_t>)>;

/// Distinct values of f over every assignment of `variables` (f ignores the other bits).
std::vector<double> values_over(const Target& f, int n, const std::vector<int>& variables) {
  std::vector<int8_t> x(static_cast<size_t>(n), 1);
  std::vector<double> values;
  const uint64_t count = uint64_t{1} << variables.size();
  for (uint64_t a = 0; a < count; ++a) {
    for (size_t i = 0; i < variables.size(); ++i) {
      x[static_cast<size_t>(variables[i])] = (a >> i & 1) ? -1 : 1;
    }
    values.push_back(f(x));
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

/// Values of Σ_i x_i x_{i+1} x_{i+2} (mod n): n − 2·popcount(w) with w_i = b_i ⊕ b_{i+1} ⊕ b_{i+2}.
std::vector<double> cyclic3_values(int n) {
  const uint64_t all = (uint64_t{1} << n) - 1;
  auto rotate = [&](uint64_t p, int s) { return ((p >> s) | (p << (n - s))) & all; };
  std::vector<bool> seen_count(static_cast<size_t>(n) + 1, false);
  for (uint64_t p = 0; p <= all; ++p) {
    seen_count[static_cast<size_t>(std::popcount(p ^ rotate(p, 1) ^ rotate(p, 2)))] = true;
  }
  std::vector<double> values;
  for (int k = n; k >= 0; --k) {
    if (seen_count[static_cast<size_t>(k)]) values.push_back(n - 2.0 * k);
  }
  return values;
}

BooleanTask make_task(std::string name, int n, std::vector<int> variables, Target target,
                      Domain seen, std::string description) {
  BooleanTask task;
  task.name = std::move(name);
  task.n = n;
  task.variables = std::move(variables);
  task.target = std::move(target);
  task.seen = std::move(seen);
  task.description = std::move(description);
  return task;
}

}  // namespace

Layout BooleanTask::layout() const {
  return make_layout({{"cls", 1}, {"x", n}});
}

std::vector<int8_t> BooleanTask::point(uint64_t p) const {
  std::vector<int8_t> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = (p >> i & 1) ? -1 : 1;
  return x;
}

double BooleanTask::nearest_value(double y) const {
  internal_check(!values.empty(), "task " + name + " has no values");
  double best = values.front();
  for (double v : values) {
    if (std::abs(v - y) < std::abs(best - y)) best = v;  // strict: ties keep the smaller value
  }
  return best;
}

std::vector<std::string> boolean_task_names() {
  return {"parity2", "maj3", "cyclic3", "threesym"};
}

bool is_boolean_task(const std::string& name) {
  const auto names = boolean_task_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

BooleanTask make_boolean_task(const std::string& name, int n) {
  if (!is_boolean_task(name)) {
    throw InputError(fmt::format("unknown Boolean task '{}' (known: {})", name,
                                 fmt::join(boolean_task_names(), ", ")));
  }
  const int min_bits = name == "parity2" ? 2 : 3;
  if (n < min_bits || n > kMaxBits) {
    throw InputError(
        fmt::format("task {}: n = {} is outside [{}, {}]", name, n, min_bits, kMaxBits));
  }
  BooleanTask task;
  if (name == "parity2") {
    task = make_task(
        name, n, {0, 1}, [](std::span<const int8_t> x) { return double(x[0] * x[1]); },
        [](std::span<const int8_t> x) { return x[0] == 1 || x[1] == 1; }, "x0·x1");
  } else if (name == "maj3") {
    task = make_task(
        name, n, {0, 1, 2},
        [](std::span<const int8_t> x) { return x[0] + x[1] + x[2] > 0 ? 1.0 : -1.0; },
        [](std::span<const int8_t> x) { return x[0] == 1 || x[1] == 1; }, "sign(x0 + x1 + x2)");
  } else if (name == "cyclic3") {
    std::vector<int> all(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
    task = make_task(
        name, n, all,
        [n](std::span<const int8_t> x) {
          const auto m = static_cast<size_t>(n);
          int sum = 0;
          for (size_t i = 0; i + 2 < m; ++i) sum += x[i] * x[i + 1] * x[i + 2];
          sum += x[m - 2] * x[m - 1] * x[0] + x[m - 1] * x[0] * x[1];  // the windows that wrap
          return double(sum);
        },
        [](std::span<const int8_t> x) { return x[0] == 1 || x[1] == 1 || x[2] == 1; },
        fmt::format("Σ_i x_i·x_(i+1)·x_(i+2) (indices mod {})", n));
    task.values = cyclic3_values(n);
  } else {  // threesym
    task = make_task(
        name, n, {0, 1, 2},
        [](std::span<const int8_t> x) {
          return x[0] * x[1] - 1.25 * x[1] * x[2] + 1.5 * x[2] * x[0];
        },
        [](std::span<const int8_t> x) { return x[0] * x[1] * x[2] == 1; },
        "x0·x1 − 1.25·x1·x2 + 1.5·x2·x0");
  }
  if (task.values.empty()) task.values = values_over(task.target, n, task.variables);
  return task;
}

BooleanDataset full_cube(const BooleanTask& task) {
  BooleanDataset data;
  data.n = task.n;
  const uint64_t points = uint64_t{1} << task.n;
  const size_t n = static_cast<size_t>(task.n);
  data.x.resize(points * n);
  data.y.resize(points);
  data.seen.resize(points);
  for (uint64_t p = 0; p < points; ++p) {
    std::span<int8_t> x(data.x.data() + p * n, n);
    for (size_t i = 0; i < n; ++i) x[i] = (p >> i & 1) ? -1 : 1;
    data.y[p] = static_cast<float>(task.target(x));
    data.seen[p] = task.seen(x) ? 1 : 0;
  }
  return data;
}

BooleanDataset training_set(const BooleanTask& task, uint64_t seed, bool every_point) {
  const BooleanDataset cube = full_cube(task);
  if (every_point) return cube;
  std::vector<uint64_t> seen_points;
  for (uint64_t p = 0; p < cube.rows(); ++p) {
    if (cube.seen[p]) seen_points.push_back(p);
  }
  std::vector<uint64_t> rows = seen_points;
  if (task.name == "maj3") {
    // docs/paper.md: maj3 trains on 2^n seen points drawn with replacement.
    std::mt19937_64 rng(seed);
    rows.resize(cube.rows());
    for (uint64_t& r : rows) r = seen_points[uniform_below(rng, seen_points.size())];
  }
  BooleanDataset data;
  data.n = cube.n;
  const size_t n = static_cast<size_t>(cube.n);
  data.x.reserve(rows.size() * n);
  for (uint64_t p : rows) {
    data.x.insert(data.x.end(), cube.x.begin() + static_cast<std::ptrdiff_t>(p * n),
                  cube.x.begin() + static_cast<std::ptrdiff_t>((p + 1) * n));
    data.y.push_back(cube.y[p]);
    data.seen.push_back(1);
  }
  return data;
}

}  // namespace maskprior::tasks
