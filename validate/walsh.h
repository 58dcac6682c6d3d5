// Walsh–Fourier analysis of functions on the Boolean cube {±1}^n (cube order of
// tasks/boolean_task.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace maskprior::validate {

/// In place, unnormalised fast Walsh–Hadamard transform: a[S] ← Σ_p a[p]·(−1)^|p∧S|.
/// Applied twice it multiplies by 2^n. Size must be a power of two. Parallel (oneTBB).
void fast_walsh_hadamard(std::span<double> a);

/// Fourier coefficients f̂(S) = 2^−n Σ_x f(x)·Π_{i∈S} x_i, indexed by the bit set S.
std::vector<double> walsh_spectrum(std::span<const double> f);

/// Values Σ_S ĝ(S)·χ_S(x) at every cube point, from coefficients indexed by bit set.
std::vector<double> evaluate_on_cube(std::span<const double> coefficients);

/// One monomial χ_S with its coefficient.
struct Monomial {
  uint64_t variables = 0;  // bit i set ↔ x_i in the product
  double coefficient = 0;
};

/// The monomials whose |coefficient| exceeds `tolerance`, ordered by degree, then by bit set.
std::vector<Monomial> spectrum_support(std::span<const double> spectrum, double tolerance);

}  // namespace maskprior::validate
