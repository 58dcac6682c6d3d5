// Truth tables: a target function written out row by row, from a built-in task or a CSV file.
// The validator (validate/) reads these to find what each output depends on.
//
// CSV format (`maskc validate --truth-table FILE.csv`):
//   - the first line that is neither empty nor a `#` comment is the header;
//   - `y`, or `y0, y1, ...` (also `y[0]`): output columns, in header order;
//   - `seen` (optional): 1 if the row belongs to the training domain, 0 otherwise;
//   - every other column is an input, named after a token of the spec (`x0` or `x[0]`, `cls`, ...);
//   - values are numbers; a row repeated with the same outputs is ignored, with different outputs
//     it is an error;
//   - the file is UTF-8 text (a leading byte-order mark is ignored), comma-separated, names and
//     values without quotes.
// Boolean inputs: if every input value is ±1 (or every input value is 0/1, read as 0 → −1, 1 → +1)
// and the rows cover the whole cube, the table is stored in cube order (tasks/boolean_task.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "tasks/arithmetic_task.h"
#include "tasks/boolean_task.h"

namespace maskprior::tasks {

struct TruthTable {
  std::string source;                // task name or CSV path, for messages
  std::vector<std::string> inputs;   // input names (`x0`, `a[2]`, ...)
  std::vector<std::string> outputs;  // output names (`y`, `c[0]`, ...)
  int64_t rows = 0;
  /// True when the inputs are Boolean and the rows are the whole cube {±1}^inputs in cube order
  /// (row p has x_i = 1 − 2·bit_i(p)); `x` is then left empty.
  bool cube = false;
  bool zero_one_inputs = false;             // CSV inputs were 0/1 and were read as ±1
  std::vector<double> x;                    // rows × inputs, row-major (empty when `cube`)
  std::vector<std::vector<double>> y;       // per output, per row
  std::vector<uint8_t> seen;                // per row; empty when there is no seen domain
  std::vector<std::vector<double>> values;  // per output: every value it takes, ascending
  // A CSV table's header, for errors about its columns (0 and empty for a built-in table).
  int header_line = 0;             // 1-based
  std::string header_text;         // the header line as the file has it
  std::vector<int> input_columns;  // per input: 1-based byte column of its name in header_text

  double input(int64_t row, size_t i) const {
    if (cube) return (static_cast<uint64_t>(row) >> i & 1) ? -1.0 : 1.0;
    return x[static_cast<size_t>(row) * inputs.size() + i];
  }
  bool has_seen() const { return !seen.empty(); }
  /// The error `message` at the name of input `input` in a CSV table's header
  /// (`FILE:LINE:COLUMN: error: MESSAGE`, the header and a caret); for a built-in table, about
  /// the table (`SOURCE: error: MESSAGE`).
  SpecError input_error(size_t input, const std::string& message) const;
};

/// The whole cube of a Boolean task: inputs x0..x(n−1), one output `y`, its seen domain.
TruthTable boolean_truth_table(const BooleanTask& task);
/// Every problem of an arithmetic task: inputs a[i], b[i] (digit values in the task's
/// operand_order), outputs c[j] (answer digits in its answer_order): token i of a span, as encode()
/// writes it.
TruthTable arithmetic_truth_table(const ArithmeticTask& task);
/// Parses CSV text (format above); `filename` names the file in errors. Throws SpecError at the
/// place (`FILE:LINE:COLUMN`, as a data file's errors) for malformed tables: bytes that are not
/// UTF-8 text, a header that is `;`-separated or quoted (with a hint), a value that is no number.
TruthTable parse_truth_table_csv(std::string text, const std::string& filename);
/// The most columns a CSV truth table may have. Each input column binds to a token of a spec, and
/// a mask over this many tokens already takes 16 GiB a head (float32), past any run's size cap.
inline constexpr size_t kMaxTruthTableColumns = 65'536;
/// The largest CSV file read_truth_table_csv reads by default (parsing takes several times as
/// much memory).
inline constexpr uint64_t kMaxTruthTableBytes = uint64_t{1} << 30;

/// Reads and parses a CSV file. Throws InputError if it is not a regular file (a FIFO, a device),
/// holds more than `max_bytes` or cannot be read; SpecError as parse_truth_table_csv.
TruthTable read_truth_table_csv(const std::string& path, uint64_t max_bytes = kMaxTruthTableBytes);

}  // namespace maskprior::tasks
