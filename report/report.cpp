#include "report/report.h"

#include <cmath>
#include <filesystem>

#include "tasks/family.h"

namespace maskprior::report {

namespace fs = std::filesystem;
using nlohmann::json;

std::optional<std::string> headline_metric(const ReportRow& row) {
  if (row.family == nullptr) return std::nullopt;
  const std::string& key = row.family->headline().key;
  for (const RunRecord& run : row.runs) {
    if (std::isfinite(metric_value(run.summary, key))) return key;
  }
  return std::nullopt;
}

std::optional<int64_t> steps_to(const RunRecord& run, const std::string& key, double threshold) {
  for (const json& record : run.metrics) {
    if (metric_value(record, key) >= threshold) return record.value("step", int64_t{0});
  }
  return std::nullopt;
}

std::string paper_number(const ReportRow& row) {
  if (row.family == nullptr || row.runs.empty()) return "—";
  // A mask init's number is for the task's own shipped spec.
  if (row.init.starts_with("mask") &&
      fs::path(row.spec).filename().string() != row.task + ".mask") {
    return "—";
  }
  return row.family->paper_number(row.task, row.init, row.runs.front().config).value_or("—");
}

}  // namespace maskprior::report
