#include "runfolder/runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "compiler/write_spec.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "io/json_file.h"
#include "runfolder/archive.h"
#include "runfolder/run_files.h"
#include "runfolder/run_state.h"
#include "tasks/family.h"

namespace maskprior::runfolder {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// a < b with runs of digits compared as numbers: "add-2pct" < "add-10pct", "seed9" < "seed10".
bool natural_less(const std::string& a, const std::string& b) {
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      const size_t a_end = std::find_if_not(a.begin() + i, a.end(), is_digit) - a.begin();
      const size_t b_end = std::find_if_not(b.begin() + j, b.end(), is_digit) - b.begin();
      const auto a_start = a.find_first_not_of('0', i), b_start = b.find_first_not_of('0', j);
      const size_t a_len = a_end - std::min(a_start, a_end),
                   b_len = b_end - std::min(b_start, b_end);
      if (a_len != b_len) return a_len < b_len;  // more significant digits: larger
      const int order = a.compare(a_end - a_len, a_len, b, b_end - b_len, b_len);
      if (order != 0) return order < 0;
      i = a_end;
      j = b_end;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

/// The finished runs under root (runfolder/run_state.h), in natural order (train fractions and
/// seeds by number); the run folders that have not finished go to `unfinished` when given, in
/// the same order. One walk serves both.
std::vector<fs::path> run_folders(const fs::path& root,
                                  std::vector<Unfinished>* unfinished = nullptr) {
  std::vector<fs::path> folders;
  std::vector<Unfinished> others;
  auto visit = [&](const fs::path& dir) {
    const RunState state = run_state(dir);
    if (state == RunState::kFinished) folders.push_back(dir);
    if (unfinished != nullptr && (state == RunState::kRunning || state == RunState::kStopped)) {
      others.push_back({dir.string(), state, progress_text(dir)});
    }
  };
  visit(root);
  for (const auto& entry :
       fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied)) {
    if (entry.is_directory()) visit(entry.path());
  }
  std::sort(folders.begin(), folders.end(), [](const fs::path& a, const fs::path& b) {
    return natural_less(a.string(), b.string());
  });
  if (unfinished != nullptr) {
    std::sort(others.begin(), others.end(),
              [](const Unfinished& a, const Unfinished& b) { return natural_less(a.dir, b.dir); });
    *unfinished = std::move(others);
  }
  return folders;
}

/// The run folders under root and the archived runs (scan root, folder), in natural order of
/// their paths below their scan roots; root's unfinished runs go to `unfinished`.
std::vector<std::pair<fs::path, fs::path>> run_folders_and_archives(
    const fs::path& root, const ExtractedRuns& archived, std::vector<Unfinished>* unfinished) {
  std::vector<std::pair<fs::path, fs::path>> all;
  for (const fs::path& dir : run_folders(root, unfinished)) all.emplace_back(root, dir);
  if (!archived.tree().empty()) {
    for (const fs::path& dir : run_folders(archived.tree())) all.emplace_back(archived.tree(), dir);
  }
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) {
    return natural_less(fs::relative(a.second, a.first).generic_string(),
                        fs::relative(b.second, b.first).generic_string());
  });
  return all;
}

/// The task family of a run: InputError naming the run when its task is none we know.
const tasks::TaskFamily& family_of(const RunRecord& run) {
  try {
    return tasks::family_of_run(run.config);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", run.dir, e.what()));
  }
}

double number_or_nan(const json& value) {
  return value.is_number() ? value.get<double>() : NAN;
}

/// What a row's runs learn: the task, or the file of your own data.
std::string subject_of(const json& config) {
  for (const char* key : {"task", "data", "truth_table"}) {
    const json value = config.value(key, json());
    if (value.is_string() && !value.get<std::string>().empty()) {
      const std::string text = value.get<std::string>();
      return key == std::string("task") ? text : fs::path(text).filename().string();
    }
  }
  return "";
}

/// A setting's value in a row label: file paths by their name (`short_paths`), a digest by its
/// first 12 digits, numbers as JSON writes them.
std::string setting_text(const std::string& key, const json& value, bool short_paths) {
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  if (key == "spec_sha256") return text.substr(0, 12);
  if (short_paths && text.find('/') != std::string::npos) {
    return fs::path(text).filename().string();
  }
  return text;
}

