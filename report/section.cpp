// What the parts of REPORT.md share (see section.h).
#include "report/section.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/text.h"

namespace maskprior::report {

namespace fs = std::filesystem;
using nlohmann::json;

std::string inert(const std::string& raw) {
  std::string text;
  for (char c : printable_utf8(raw)) {
    switch (c) {
      case '|':
        text += '/';
        break;
      case '`':
        text += '\'';
        break;
      case '<':
        text += "&lt;";
        break;
      case '>':
        text += "&gt;";
        break;
      case '&':
        text += "&amp;";
        break;
      case '[':
        text += '(';
        break;
      case ']':
        text += ')';
        break;
      default:
        text += c;
    }
  }
  return text;
}

Summary over_seeds(const ReportRow& row, const std::string& key) {
  std::vector<double> values;
  for (const RunRecord& run : row.runs) values.push_back(metric_value(run.summary, key));
  return summarize(values);
}

std::string cell(const Summary& s, bool percent) {
  if (s.n == 0) return "—";
  const double scale = percent ? 100.0 : 1.0;
  if (s.n == 1) return fmt::format(fmt::runtime(percent ? "{:.2f}" : "{:.4g}"), s.mean * scale);
  return fmt::format(fmt::runtime(percent ? "{:.2f} ± {:.2f}" : "{:.4g} ± {:.2g}"), s.mean * scale,
                     s.std * scale);
}

bool is_share(const TaskSection& section, const std::string& key) {
  const tasks::Metric* metric = section.family->find_metric(key);
  return metric != nullptr && metric->is_share();
}

std::vector<TaskSection> by_task(const std::vector<ReportRow>& rows) {
  std::vector<TaskSection> sections;
  for (const ReportRow& row : rows) {
    auto it = std::find_if(sections.begin(), sections.end(), [&](const TaskSection& s) {
      return s.subject == row.subject && s.family == row.family;
    });
    const std::string spec = fs::path(row.spec).filename().string();
    if (it == sections.end()) {
      sections.push_back({row.subject, row.task, row.family, {}, spec});
      it = std::prev(sections.end());
    }
    if (it->spec != spec) it->spec.clear();
    it->rows.push_back(&row);
  }
  return sections;
}

std::string primary_of(const TaskSection& section, const std::string& metric) {
  if (!metric.empty()) {
    for (const ReportRow* row : section.rows) {
      for (const RunRecord& run : row->runs) {
        if (std::isfinite(metric_value(run.summary, metric))) return metric;
      }
    }
    return "";
  }
  for (const ReportRow* row : section.rows) {
    if (auto key = headline_metric(*row)) return *key;
  }
  return "";
}

std::string judged_of(const TaskSection& section, const std::string& metric) {
  const std::string judged = section.family->judged_by;
  if (!metric.empty() || judged.empty()) return primary_of(section, metric);
  const std::string key = primary_of(section, judged);
  return key.empty() ? primary_of(section, "") : key;
}

std::vector<std::string> differing_settings(const TaskSection& section) {
  std::vector<const json*> settings;
  for (const ReportRow* row : section.rows) settings.push_back(&row->settings);
  return differing_keys(settings);
}

std::vector<std::pair<std::string, double>> largest_terms(
    std::vector<std::pair<std::string, double>> terms, size_t count) {
  std::stable_sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) {
    return std::abs(a.second) > std::abs(b.second);
  });
  if (terms.size() > count) terms.resize(count);
  return terms;
}

std::string string_at(const json& object, const char* key, const std::string& fallback) {
  if (!object.is_object()) return fallback;
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

std::string value_text(const json& value) {
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  return text.find('/') == std::string::npos ? text : fs::path(text).filename().string();
}

}  // namespace maskprior::report
