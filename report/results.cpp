#include "report/results.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/stats.h"

namespace maskprior::report {

using nlohmann::json;

std::vector<tasks::Metric> table_columns(const tasks::TaskFamily& family) {
  std::vector<tasks::Metric> columns;
  for (const tasks::Metric& metric : family.metrics) {
    if (metric.in_tables) columns.push_back(metric);
  }
  const auto& persistence = tasks::persistence_metrics();
  columns.insert(columns.end(), persistence.begin(), persistence.end());
  columns.insert(columns.end(), family.diagnostics.begin(), family.diagnostics.end());
  columns.push_back({"steps_to_95", "steps to 95%", "steps to 95%", "", tasks::Better::kLower});
  return columns;
}

json aggregate(const ReportRow& row, const std::string& key) {
  std::vector<double> values;
  for (const RunRecord& run : row.runs) values.push_back(metric_value(run.summary, key));
  const Summary s = summarize(values);
  if (s.n == 0) return nullptr;
  return json{{"mean", s.mean}, {"std", s.std}, {"n", s.n}};
}

json aggregate_row(const ReportRow& row) {
  json metrics = json::object();
  for (const tasks::Metric& c : table_columns(*row.family)) metrics[c.key] = aggregate(row, c.key);
  return metrics;
}

namespace {

std::string format_cell(const json& cell, bool percent) {
  if (cell.is_null()) return "—";
  const double scale = percent ? 100.0 : 1.0;
  const double mean = cell["mean"].get<double>() * scale;
  const double std = cell["std"].get<double>() * scale;
  if (cell["n"].get<int>() < 2)
    return percent ? fmt::format("{:.2f}", mean) : fmt::format("{:.4g}", mean);
  return percent ? fmt::format("{:.2f} ± {:.2f}", mean, std)
                 : fmt::format("{:.4g} ± {:.2g}", mean, std);
}

/// Width in code points, so that ± and — line up.
size_t width(const std::string& s) {
  size_t w = 0;
  for (unsigned char ch : s) w += (ch & 0xC0) != 0x80;
  return w;
}

/// `cells` (the first line the header) as an aligned Markdown table.
std::string aligned(const std::vector<std::vector<std::string>>& cells) {
  std::vector<size_t> widths(cells.front().size(), 0);
  for (const auto& line : cells) {
    for (size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], width(line[i]));
  }
  std::string out;
  for (size_t r = 0; r < cells.size(); ++r) {
    out += "|";
    for (size_t i = 0; i < cells[r].size(); ++i) {
      out += " " + cells[r][i] + std::string(widths[i] - width(cells[r][i]), ' ') + " |";
    }
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t w : widths) out += std::string(w + 2, '-') + "|";
      out += "\n";
    }
  }
  return out;
}

}  // namespace

std::string results_table(const json& rows, const std::vector<tasks::Metric>& columns) {
  std::vector<const tasks::Metric*> shown;
  for (const tasks::Metric& c : columns) {
    for (const json& row : rows) {
      if (row["metrics"].contains(c.key) && !row["metrics"][c.key].is_null()) {
        shown.push_back(&c);
        break;
      }
    }
  }
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> header = {"run", "seeds"};
  for (const tasks::Metric* c : shown) header.push_back(c->column());
  cells.push_back(header);
  for (const json& row : rows) {
    std::vector<std::string> line = {row["label"].get<std::string>(),
                                     std::to_string(row["seeds"].size())};
    for (const tasks::Metric* c : shown) {
      line.push_back(format_cell(row["metrics"][c->key], c->is_share()));
    }
    cells.push_back(line);
  }
  return aligned(cells);
}

std::string family_tables(const std::vector<ReportRow>& rows, const json& aggregated) {
  std::string markdown;
  for (const tasks::TaskFamily& family : tasks::families()) {
    json members = json::array();
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].family->name == family.name) members.push_back(aggregated[i]);
    }
    if (!members.empty()) markdown += results_table(members, table_columns(family)) + "\n";
  }
  return markdown;
}

}  // namespace maskprior::report