/// "k=v, k=v" of the settings in which `rows` (of one folder) differ, one per row.
std::vector<std::string> differences(const std::vector<RunRow*>& rows, bool short_paths) {
  std::set<std::string> keys;
  for (const RunRow* row : rows) {
    for (const auto& [key, value] : row->settings.items()) keys.insert(key);
  }
  std::vector<std::string> labels(rows.size());
  for (const std::string& key : keys) {
    const json first = rows.front()->settings.value(key, json());
    const bool differ = std::any_of(rows.begin(), rows.end(), [&](const RunRow* row) {
      return row->settings.value(key, json()) != first;
    });
    if (!differ) continue;
    for (size_t i = 0; i < rows.size(); ++i) {
      labels[i] +=
          fmt::format("{}{}={}", labels[i].empty() ? "" : ", ", key,
                      setting_text(key, rows[i]->settings.value(key, json()), short_paths));
    }
  }
  return labels;
}

/// Labels the rows: a folder's only row by the folder; several rows of one folder by what differs
/// between them (paths by their file name, unless that leaves two rows alike).
void label_rows(std::vector<RunRow>& rows, const std::string& root_name) {
  std::map<std::string, std::vector<RunRow*>> by_folder;
  for (RunRow& row : rows) by_folder[row.runs.front().row].push_back(&row);
  for (auto& [folder, members] : by_folder) {
    if (members.size() == 1) {
      members.front()->label = folder.empty() ? root_name : folder;
      continue;
    }
    std::vector<std::string> labels = differences(members, /*short_paths=*/true);
    if (std::set<std::string>(labels.begin(), labels.end()).size() < labels.size()) {
      labels = differences(members, /*short_paths=*/false);
    }
    for (size_t i = 0; i < members.size(); ++i) {
      members[i]->label = folder.empty() ? labels[i] : folder + " " + labels[i];
    }
  }
}

}  // namespace

const std::vector<std::string>& execution_keys() {
  static const std::vector<std::string> kKeys(kExecutionKeys.begin(), kExecutionKeys.end());
  return kKeys;
}

json settings_of(const RunRecord& run) {
  json settings = run.config.is_object() ? run.config : json::object();
  for (const char* key : {"seed", "out", "config_format", "resolved"}) settings.erase(key);
  for (const std::string& key : execution_keys()) settings.erase(key);
  // Older run folders wrote every setting; newer ones leave out those the run's family does not
  // read (they hold their defaults): the same run either way.
  try {
    for (const std::string& key : tasks::foreign_settings(tasks::family_of_run(settings))) {
      settings.erase(key);
    }
  } catch (const InputError&) {
    // A run of no known family: group_runs names it.
  }
  if (!run.distilled.empty()) {
    settings["spec"] = fmt::format("distilled ({})", run.distilled);
  } else if (run.summary.contains("spec_sha256")) {
    settings["spec_sha256"] = run.summary["spec_sha256"];
  }
  return settings;
}

std::optional<RunRecord> read_run(const std::string& dir_text, uint64_t max_metrics_bytes) {
  const fs::path dir(dir_text);
  RunRecord run;
  run.dir = dir_text;
  auto summary = finished_summary(dir);
  if (!summary) return std::nullopt;
  run.summary = std::move(*summary);
  run.config = read_json_file((dir / kConfigFile).string());
  if (fs::is_regular_file(dir / kSpecFile)) {
    constexpr uint64_t kLargestSpec = uint64_t{64} << 20;
    const std::string spec =
        read_regular_file((dir / kSpecFile).string(), kLargestSpec, "a run's spec");
    run.distilled = distilled_origin(spec).value_or("");
    if (spec.size() <= kMaxKeptSpecBytes) run.spec_source = spec;
  }
  if (fs::is_regular_file(dir / kMetricsFile))
    run.metrics = read_json_lines((dir / kMetricsFile).string(), max_metrics_bytes);
  check_run(run);
  return run;
}

