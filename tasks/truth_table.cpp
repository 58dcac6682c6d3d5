#include "tasks/truth_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>
#include <unordered_set>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/regular_file.h"

namespace maskprior::tasks {
namespace {

constexpr size_t kMaxCubeInputs = 24;

/// Distinct values of a column, ascending.
std::vector<double> distinct_values(std::vector<double> column) {
  std::sort(column.begin(), column.end());
  column.erase(std::unique(column.begin(), column.end()), column.end());
  return column;
}

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r");
  return std::string(s.substr(first, last - first + 1));
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    fields.push_back(trim(std::string_view(line).substr(start, comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

/// `y`, `y7` or `y[7]`.
bool is_output_name(const std::string& name) {
  if (name == "y") return true;
  if (name.size() < 2 || name[0] != 'y') return false;
  std::string_view digits = std::string_view(name).substr(1);
  if (digits.front() == '[' && digits.back() == ']') digits = digits.substr(1, digits.size() - 2);
  return !digits.empty() &&
         std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool parse_number(std::string_view text, double& value) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && std::isfinite(value);
}

/// One data row as read from the file.
struct CsvRow {
  int line = 0;
  std::vector<double> inputs;
  std::vector<double> outputs;
  uint8_t seen = 0;
};

/// Reorders the rows of a complete Boolean table into cube order; false if it is not one.
bool to_cube_order(TruthTable& table, const std::vector<CsvRow>& rows) {
  const size_t n = table.inputs.size();
  if (n == 0 || n > kMaxCubeInputs || rows.size() != (size_t{1} << n)) return false;
  bool plus_minus = true;
  bool zero_one = true;
  for (const CsvRow& r : rows) {
    for (double v : r.inputs) {
      plus_minus = plus_minus && (v == 1.0 || v == -1.0);
      zero_one = zero_one && (v == 0.0 || v == 1.0);
    }
  }
  if (!plus_minus && !zero_one) return false;
  table.cube = true;
  table.zero_one_inputs = !plus_minus;
  const double minus_one = plus_minus ? -1.0 : 0.0;
  for (auto& column : table.y) column.assign(rows.size(), 0.0);
  if (table.has_seen()) table.seen.assign(rows.size(), 0);
  // Rows are distinct (duplicates were merged) and there are 2^n of them: each point once.
  for (const CsvRow& r : rows) {
    uint64_t p = 0;
    for (size_t i = 0; i < n; ++i) p |= uint64_t{r.inputs[i] == minus_one} << i;
    for (size_t o = 0; o < table.outputs.size(); ++o) table.y[o][p] = r.outputs[o];
    if (table.has_seen()) table.seen[p] = r.seen;
  }
  table.x.clear();
  return true;
}

/// The header line of a CSV truth table: which column is what.
struct CsvHeader {
  std::vector<std::string> names;
  int line = 0;
  std::vector<size_t> input_columns;
  std::vector<size_t> output_columns;
  std::optional<size_t> seen_column;
};

InputError csv_error(const std::string& filename, int line, const std::string& message) {
  return InputError(fmt::format("{}:{}: {}", filename, line, message));
}

/// Reads the header `fields` (line `line`) and names the table's inputs and outputs.
CsvHeader parse_header(const std::vector<std::string>& fields, int line,
                       const std::string& filename, TruthTable& table) {
  if (fields.size() > kMaxTruthTableColumns) {
    throw csv_error(filename, line,
                    fmt::format("the header has {} columns, more than the {} a truth table may "
                                "have (each input column is a token of the spec)",
                                fields.size(), kMaxTruthTableColumns));
  }
  CsvHeader header;
  header.names = fields;
  header.line = line;
  std::unordered_set<std::string_view> names;  // one pass: a header of many columns stays linear
  for (size_t c = 0; c < fields.size(); ++c) {
    const std::string& name = fields[c];
    if (name.empty()) throw csv_error(filename, line, fmt::format("column {} has no name", c + 1));
    if (!names.insert(name).second) {
      throw csv_error(filename, line, fmt::format("column {} appears twice", quote_input(name)));
    }
    if (name == "seen") {
      header.seen_column = c;
    } else if (is_output_name(name)) {
      header.output_columns.push_back(c);
      table.outputs.push_back(name);
    } else {
      header.input_columns.push_back(c);
      table.inputs.push_back(name);
    }
  }
  if (header.output_columns.empty()) {
    throw csv_error(filename, line, "missing output column: name it `y` (or `y0, y1, ...`)");
  }
  if (header.input_columns.empty()) {
    throw csv_error(filename, line, "no input columns (e.g. `x0, x1`)");
  }
  return header;
}

/// Reads the data row `fields` (line `line`) under `header`.
CsvRow parse_row(const std::vector<std::string>& fields, int line, const std::string& filename,
                 const CsvHeader& header) {
  if (fields.size() != header.names.size()) {
    throw csv_error(filename, line,
                    fmt::format("expected {} values (as in the header on line {}), found {}",
                                header.names.size(), header.line, fields.size()));
  }
  CsvRow row;
  row.line = line;
  std::vector<double> values(fields.size());
  for (size_t c = 0; c < fields.size(); ++c) {
    if (!parse_number(fields[c], values[c])) {
      throw csv_error(filename, line,
                      fmt::format("column {}: {} is not a number", quote_input(header.names[c]),
                                  quote_input(fields[c])));
    }
  }
  for (size_t c : header.input_columns) row.inputs.push_back(values[c]);
  for (size_t c : header.output_columns) row.outputs.push_back(values[c]);
  if (header.seen_column) {
    const double s = values[*header.seen_column];
    if (s != 0.0 && s != 1.0) {
      throw csv_error(
          filename, line,
          fmt::format("column 'seen': {} is not 0 or 1", quote_input(fields[*header.seen_column])));
    }
    row.seen = s == 1.0 ? 1 : 0;
  }
  return row;
}

/// Stores the distinct rows in `table`: in cube order when they are a complete Boolean cube, else
/// in file order.
void fill_rows(TruthTable& table, const std::vector<CsvRow>& rows, bool has_seen) {
  table.rows = static_cast<int64_t>(rows.size());
  table.y.assign(table.outputs.size(), {});
  if (has_seen) table.seen.resize(rows.size());
  if (!to_cube_order(table, rows)) {
    table.x.reserve(rows.size() * table.inputs.size());
    for (auto& column : table.y) column.reserve(rows.size());
    for (size_t r = 0; r < rows.size(); ++r) {
      table.x.insert(table.x.end(), rows[r].inputs.begin(), rows[r].inputs.end());
      for (size_t o = 0; o < table.outputs.size(); ++o) table.y[o].push_back(rows[r].outputs[o]);
      if (has_seen) table.seen[r] = rows[r].seen;
    }
  }
  for (const auto& column : table.y) table.values.push_back(distinct_values(column));
}

}  // namespace

TruthTable boolean_truth_table(const BooleanTask& task) {
  TruthTable table;
  table.source = task.name;
  for (int i = 0; i < task.n; ++i) table.inputs.push_back(fmt::format("x{}", i));
  table.outputs = {"y"};
  table.cube = true;
  table.rows = int64_t{1} << task.n;
  table.y.assign(1, std::vector<double>(static_cast<size_t>(table.rows)));
  table.seen.resize(static_cast<size_t>(table.rows));
  // Walk the cube in Gray-code order so each step flips one coordinate.
  std::vector<int8_t> x(static_cast<size_t>(task.n), 1);
  for (uint64_t step = 0; step < static_cast<uint64_t>(table.rows); ++step) {
    if (step > 0) {
      const int flipped = std::countr_zero(step);
      x[static_cast<size_t>(flipped)] = static_cast<int8_t>(-x[static_cast<size_t>(flipped)]);
    }
    const uint64_t p = step ^ (step >> 1);
    table.y[0][p] = task.target(x);
    table.seen[p] = task.seen(x) ? 1 : 0;
  }
  table.values = {task.values};
  return table;
}

TruthTable arithmetic_truth_table(const ArithmeticTask& task) {
  TruthTable table;
  table.source = task.name;
  const int d = task.operand_digits;
  for (int i = 0; i < d; ++i) table.inputs.push_back(fmt::format("a[{}]", i));
  for (int i = 0; i < d; ++i) table.inputs.push_back(fmt::format("b[{}]", i));
  for (int j = 0; j < task.answer_digits; ++j) table.outputs.push_back(fmt::format("c[{}]", j));
  table.rows = task.problems();
  table.x.reserve(static_cast<size_t>(table.rows) * table.inputs.size());
  table.y.assign(table.outputs.size(), std::vector<double>(static_cast<size_t>(table.rows)));
  const int answer = task.answer_offset();
  for (int64_t p = 0; p < table.rows; ++p) {
    const std::vector<int64_t> tokens = task.encode(p);
    // Operand digits sit at 0..d−1 and d+1..2d; answer digits from answer_offset().
    for (int i = 0; i < d; ++i) {
      table.x.push_back(static_cast<double>(tokens[static_cast<size_t>(i)]));
    }
    for (int i = 0; i < d; ++i) {
      table.x.push_back(
          static_cast<double>(tokens[static_cast<size_t>(d) + 1 + static_cast<size_t>(i)]));
    }
    for (int j = 0; j < task.answer_digits; ++j) {
      table.y[static_cast<size_t>(j)][static_cast<size_t>(p)] =
          static_cast<double>(tokens[static_cast<size_t>(answer) + static_cast<size_t>(j)]);
    }
  }
  for (const auto& column : table.y) table.values.push_back(distinct_values(column));
  return table;
}

TruthTable parse_truth_table_csv(const std::string& text, const std::string& filename) {
  std::istringstream stream(text);
  std::string line;
  int line_number = 0;
  std::optional<CsvHeader> header;
  std::vector<CsvRow> rows;
  std::map<std::vector<double>, size_t> row_of_inputs;  // inputs -> index into rows

  TruthTable table;
  table.source = filename;
  while (std::getline(stream, line)) {
    ++line_number;
    if (const int signal = stop_requested(); signal != 0) {
      throw Interrupted(signal, fmt::format("reading truth table '{}'", filename));
    }
    const std::string content = trim(line);
    if (content.empty() || content.front() == '#') continue;
    const std::vector<std::string> fields = split_fields(content);
    if (!header) {
      header = parse_header(fields, line_number, filename, table);
      continue;
    }
    CsvRow row = parse_row(fields, line_number, filename, *header);
    const auto [it, inserted] = row_of_inputs.emplace(row.inputs, rows.size());
    if (!inserted) {
      const CsvRow& first = rows[it->second];
      if (first.outputs != row.outputs || first.seen != row.seen) {
        throw csv_error(filename, line_number,
                        fmt::format("same inputs as line {} but a different {}", first.line,
                                    first.outputs != row.outputs ? "output" : "seen flag"));
      }
      continue;
    }
    rows.push_back(std::move(row));
  }
  if (!header) throw csv_error(filename, line_number, "empty truth table: no header line");
  if (rows.empty()) throw csv_error(filename, line_number, "truth table has a header but no rows");
  fill_rows(table, rows, header->seen_column.has_value());
  return table;
}

TruthTable read_truth_table_csv(const std::string& path, uint64_t max_bytes) {
  return parse_truth_table_csv(read_regular_file(path, max_bytes, "truth table"), path);
}

}  // namespace maskprior::tasks
