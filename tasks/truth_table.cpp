#include "tasks/truth_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_set>

#include "core/error.h"
#include "core/interrupt.h"
#include "core/regular_file.h"
#include "tasks/text_file.h"

namespace maskprior::tasks {
namespace {

constexpr size_t kMaxCubeInputs = 24;

/// Distinct values of a column, ascending.
std::vector<double> distinct_values(std::vector<double> column) {
  std::sort(column.begin(), column.end());
  column.erase(std::unique(column.begin(), column.end()), column.end());
  return column;
}

/// One comma-separated field of a line: its text without the spaces, tabs and carriage returns
/// around it, and the 1-based byte column where that text starts (where it would, when empty).
struct Field {
  std::string text;
  int column = 0;
};

std::vector<Field> split_fields(std::string_view line) {
  std::vector<Field> fields;
  size_t start = 0;
  while (true) {
    const size_t comma = std::min(line.find(',', start), line.size());
    const std::string_view raw = line.substr(start, comma - start);
    const size_t first = std::min(raw.find_first_not_of(" \t\r"), raw.size());
    const size_t last = raw.find_last_not_of(" \t\r");
    Field field;
    if (first < raw.size()) field.text = std::string(raw.substr(first, last - first + 1));
    field.column = static_cast<int>(start + first) + 1;
    fields.push_back(std::move(field));
    if (comma == line.size()) break;
    start = comma + 1;
  }
  return fields;
}

/// The part of a message that says what a field or line looks like when it is not what a truth
/// table holds: `;`-separated, tab-separated (tabs and no comma), or in quotes ("" when none).
std::string separator_hint(std::string_view text) {
  if (text.find(';') != std::string_view::npos) {
    return "; the file looks `;`-separated, but a truth table is comma-separated";
  }
  if (text.find('\t') != std::string_view::npos && text.find(',') == std::string_view::npos) {
    return "; the file looks tab-separated, but a truth table is comma-separated";
  }
  if (text.find_first_of("\"'") != std::string_view::npos) {
    return "; a truth table writes names and values without quotes";
  }
  return "";
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

/// One line of a CSV file, for errors at a place in it.
struct CsvLine {
  const std::string& path;
  int number = 0;
  std::string_view text;

  SpecError error(int column, const std::string& message) const {
    return text_error(path, number, column, message, text);
  }
};

/// The header line of a CSV truth table: which column is what.
struct CsvHeader {
  std::vector<std::string> names;
  int line = 0;
  std::vector<size_t> input_columns;
  std::vector<size_t> output_columns;
  std::optional<size_t> seen_column;
};

/// The header as it would read comma-separated and without quotes, for a hint.
std::string comma_separated(const std::vector<Field>& fields) {
  std::string out;
  for (const Field& f : fields) {
    for (char c : f.text) {
      if (c == ';' || c == '\t') {
        out += ',';
      } else if (c != '"' && c != '\'') {
        out += c;
      }
    }
    out += ',';
  }
  out.pop_back();
  return out;
}

/// Reads the header `fields` of `line` and names the table's inputs and outputs.
CsvHeader parse_header(const std::vector<Field>& fields, const CsvLine& line, TruthTable& table) {
  if (fields.size() > kMaxTruthTableColumns) {
    throw line.error(fields[kMaxTruthTableColumns].column,
                     fmt::format("the header has {} columns, more than the {} a truth table may "
                                 "have (each input column is a token of the spec)",
                                 fields.size(), kMaxTruthTableColumns));
  }
  CsvHeader header;
  header.line = line.number;
  std::unordered_set<std::string_view> names;  // one pass: a header of many columns stays linear
  for (size_t c = 0; c < fields.size(); ++c) {
    const std::string& name = fields[c].text;
    // No column may be named with these: a `;` or tab separates columns in other dialects of
    // CSV, and quotes enclose names.
    if (const size_t odd = name.find_first_of(";\t\"'"); odd != std::string::npos) {
      throw line.error(
          fields[c].column + static_cast<int>(odd),
          fmt::format("column name {} holds {}{}: write the header as {}", quote_input(name),
                      name[odd] == '\t' ? "a tab" : fmt::format("`{}`", name[odd]),
                      separator_hint(name), quote_input(comma_separated(fields))));
    }
    if (name.empty())
      throw line.error(fields[c].column, fmt::format("column {} has no name", c + 1));
    if (!names.insert(name).second) {
      throw line.error(fields[c].column, fmt::format("column {} appears twice", quote_input(name)));
    }
    header.names.push_back(name);
    if (name == "seen") {
      header.seen_column = c;
    } else if (is_output_name(name)) {
      header.output_columns.push_back(c);
      table.outputs.push_back(name);
    } else {
      header.input_columns.push_back(c);
      table.inputs.push_back(name);
      table.input_columns.push_back(fields[c].column);
    }
  }
  if (header.output_columns.empty()) {
    throw line.error(fields.front().column,
                     "missing output column: name it `y` (or `y0, y1, ...`)");
  }
  if (header.input_columns.empty()) {
    throw line.error(fields.front().column, "no input columns (e.g. `x0, x1`)");
  }
  table.header_line = line.number;
  table.header_text = std::string(line.text);
  return header;
}

/// Reads the data row `fields` of `line` under `header`.
CsvRow parse_row(const std::vector<Field>& fields, const CsvLine& line, const CsvHeader& header) {
  if (fields.size() != header.names.size()) {
    // At the first value too many, or after the last one when there are too few.
    const int column = fields.size() > header.names.size()
                           ? fields[header.names.size()].column
                           : static_cast<int>(line.text.find_last_not_of(" \t\r") + 2);
    throw line.error(
        column,
        fmt::format("expected {} values (as in the header on line {}), found {}{}",
                    header.names.size(), header.line, fields.size(), separator_hint(line.text)));
  }
  CsvRow row;
  row.line = line.number;
  std::vector<double> values(fields.size());
  for (size_t c = 0; c < fields.size(); ++c) {
    if (!parse_number(fields[c].text, values[c])) {
      throw line.error(fields[c].column,
                       fmt::format("column {}: {} is not a number{}", quote_input(header.names[c]),
                                   quote_input(fields[c].text), separator_hint(fields[c].text)));
    }
  }
  for (size_t c : header.input_columns) row.inputs.push_back(values[c]);
  for (size_t c : header.output_columns) row.outputs.push_back(values[c]);
  if (header.seen_column) {
    const double s = values[*header.seen_column];
    if (s != 0.0 && s != 1.0) {
      throw line.error(fields[*header.seen_column].column,
                       fmt::format("column 'seen': {} is not 0 or 1",
                                   quote_input(fields[*header.seen_column].text)));
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

TruthTable parse_truth_table_csv(std::string text, const std::string& filename) {
  blank_byte_order_mark(text);
  const std::string_view all = text;
  int line_number = 0;
  std::optional<CsvHeader> header;
  std::vector<CsvRow> rows;
  std::map<std::vector<double>, size_t> row_of_inputs;  // inputs -> index into rows

  TruthTable table;
  table.source = filename;
  for (size_t start = 0; start < all.size();) {
    const size_t end = std::min(all.find('\n', start), all.size());
    const CsvLine line{filename, ++line_number, all.substr(start, end - start)};
    start = end + 1;
    if (const int signal = stop_requested(); signal != 0) {
      throw Interrupted(signal, fmt::format("reading truth table '{}'", filename));
    }
    check_text_line(filename, line.number, line.text, "truth table");
    const size_t first = line.text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || line.text[first] == '#') continue;
    const std::vector<Field> fields = split_fields(line.text);
    if (!header) {
      header = parse_header(fields, line, table);
      continue;
    }
    CsvRow row = parse_row(fields, line, *header);
    const auto [it, inserted] = row_of_inputs.emplace(row.inputs, rows.size());
    if (!inserted) {
      const CsvRow& first_row = rows[it->second];
      if (first_row.outputs != row.outputs || first_row.seen != row.seen) {
        // At the first value that differs: an output, else the seen flag.
        size_t column = header->seen_column.value_or(0);
        for (size_t o = 0; o < row.outputs.size(); ++o) {
          if (row.outputs[o] != first_row.outputs[o]) {
            column = header->output_columns[o];
            break;
          }
        }
        throw line.error(fields[column].column,
                         fmt::format("same inputs as line {} but a different {}", first_row.line,
                                     first_row.outputs != row.outputs ? "output" : "seen flag"));
      }
      continue;
    }
    rows.push_back(std::move(row));
  }
  if (!header) {
    throw text_error(
        filename, std::max(line_number, 1), 1,
        fmt::format(
            "empty truth table: the file is {}; its first line names the "
            "columns, e.g. `x0,x1,y`",
            all.find_first_not_of(" \t\r\n") == std::string_view::npos ? "empty" : "only comments"),
        {});
  }
  if (rows.empty()) {
    throw text_error(filename, header->line, 1, "truth table has a header but no rows",
                     table.header_text);
  }
  fill_rows(table, rows, header->seen_column.has_value());
  return table;
}

SpecError TruthTable::input_error(size_t input, const std::string& message) const {
  if (header_line == 0) return file_error(source, message);
  return text_error(source, header_line, input_columns.at(input), message, header_text);
}

TruthTable read_truth_table_csv(const std::string& path, uint64_t max_bytes) {
  return parse_truth_table_csv(read_regular_file(path, max_bytes, "truth table"), path);
}

}  // namespace maskprior::tasks