void check_run(const RunRecord& run) {
  const fs::path dir(run.dir);
  auto fail = [&](std::string_view file, const std::string& what) {
    throw InputError(fmt::format("{}: {}", (dir / file).string(), what));
  };
  if (!run.config.is_object()) fail(kConfigFile, "not a JSON object");
  if (!run.summary.is_object()) fail(kSummaryFile, "not a JSON object");
  // The settings a report reads as one type (task names and paths, sizes, the spec's -D values):
  // another type there is damage, named here rather than as a type error later.
  auto check_types = [&](const json& object, std::string_view file, auto&& is_type,
                         std::string_view type, std::initializer_list<const char*> keys) {
    for (const char* key : keys) {
      const auto it = object.find(key);
      if (it != object.end() && !is_type(*it)) {
        const std::string value = it->dump();  // at most 60 characters of it in the message
        fail(file,
             fmt::format("'{}' is {}{}, not {}", key, escape_control_chars(value.substr(0, 60)),
                         value.size() > 60 ? "..." : "", type));
      }
    }
  };
  const auto is_text = [](const json& v) { return v.is_string(); };
  const auto is_count = [](const json& v) { return v.is_number_integer(); };
  const auto is_number = [](const json& v) { return v.is_number(); };
  const auto is_object = [](const json& v) { return v.is_object(); };
  check_types(
      run.config, kConfigFile, is_text, "text",
      {"task", "init", "spec", "data", "truth_table", "precision", "preset", "digits",
       "test_digits", "train_domain", "operand_order", "answer_order", "optimizer", "device"});
  check_types(run.config, kConfigFile, is_count, "a whole number",
              {"n", "depth", "dim", "heads", "head_dim", "mlp", "batch_size", "epochs",
               "train_size", "test_size"});
  check_types(run.config, kConfigFile, is_number, "a number", {"train_fraction", "lr"});
  check_types(run.config, kConfigFile, is_object, "an object", {"defines", "resolved"});
  check_types(run.summary, kSummaryFile, is_text, "text", {"device", "task", "init"});
  check_types(run.summary, kSummaryFile, is_object, "an object", {"provenance"});
  // The largest magnitude a run's number may have: beyond it a mean or std over seeds overflows.
  constexpr double kLargest = 1e300;
  for (const auto& [key, value] : run.summary.items()) {
    const json values = value.is_array() ? value : json::array({value});
    for (const json& v : values) {
      if (v.is_number() && !(std::abs(v.get<double>()) <= kLargest)) {
        fail(kSummaryFile, fmt::format("'{}' is {}, which no run can reach",
                                       escape_control_chars(key), v.dump()));
      }
    }
  }
  for (const char* key : {"steps", "epochs"}) {
    if (run.summary.contains(key) && run.summary[key].is_number() &&
        run.summary[key].get<double>() < 0) {
      fail(kSummaryFile, fmt::format("'{}' is negative ({})", key, run.summary[key].dump()));
    }
  }
  double previous = 0;
  for (size_t i = 0; i < run.metrics.size(); ++i) {
    const json& record = run.metrics[i];
    const json step = record.is_object() ? record.value("step", json()) : json();
    if (!step.is_number() || step.get<double>() < previous || step.get<double>() > kLargest) {
      fail(kMetricsFile,
           fmt::format("record {} has step {} after step {} (steps are counts that never go back)",
                       i + 1, step.dump(), previous));
    }
    previous = step.get<double>();
  }
}

namespace {

/// settings_of each run, where a run's config.json that lacks a setting some runs of its folder
/// record (it was written before the setting existed) takes the one value those runs agree on: a
/// setting is added with the default that keeps what runs did before it, so a folder resumed or
/// grown by a later build stays one row. Runs that record different values stay apart.
std::vector<json> settings_within_folders(const std::vector<RunRecord>& runs) {
  std::vector<json> settings;
  settings.reserve(runs.size());
  for (const RunRecord& run : runs) settings.push_back(settings_of(run));
  std::map<std::string, std::map<std::string, std::set<json>>> values;  // row, key -> its values
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& [key, value] : settings[i].items()) values[runs[i].row][key].insert(value);
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    for (const auto& [key, recorded] : values[runs[i].row]) {
      if (recorded.size() == 1 && !settings[i].contains(key)) settings[i][key] = *recorded.begin();
    }
  }
  return settings;
}

}  // namespace

std::vector<RunRow> group_runs(std::vector<RunRecord> runs, const std::string& root_name,
                               std::vector<LeftOut>* duplicates) {
  std::vector<RunRow> rows;
  std::map<std::string, size_t> index;
  std::map<std::pair<size_t, std::string>, std::string> seen;  // (row, seed) -> its first run
  std::vector<json> all_settings = settings_within_folders(runs);
  for (size_t i = 0; i < runs.size(); ++i) {
    RunRecord& run = runs[i];
    json settings = std::move(all_settings[i]);
    auto [it, added] = index.emplace(run.row + "\n" + settings.dump(), rows.size());
    // The seed as config.json (or summary.json) records it; a run that records none is no copy.
    const json seed =
        run.config.contains("seed") ? run.config["seed"] : run.summary.value("seed", json());
    if (!seed.is_null()) {
      const auto [first, fresh] = seen.emplace(std::pair(it->second, seed.dump()), run.dir);
      if (!fresh) {
        if (duplicates != nullptr) {
          duplicates->push_back(
              {run.dir, fmt::format("{}: seed {} again, as in {} (a copy?): a seed counts once",
                                    run.dir, seed.dump(), first->second)});
        }
        continue;
      }
    }
    if (added) {
      RunRow row;
      row.subject = subject_of(run.config);
      row.task = run.config.value("task", "");
      row.init = run.config.value("init", "");
      row.spec = run.config.value("spec", "");
      row.train_fraction = run.config.value("train_fraction", 0.0);
      row.family = &family_of(run);
      row.settings = std::move(settings);
      rows.push_back(std::move(row));
    }
    rows[it->second].runs.push_back(std::move(run));
  }
  label_rows(rows, root_name);
  return rows;
}

