#include "validate/mdi.h"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <string>

#include "core/error.h"
#include "validate/dependencies.h"

namespace maskprior::validate {
namespace {

constexpr size_t kMaxMonomials = 1500;     // larger Gram matrices take too long to decompose
constexpr double kRankTolerance = 1e-9;    // relative to the largest eigen/singular value
constexpr double kSnapGrid = 1e-9;         // decimal grid reported coefficients are rounded to
constexpr double kExactTolerance = 1e-6;   // |MDI(x) − f(x)| counted as an exact match
constexpr double kScreenTolerance = 1e-8;  // relative squared residual that surely is no fit
constexpr double kFitTolerance = 1e-7;     // relative interpolation error still counted as exact

/// Bit set of the variables some monomial of `spectrum`'s support uses.
uint64_t support_variables(const std::vector<double>& values) {
  uint64_t used = 0;
  for (const Monomial& m : spectrum_support(walsh_spectrum(values), zero_tolerance(values))) {
    used |= m.variables;
  }
  return used;
}

/// Every subset of `variables` with at most `degree` elements, ordered by size.
std::vector<uint64_t> monomials_up_to(uint64_t variables, int degree) {
  std::vector<uint64_t> result;
  // Walk every sub-mask of `variables`, down to the empty set.
  for (uint64_t s = variables;; s = (s - 1) & variables) {
    if (std::popcount(s) <= degree) result.push_back(s);
    if (s == 0) break;
  }
  std::sort(result.begin(), result.end(), [](uint64_t a, uint64_t b) {
    const int da = std::popcount(a), db = std::popcount(b);
    return da != db ? da < db : a < b;
  });
  return result;
}

/// Count of subsets of a k-set with at most d elements (saturating).
size_t count_up_to(int k, int d) {
  size_t total = 0, binomial = 1;
  for (int j = 0; j <= d; ++j) {
    total += binomial;
    if (total > kMaxMonomials) return total;
    binomial = binomial * static_cast<size_t>(k - j) / static_cast<size_t>(j + 1);
  }
  return total;
}

/// Basis of the null space of a symmetric positive semi-definite matrix and its pseudo-inverse
/// applied to `rhs`.
struct Solved {
  Eigen::VectorXd solution;
  Eigen::MatrixXd null_space;
};

Solved solve_symmetric(const Eigen::MatrixXd& gram, const Eigen::VectorXd& rhs) {
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(gram);
  const Eigen::VectorXd& lambda = eigen.eigenvalues();
  const Eigen::MatrixXd& vectors = eigen.eigenvectors();
  const double cutoff = kRankTolerance * std::max(lambda.cwiseAbs().maxCoeff(), 1.0);
  Solved solved;
  solved.solution = Eigen::VectorXd::Zero(rhs.size());
  std::vector<Eigen::Index> null_columns;
  for (Eigen::Index i = 0; i < lambda.size(); ++i) {
    if (lambda[i] > cutoff) {
      solved.solution += vectors.col(i) * (vectors.col(i).dot(rhs) / lambda[i]);
    } else {
      null_columns.push_back(i);
    }
  }
  solved.null_space.resize(gram.rows(), static_cast<Eigen::Index>(null_columns.size()));
  for (size_t c = 0; c < null_columns.size(); ++c) {
    solved.null_space.col(static_cast<Eigen::Index>(c)) = vectors.col(null_columns[c]);
  }
  return solved;
}

/// g on the whole cube from coefficients over `monomials`.
std::vector<double> evaluate(const std::vector<uint64_t>& monomials, const Eigen::VectorXd& x,
                             size_t cube_size) {
  std::vector<double> coefficients(cube_size, 0.0);
  for (size_t m = 0; m < monomials.size(); ++m) {
    coefficients[monomials[m]] = x[static_cast<Eigen::Index>(m)];
  }
  return evaluate_on_cube(coefficients);
}

/// Lexicographic minimisation: for degree j = d, d−1, …, 0 minimise the weight of the degree-j
/// coefficients over x + N·z, then keep only the z that attain the minimum.
Eigen::VectorXd minimise_degree_profile(const std::vector<uint64_t>& monomials, int degree,
                                        Eigen::VectorXd x, Eigen::MatrixXd null_space) {
  for (int j = degree; j >= 0 && null_space.cols() > 0; --j) {
    std::vector<Eigen::Index> rows;
    for (size_t m = 0; m < monomials.size(); ++m) {
      if (std::popcount(monomials[m]) == j) rows.push_back(static_cast<Eigen::Index>(m));
    }
    Eigen::MatrixXd block(static_cast<Eigen::Index>(rows.size()), null_space.cols());
    Eigen::VectorXd target(static_cast<Eigen::Index>(rows.size()));
    for (size_t r = 0; r < rows.size(); ++r) {
      block.row(static_cast<Eigen::Index>(r)) = null_space.row(rows[r]);
      target[static_cast<Eigen::Index>(r)] = x[rows[r]];
    }
    Eigen::JacobiSVD<Eigen::MatrixXd> svd(block, Eigen::ComputeThinU | Eigen::ComputeFullV);
    svd.setThreshold(kRankTolerance);  // relative to the largest singular value
    const Eigen::VectorXd z = svd.solve(-target);
    x += null_space * z;
    const Eigen::Index rank = svd.rank();
    null_space = null_space * svd.matrixV().rightCols(null_space.cols() - rank);
  }
  return x;
}

/// Why no MDI can be computed for `table`, or "" when it can.
std::string unavailable_reason(const tasks::TruthTable& table) {
  if (!table.cube) return "needs Boolean inputs covering the whole cube";
  if (!table.has_seen()) return "needs a seen domain (a `seen` column)";
  if (std::find(table.seen.begin(), table.seen.end(), 1) == table.seen.end()) {
    return "the seen domain is empty";
  }
  return "";
}

/// What every degree's fit needs: f, the seen domain's spectra and the tolerances.
struct SeenFit {
  const tasks::TruthTable& table;
  const std::vector<double>& f;
  uint64_t relevant = 0;              // variables f or the seen domain depends on
  std::vector<double> seen_spectrum;  // Σ_seen χ_U, unnormalised
  std::vector<double> moments;        // Σ_seen f·χ_S
  double seen_f_squared = 0.0;        // Σ_seen f²
  double fit_tolerance = 0.0;

