// What each output of a truth table depends on.
#pragma once

#include <vector>

#include "tasks/truth_table.h"
#include "validate/walsh.h"

namespace maskprior::validate {

struct OutputDependencies {
  std::vector<size_t> inputs;     // indices into TruthTable::inputs, ascending
  bool has_spectrum = false;      // the table is a complete Boolean cube
  std::vector<Monomial> support;  // Fourier support (when has_spectrum), by degree
};

/// Per output: its Walsh–Fourier support and variables on a complete Boolean cube; otherwise the
/// inputs for which two rows differing only in that input have different outputs.
/// `check_cancelled`, when set, is called before each output's spectrum; what it throws stops it.
std::vector<OutputDependencies> analyze_dependencies(
    const tasks::TruthTable& table, const std::function<void()>& check_cancelled = {});

/// |values| below this, relative to the largest |value| (at least 1), count as zero.
double zero_tolerance(const std::vector<double>& values);

}  // namespace maskprior::validate