std::vector<Unfinished> unfinished_runs(const std::string& root) {
  std::vector<Unfinished> runs;
  if (fs::is_directory(root)) run_folders(root, &runs);
  return runs;
}

std::vector<RunRow> read_rows(const std::string& root_text, std::vector<LeftOut>* left_out,
                              std::vector<Unfinished>* unfinished_out) {
  const fs::path root(root_text);
  if (!fs::is_directory(root)) {
    throw InputError(fmt::format("[report] {} is not a folder", root_text));
  }
  std::vector<LeftOut> skipped;
  auto leave_out = [&](const fs::path& dir, const std::string& reason) {
    if (left_out == nullptr) throw InputError(fmt::format("[report] {}", reason));
    skipped.push_back({dir.string(), reason});
  };
  std::vector<RunRecord> runs;
  uint64_t metrics_budget = kMaxReportMetricsBytes;
  const ExtractedRuns archived(root);
  std::vector<Unfinished> unfinished;
  for (const auto& [scan_root, dir] : run_folders_and_archives(root, archived, &unfinished)) {
    std::error_code error;
    const uintmax_t size = fs::file_size(dir / kMetricsFile, error);
    if (!error && size > metrics_budget) {
      leave_out(dir, fmt::format("{}: the report has read {} MiB of {} files, its "
                                 "limit ({} MiB), and this one has {} bytes more",
                                 (dir / kMetricsFile).string(),
                                 (kMaxReportMetricsBytes - metrics_budget) >> 20, kMetricsFile,
                                 kMaxReportMetricsBytes >> 20, size));
      continue;
    }
    std::optional<RunRecord> run;
    try {
      run = read_run(dir.string());
      if (run) (void)family_of(*run);
    } catch (const InputError& e) {
      leave_out(dir, e.what());
      continue;
    }
    if (!run) continue;
    if (!error) metrics_budget -= std::min<uint64_t>(size, metrics_budget);
    if (scan_root != root) run->dir = archived.display(dir);
    const fs::path parent = dir == scan_root ? dir : dir.parent_path();
    run->row = parent == scan_root ? "" : fs::relative(parent, scan_root).generic_string();
    if (run->row == ".") run->row.clear();  // root given as "runs/"
    runs.push_back(std::move(*run));
  }
  if (runs.empty()) {
    std::string why;
    for (const LeftOut& l : skipped) why += "\n  " + l.reason;
    for (const Unfinished& u : unfinished) {
      why +=
          fmt::format("\n  {}: not finished ({}, {})", u.dir, run_state_name(u.state), u.progress);
    }
    throw InputError(fmt::format(
        "[report] {} holds no finished run (a folder with config.json and summary.json){}",
        root_text, why.empty() ? "" : " that can be reported:" + why));
  }
  std::string root_name = fs::absolute(root).lexically_normal().filename().string();
  if (root_name.empty()) root_name = fs::absolute(root).parent_path().filename().string();
  std::vector<RunRow> rows = group_runs(std::move(runs), root_name, &skipped);
  if (left_out != nullptr) *left_out = std::move(skipped);
  if (unfinished_out != nullptr) *unfinished_out = std::move(unfinished);
  return rows;
}

double metric_value(const json& record, const std::string& key) {
  if (!record.is_object() || !record.contains(key)) return NAN;
  const json& v = record[key];
  if (v.is_array()) {
    double sum = 0;
    size_t finite = 0;
    for (const json& x : v) {
      const double value = number_or_nan(x);
      if (std::isfinite(value)) {
        sum += value;
        ++finite;
      }
    }
    return finite == 0 ? NAN : sum / static_cast<double>(finite);
  }
  return number_or_nan(v);
}

std::vector<std::string> differing_keys(const std::vector<const json*>& settings) {
  if (settings.size() < 2) return {};
  std::set<std::string> keys;
  for (const json* each : settings) {
    if (each->is_object()) {
      for (const auto& [key, value] : each->items()) keys.insert(key);
    }
  }
  std::vector<std::string> differing;
  for (const std::string& key : keys) {
    const json first =
        settings.front()->is_object() ? settings.front()->value(key, json()) : json();
    for (const json* each : settings) {
      if ((each->is_object() ? each->value(key, json()) : json()) != first) {
        differing.push_back(key);
        break;
      }
    }
  }
  return differing;
}

}  // namespace maskprior::runfolder
