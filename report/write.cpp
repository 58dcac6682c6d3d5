// REPORT.md and its plots (see report.h): a section per task, its tables (tables.h) and
// figures (figures.h).
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "report/figures.h"
#include "report/report.h"
#include "report/section.h"
#include "report/tables.h"
#include "runfolder/run_state.h"

namespace maskprior::report {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string section_text(const fs::path& root, const TaskSection& section,
                         const ReportOptions& options) {
  const std::string key = primary_of(section, options.metric);
  std::string out = fmt::format("## {}\n\n", inert(section.title()));
  if (key.empty()) {
    return out + (options.metric.empty() ? std::string("No summary metric to report.\n\n")
                                         : fmt::format("No run here has `{}` in its summary.\n\n",
                                                       inert(options.metric)));
  }
  const std::string paper =
      section.family->paper.empty()
          ? ""
          : "; *paper* is docs/paper.md's number for the same task, init and mask (— where the "
            "paper has none), reached at the paper's own budget: compare with care when the "
            "preset (Settings) is not `paper`";
  out += fmt::format(
      "`{}` of the last evaluation, mean ± std over seeds{}{}. Steps to 50% / 95%: first "
      "evaluated step at that level, mean over the seeds that reached it (reached / seeds).\n\n",
      inert(key), is_share(section, key) ? " (%)" : "", paper);
  out += results_table(section, key) + (options.per_run ? runs_table(section, key) : "") +
         help_table(section, judged_of(section, options.metric), key, options.control) +
         by_length_text(root, section, key) + mdi_text(section, options.share_dir);
  out += "Settings:\n\n" + settings_table(section);
  out += final_figure(root, section, key) + setting_figures(root, section, key) +
         curve_figures(root, section, key) + fourier_figures(root, section);
  return out;
}

/// InputError unless some run's summary has a number under `metric` ("" passes), naming the keys
/// that have one.
void check_metric(const std::vector<ReportRow>& rows, const std::string& metric) {
  if (metric.empty()) return;
  std::set<std::string> keys;
  for (const ReportRow& row : rows) {
    for (const RunRecord& run : row.runs) {
      if (std::isfinite(metric_value(run.summary, metric))) return;
      for (const auto& [key, value] : run.summary.items()) {
        if (std::isfinite(metric_value(run.summary, key))) keys.insert(key);
      }
    }
  }
  throw InputError(
      fmt::format("[report] no run's summary.json has a number under '{}' (these do: {})", metric,
                  fmt::join(keys, ", ")));
}

/// ` over KEY (V1, V2), KEY2 (...)`: a sweep's grid as results.json records it ("" for none).
std::string grid_text(const json& grid) {
  std::vector<std::string> axes;
  for (const json& axis : grid) {
    if (!axis.is_object() || !axis.value("key", json()).is_string()) continue;
    std::vector<std::string> values;
    for (const json& value : axis.value("values", json::array()))
      values.push_back(value.is_string() ? value.get<std::string>() : value.dump());
    axes.push_back(fmt::format("`{}` ({})", inert(axis["key"].get<std::string>()),
                               inert(fmt::format("{}", fmt::join(values, ", ")))));
  }
  return axes.empty() ? "" : fmt::format(" over {}", fmt::join(axes, ", "));
}

}  // namespace

std::string write_report(const ReportOptions& options, std::vector<LeftOut>* left_out_runs,
                         std::vector<runfolder::Unfinished>* unfinished_runs) {
  const ControlCriterion& control = options.control;
  if (!std::isfinite(control.points) || control.points <= 0 || control.points > 100 ||
      control.seeds < 1) {
    throw InputError(fmt::format(
        "[report] a positive control needs a gain in (0, 100] points over at least 1 seed, not "
        "{} points over {} seeds",
        control.points, control.seeds));
  }
  const fs::path root(options.dir);
  std::vector<LeftOut> left_out;
  std::vector<runfolder::Unfinished> unfinished;
  const std::vector<ReportRow> rows = read_rows(options.dir, &left_out, &unfinished);
  check_metric(rows, options.metric);
  check_plots_folder(root);
  size_t runs = 0;
  for (const ReportRow& row : rows) runs += row.runs.size();
  std::string text = fmt::format("# Report: {}\n\n", inert(fs::absolute(root).filename().string()));
  json grid = json::array();
  if (fs::is_regular_file(root / "results.json")) {
    const json results = read_json_file((root / "results.json").string());
    if (results.is_object() && results.value("grid", json()).is_array()) grid = results["grid"];
    if (results.is_object() && results.contains("suite")) {
      text += fmt::format("Suite `{}`, preset `{}`. ", inert(string_at(results, "suite", "?")),
                          inert(string_at(results, "preset", "?")));
    } else if (string_at(results, "command", "") == "sweep") {
      text += "A `maskc sweep`" + grid_text(grid) + ". ";
    }
  }
  text += fmt::format(
      "{} finished runs in {} rows, written by `maskc report`. Plots are in `plots/`.\n\n", runs,
      rows.size());
  text += provenance_text(rows) + left_out_text(left_out) + unfinished_text(root, unfinished);
  for (TaskSection& section : by_task(rows)) {
    section.grid = grid;
    text += section_text(root, section, options);
  }
  const std::string path = (root / "REPORT.md").string();
  write_file_atomic(path, text);
  if (left_out_runs != nullptr) *left_out_runs = std::move(left_out);
  if (unfinished_runs != nullptr) *unfinished_runs = std::move(unfinished);
  return path;
}

}  // namespace maskprior::report
