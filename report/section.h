// What the parts of REPORT.md share (report/write.cpp, tables.cpp, figures.cpp): a section of
// rows of one task, the text rules, and the summaries over seeds. Internal to report/.
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

#include "report/report.h"
#include "report/stats.h"
#include "tasks/family.h"

namespace maskprior::report {

/// Text from run folders (names, config and summary values) as REPORT.md shows it: valid UTF-8
/// with control characters escaped, and nothing Markdown or HTML would read as markup — `|` and
/// backticks (which would break a table or a code span) replaced, `<`, `>` and `&` as entities,
/// brackets (which would end an image's alt text) as parentheses.
std::string inert(const std::string& raw);
/// `key` of each of the row's runs (metric_value), over its seeds.
Summary over_seeds(const ReportRow& row, const std::string& key);
/// "mean ± std" (one value: the mean), as % when `percent`; "—" for no value.
std::string cell(const Summary& s, bool percent);

/// The rows of one subject (a task, or a file of your own data) and family.
struct TaskSection {
  std::string subject, task;
  const tasks::TaskFamily* family;
  std::vector<const ReportRow*> rows;
  std::string spec;  // the spec file every row shares; "" when they differ
  // A sweep's grid as its results.json records it ([{"key", "values"}, ...]): the order in which
  // plots show a swept setting's values; empty for other folders.
  nlohmann::json grid = nlohmann::json::array();

  /// The heading: the task, or the data file and its spec.
  std::string title() const {
    if (subject.empty()) return "(no task)";
    if (!task.empty() || spec.empty()) return subject;
    return fmt::format("{} with {}", subject, spec);
  }
  /// The stem of its plot files: "parity2", "train.txt-reverse.mask".
  std::string name() const {
    return task.empty() && !spec.empty() ? subject + "-" + spec : subject;
  }
};

/// A share in [0, 1] (shown as %): what the section's task family says of `key`.
bool is_share(const TaskSection& section, const std::string& key);
/// The rows grouped by subject and family, in the rows' order.
std::vector<TaskSection> by_task(const std::vector<ReportRow>& rows);
/// The metric a section is judged by: `metric` when given and some run of the section has it,
/// else the family's headline (headline_metric).
std::string primary_of(const TaskSection& section, const std::string& metric);
/// The metric "Does the prior help?" compares by: `metric` when given (primary_of), else the
/// family's judged_by when some run of the section has it, else the headline.
std::string judged_of(const TaskSection& section, const std::string& metric);
/// The settings (RunRecord settings_of) in which the section's rows differ.
std::vector<std::string> differing_settings(const TaskSection& section);
/// The `count` terms of largest magnitude (|value|), largest first, ties in their given order:
/// the learned Fourier coefficients a table names or a plot draws.
std::vector<std::pair<std::string, double>> largest_terms(
    std::vector<std::pair<std::string, double>> terms, size_t count);
/// `object[key]` as text when it is a string, else `fallback` (a run's files may hold anything).
std::string string_at(const nlohmann::json& object, const char* key, const std::string& fallback);
/// A setting's value as a label: numbers as numbers, a path as its file name.
std::string value_text(const nlohmann::json& value);

}  // namespace maskprior::report
