#include "validate/dependencies.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

namespace maskprior::validate {
namespace {

constexpr double kRelativeTolerance = 1e-9;

/// Spectrum route: an output depends on x_i iff some support monomial contains x_i.
OutputDependencies cube_dependencies(const std::vector<double>& column, size_t inputs) {
  OutputDependencies deps;
  deps.has_spectrum = true;
  const std::vector<double> spectrum = walsh_spectrum(column);
  deps.support = spectrum_support(spectrum, zero_tolerance(column));
  uint64_t used = 0;
  for (const Monomial& m : deps.support) used |= m.variables;
  for (size_t i = 0; i < inputs; ++i) {
    if (used >> i & 1) deps.inputs.push_back(i);
  }
  return deps;
}

/// Per input column: the code of each row's value (index among the column's distinct values).
struct CodedInputs {
  std::vector<std::vector<uint32_t>> codes;  // per input, per row
  std::vector<uint64_t> radix;               // mixed-radix place value of each input
  bool fits_u64 = true;                      // Π alphabet sizes < 2^63: keys are integers
};

CodedInputs code_inputs(const tasks::TruthTable& table) {
  CodedInputs coded;
  const size_t rows = static_cast<size_t>(table.rows);
  uint64_t place = 1;
  for (size_t i = 0; i < table.inputs.size(); ++i) {
    std::vector<double> column(rows);
    for (size_t r = 0; r < rows; ++r) column[r] = table.input(static_cast<int64_t>(r), i);
    std::vector<double> alphabet = column;
    std::sort(alphabet.begin(), alphabet.end());
    alphabet.erase(std::unique(alphabet.begin(), alphabet.end()), alphabet.end());
    std::vector<uint32_t> codes(rows);
    for (size_t r = 0; r < rows; ++r) {
      codes[r] = static_cast<uint32_t>(
          std::lower_bound(alphabet.begin(), alphabet.end(), column[r]) - alphabet.begin());
    }
    coded.codes.push_back(std::move(codes));
    coded.radix.push_back(place);
    if (place > (uint64_t{1} << 62) / alphabet.size()) coded.fits_u64 = false;
    place *= coded.fits_u64 ? alphabet.size() : 1;
  }
  return coded;
}

/// Which outputs change between two rows that differ only in input `i`.
template <class Key, class MakeKey>
std::vector<bool> outputs_sensitive_to(const tasks::TruthTable& table, MakeKey make_key) {
  std::vector<bool> sensitive(table.outputs.size(), false);
  std::unordered_map<Key, int64_t> first_row_of_group;
  first_row_of_group.reserve(static_cast<size_t>(table.rows));
  for (int64_t r = 0; r < table.rows; ++r) {
    const auto [it, inserted] = first_row_of_group.emplace(make_key(r), r);
    if (inserted) continue;
    for (size_t o = 0; o < table.outputs.size(); ++o) {
      if (table.y[o][static_cast<size_t>(r)] != table.y[o][static_cast<size_t>(it->second)]) {
        sensitive[o] = true;
      }
    }
  }
  return sensitive;
}

std::vector<OutputDependencies> enumerated_dependencies(const tasks::TruthTable& table) {
  const CodedInputs coded = code_inputs(table);
  const size_t inputs = table.inputs.size();
  std::vector<std::vector<bool>> sensitive(inputs);
  tbb::parallel_for(size_t{0}, inputs, [&](size_t i) {
    // Rows in one group agree on every input but i.
    if (coded.fits_u64) {
      sensitive[i] = outputs_sensitive_to<uint64_t>(table, [&](int64_t r) {
        uint64_t key = 0;
        for (size_t j = 0; j < inputs; ++j) {
          if (j != i) key += coded.codes[j][static_cast<size_t>(r)] * coded.radix[j];
        }
        return key;
      });
    } else {
      sensitive[i] = outputs_sensitive_to<std::string>(table, [&](int64_t r) {
        std::string key;
        for (size_t j = 0; j < inputs; ++j) {
          const uint32_t code = j == i ? 0 : coded.codes[j][static_cast<size_t>(r)];
          key.append(reinterpret_cast<const char*>(&code), sizeof code);
        }
        return key;
      });
    }
  });
  std::vector<OutputDependencies> deps(table.outputs.size());
  for (size_t o = 0; o < deps.size(); ++o) {
    for (size_t i = 0; i < inputs; ++i) {
      if (sensitive[i][o]) deps[o].inputs.push_back(i);
    }
  }
  return deps;
}

}  // namespace

double zero_tolerance(const std::vector<double>& values) {
  double largest = 1.0;
  for (double v : values) largest = std::max(largest, std::abs(v));
  return kRelativeTolerance * largest;
}

std::vector<OutputDependencies> analyze_dependencies(const tasks::TruthTable& table,
                                                     const std::function<void()>& check_cancelled) {
  if (!table.cube) return enumerated_dependencies(table);
  std::vector<OutputDependencies> deps;
  for (const auto& column : table.y) {
    if (check_cancelled) check_cancelled();
    deps.push_back(cube_dependencies(column, table.inputs.size()));
  }
  return deps;
}

}  // namespace maskprior::validate