  SeenFit(const tasks::TruthTable& t, size_t output) : table(t), f(t.y[output]) {
    const size_t cube_size = f.size();
    std::vector<double> seen(cube_size), seen_f(cube_size);
    for (size_t p = 0; p < cube_size; ++p) {
      seen[p] = table.seen[p];
      seen_f[p] = table.seen[p] ? f[p] : 0.0;
    }
    // Variables neither f nor the seen domain depends on cannot lower the degree profile.
    relevant = support_variables(f) | support_variables(seen);
    seen_spectrum = seen;
    fast_walsh_hadamard(seen_spectrum);
    moments = seen_f;
    fast_walsh_hadamard(moments);
    double largest = 1.0;
    for (double v : f) largest = std::max(largest, std::abs(v));
    fit_tolerance = kFitTolerance * largest;
    for (double v : seen_f) seen_f_squared += v * v;
  }
};

/// The coefficients over `monomials` (all of degree ≤ d) of the interpolant with the least degree
/// profile, or nothing when no combination of them interpolates f on the seen points.
std::optional<Eigen::VectorXd> interpolate(const SeenFit& fit,
                                           const std::vector<uint64_t>& monomials, int d) {
  const auto m = static_cast<Eigen::Index>(monomials.size());
  Eigen::MatrixXd gram(m, m);
  Eigen::VectorXd rhs(m);
  for (Eigen::Index a = 0; a < m; ++a) {
    rhs[a] = fit.moments[monomials[static_cast<size_t>(a)]];
    for (Eigen::Index b = 0; b < m; ++b) {
      gram(a, b) =
          fit.seen_spectrum[monomials[static_cast<size_t>(a)] ^ monomials[static_cast<size_t>(b)]];
    }
  }
  const Solved solved = solve_symmetric(gram, rhs);
  // Σ_seen (g − f)² = xᵀGx − 2xᵀc + Σ_seen f²: a cheap screen before the exact check on the cube.
  const double squared_residual = solved.solution.dot(gram * solved.solution) -
                                  2.0 * solved.solution.dot(rhs) + fit.seen_f_squared;
  if (squared_residual > kScreenTolerance * std::max(1.0, fit.seen_f_squared)) return std::nullopt;
  const std::vector<double> g = evaluate(monomials, solved.solution, fit.f.size());
  for (size_t p = 0; p < fit.f.size(); ++p) {
    if (fit.table.seen[p] && std::abs(g[p] - fit.f[p]) > fit.fit_tolerance) return std::nullopt;
  }
  return minimise_degree_profile(monomials, d, solved.solution, solved.null_space);
}

/// Counts the points where `prediction`, rounded to the nearest value the output takes (ties to
/// the smaller), equals f, and where it equals f without rounding.
void score(MinDegreeInterpolator& mdi, const SeenFit& fit, const std::vector<double>& values,
           const std::vector<double>& prediction) {
  for (size_t p = 0; p < prediction.size(); ++p) {
    const auto above = std::lower_bound(values.begin(), values.end(), prediction[p]);
    double nearest = above == values.end() ? values.back() : *above;
    if (above != values.begin() &&
        std::abs(*(above - 1) - prediction[p]) <= std::abs(nearest - prediction[p])) {
      nearest = *(above - 1);
    }
    const bool correct = nearest == fit.f[p];
    ++mdi.points;
    mdi.correct += correct;
    mdi.exact += std::abs(prediction[p] - fit.f[p]) <= kExactTolerance;
    if (!fit.table.seen[p]) {
      ++mdi.unseen_points;
      mdi.unseen_correct += correct;
    }
  }
}

}  // namespace

MinDegreeInterpolator min_degree_interpolator(const tasks::TruthTable& table, size_t output) {
  MinDegreeInterpolator mdi;
  mdi.unavailable = unavailable_reason(table);
  if (!mdi.unavailable.empty()) return mdi;
  const SeenFit fit(table, output);
  const int variables = std::popcount(fit.relevant);
  for (int d = 0; d <= variables; ++d) {
    if (count_up_to(variables, d) > kMaxMonomials) {
      mdi.unavailable = fmt::format("more than {} monomials of degree ≤ {} over {} variables",
                                    kMaxMonomials, d, variables);
      return mdi;
    }
    const std::vector<uint64_t> monomials = monomials_up_to(fit.relevant, d);
    const std::optional<Eigen::VectorXd> x = interpolate(fit, monomials, d);
    if (!x) continue;
    mdi.degree = d;
    for (size_t i = 0; i < monomials.size(); ++i) {
      const double c = (*x)[static_cast<Eigen::Index>(i)];
      // Snap away the solver's rounding noise (−0.9999999999999996 → −1).
      const double snapped = std::round(c / kSnapGrid) * kSnapGrid;
      if (std::abs(c) > fit.fit_tolerance) mdi.coefficients.push_back({monomials[i], snapped});
    }
    score(mdi, fit, table.values[output], evaluate(monomials, *x, fit.f.size()));
    return mdi;
  }
  internal_check(false, "no interpolant up to full degree");  // f itself interpolates
  return mdi;
}

}  // namespace maskprior::validate
