// Your own Boolean function (docs/your-data.md): a truth table (tasks/truth_table.h, the
// CSV that `maskc validate --truth-table` reads) trained like the GOTU tasks: the readout token 0
// (cls) → one real number, MSE on the rows marked seen, evaluated over every row with the GOTU
// metrics (boolean_metrics in runtime/experiment.h).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/layout.h"
#include "runtime/experiment.h"
#include "tasks/truth_table.h"

namespace maskprior::runtime {

/// A truth table bound to a spec's tokens: what a truth-table run learns.
struct TruthTableTask {
  tasks::TruthTable table;            // exactly one output
  Layout layout;                      // the spec's layout; token 0 is the readout (cls)
  std::vector<int64_t> input_tokens;  // per input column: its token (every token but 0, once)
  /// Index sets T (into table.inputs) whose coefficient mean(ŷ·χ_T) evaluate reports under
  /// "fourier" (only for a table that is the whole ±1 cube).
  std::vector<std::vector<int>> fourier_sets;
};

/// The experiment of a truth-table run. Token ids: the distinct input values of the table, sorted
/// (ids 0, 1, ...; ±1 inputs give −1 → 0 and +1 → 1, as for the built-in Boolean tasks), then the
/// readout token. Training rows: those marked seen (every row if the table has no `seen` column),
/// in table order. Metrics: boolean_metrics over every row. Throws InputError if the binding is
/// inconsistent (not one output, token 0 an input, a token without a column) or no row is seen.
std::unique_ptr<Experiment> make_truth_table_experiment(TruthTableTask task);

}  // namespace maskprior::runtime
