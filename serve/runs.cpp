// The dashboard's answers: run folders, their curves, their learned masks, suite reports.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "compiler/compile.h"
#include "core/regular_file.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "io/mask_file.h"
#include "io/safetensors.h"
#include "render/grid.h"
#include "runfolder/run_files.h"
#include "runfolder/run_state.h"
#include "runfolder/runs.h"
#include "serve/api.h"
#include "serve/mask_reply.h"
#include "tasks/family.h"

namespace maskprior::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr uint64_t kMaxJsonFileBytes = uint64_t{4} << 20;
constexpr size_t kMaxRuns = 2000;
/// The settings the runs table shows of a lone run, when its config has them.
const char* const kShownSettings[] = {"preset", "seed", "lr", "depth", "heads", "dim", "n"};
/// Where run_row keeps a run's whole config until shown_settings has compared the runs.
constexpr const char* kConfigSlot = "_config";

/// The runs table's settings: with several runs, the seed and every setting in which the runs
/// differ (what a sweep swept, what a run overrode), in place of the fixed few; a lone run keeps
/// them. Each run's `group` names its setting: the differing settings but the seed ("init=mask,
/// lr=0.001"; "" when only seeds differ), so that the page pools a setting's seeds as a report
/// does. The configs run_row kept are dropped.
void shown_settings(json& rows) {
  std::vector<const json*> configs;
  for (const json& row : rows) {
    if (row.contains(kConfigSlot)) configs.push_back(&row[kConfigSlot]);
  }
  std::set<std::string> hidden = {"out", "seed", "resolved", "config_format"};
  for (const std::string& key : runfolder::execution_keys()) hidden.insert(key);
  std::vector<std::string> differing;
  for (std::string& key : runfolder::differing_keys(configs)) {
    if (!hidden.contains(key)) differing.push_back(std::move(key));
  }
  for (json& row : rows) {
    if (!row.contains(kConfigSlot)) continue;
    const json& config = row[kConfigSlot];
    std::vector<std::string> group;
    for (const std::string& key : differing) {
      const json value = config.value(key, json());
      group.push_back(key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
    }
    row["group"] = fmt::format("{}", fmt::join(group, ", "));
    if (rows.size() > 1) {
      json settings = json::object();
      if (config.contains("seed")) settings["seed"] = config["seed"];
      for (const std::string& key : differing) settings[key] = config.value(key, json());
      row["settings"] = settings;
    }
    row.erase(kConfigSlot);
  }
}

/// The file `name` of the run folder `run`, if it has one: a regular file reached without leaving
/// DIR. A link that leads out of DIR is refused (RequestError 403), and nothing is read through it.
std::optional<fs::path> run_file(const ServedDir& dir, const fs::path& run, std::string_view name) {
  std::error_code error;
  if (!fs::exists(fs::symlink_status(run / name, error))) return std::nullopt;
  try {
    return dir.file_to_read(dir.relative(run / name));
  } catch (const RequestError& e) {
    if (e.status() == 404) return std::nullopt;
    throw;
  }
}

/// A run's JSON file, nested at most kMaxJsonDepth deep (io/json_file.h), as every JSON file
/// maskc reads.
std::optional<json> read_run_json(const ServedDir& dir, const fs::path& run,
                                  std::string_view name) {
  const auto path = run_file(dir, run, name);
  if (!path) return std::nullopt;
  return parse_json(read_regular_file(path->string(), kMaxJsonFileBytes, "run file"),
                    dir.relative(*path));
}

/// One line of a .jsonl file as JSON; nullopt for a line that is not JSON (a line cut short by a
/// run writing it) or is nested too deep.
std::optional<json> parse_record(std::string_view line) {
  try {
    return parse_json(line, "record");
  } catch (const InputError&) {
    return std::nullopt;
  }
}

/// `record` cut to its numbers (a list of numbers, per layer, becomes its mean, as the report
/// plots it).
json numbers_of(const json& record) {
  json numbers = json::object();
  for (const auto& [key, value] : record.items()) {
    if (value.is_number_integer()) {  // a step stays an integer in the reply
      numbers[key] = value;
      continue;
    }
    const double number = runfolder::metric_value(record, key);
    if (std::isfinite(number)) numbers[key] = number;
  }
  return numbers;
}

/// The records of a run's .jsonl file, each cut to its numbers; a last line cut short (a run
/// writing it) is left out.
json numeric_records(const ServedDir& dir, const fs::path& run, std::string_view name) {
  json records = json::array();
  const auto path = run_file(dir, run, name);
  if (!path) return records;
  const std::string text =
      read_regular_file(path->string(), runfolder::kMaxMetricsBytes, "metrics log");
  size_t start = 0;
  for (size_t end = text.find('\n'); end != std::string::npos;
       start = end + 1, end = text.find('\n', start)) {
    const auto record = parse_record(std::string_view(text).substr(start, end - start));
    if (record && record->is_object()) records.push_back(numbers_of(*record));
  }
  return records;
}

/// The newest complete record of a run's .jsonl file, from its last kTailBytes only: the runs
/// table asks for it on every poll, and a long run's log is tens of MiB.
std::optional<json> last_record(const ServedDir& dir, const fs::path& run, std::string_view name) {
  constexpr uint64_t kTailBytes = uint64_t{1} << 20;
  const auto path = run_file(dir, run, name);
  if (!path) return std::nullopt;
  InputFile file(path->string());
  const uint64_t from = file.size() > kTailBytes ? file.size() - kTailBytes : 0;
  const std::string text = file.read_string(from, file.size() - from);
  size_t end = text.rfind('\n');
  while (end != std::string::npos && end > 0) {
    const size_t start = text.rfind('\n', end - 1);
    const size_t begin = start == std::string::npos ? 0 : start + 1;
    if (start == std::string::npos && from > 0) break;  // the first line may be cut by the tail
    auto record = parse_record(std::string_view(text).substr(begin, end - begin));
    if (record && record->is_object()) return numbers_of(*record);
    if (start == std::string::npos) break;
    end = start;
  }
  return std::nullopt;
}

/// "finished" (summary.json), "running" (the lock of a training process), else "stopped".
std::string run_status(const fs::path& run) {
  return runfolder::run_state_name(runfolder::run_state(run));
}

std::string headline_key(const json& config) {
  try {
    return tasks::family_of_run(config).headline().key;
  } catch (const std::exception&) {
    return "";  // a task of no family this maskc knows: the table shows no headline
  }
}

/// The last value of `key` in a run: from its summary, else its newest evaluation.
json headline_value(const ServedDir& dir, const fs::path& run, const std::string& key) {
  if (key.empty()) return nullptr;
  if (auto summary = read_run_json(dir, run, runfolder::kSummaryFile)) {
    const double value = runfolder::metric_value(*summary, key);
    if (std::isfinite(value)) return value;
  }
  const auto record = last_record(dir, run, runfolder::kMetricsFile);
  if (record && record->contains(key)) return (*record)[key];
  return nullptr;
}

/// A finished run over several sizes: `key` at each size its summary's by_length holds, as
/// [size, value] pairs in ascending size (an empty list for other runs).
json by_length(const ServedDir& dir, const fs::path& run, const std::string& key) {
  json points = json::array();
  if (key.empty()) return points;
  const auto summary = read_run_json(dir, run, runfolder::kSummaryFile);
  if (!summary || !summary->is_object()) return points;
  const auto sizes = summary->find("by_length");
  if (sizes == summary->end() || !sizes->is_object()) return points;
  std::map<int64_t, double> values;
  for (const auto& [size, metrics] : sizes->items()) {
    int64_t at = 0;
    const auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), at);
    if (error != std::errc() || end != size.data() + size.size() || !metrics.is_object()) continue;
    const double value = runfolder::metric_value(metrics, key);
    if (std::isfinite(value)) values[at] = value;
  }
  for (const auto& [at, value] : values) points.push_back({at, value});
  return points;
}

json run_row(const ServedDir& dir, const fs::path& run) {
  json row = {{"path", dir.relative(run)}, {"status", run_status(run)}};
  try {
    const json config = read_run_json(dir, run, runfolder::kConfigFile).value_or(json::object());
    for (const char* key : {"task", "spec", "init", "data", "truth_table"}) {
      if (config.contains(key) && !config[key].is_null()) row[key] = config[key];
    }
    json settings = json::object();
    for (const char* key : kShownSettings) {
      if (config.contains(key)) settings[key] = config[key];
    }
    row["settings"] = settings;
    row[kConfigSlot] = config;  // for shown_settings; not sent
    row["metric"] = headline_key(config);
    row["value"] = headline_value(dir, run, row["metric"].get<std::string>());
  } catch (const std::exception& e) {
    row["status"] = "unreadable";
    row["error"] = without_root(escape_control_chars(e.what(), true), dir.root());
  }
  return row;
}

std::string query_value(const Query& query, const std::string& key) {
  const auto at = query.find(key);
  return at == query.end() ? "" : at->second;
}

int64_t query_int(const Query& query, const std::string& key) {
  const std::string text = query_value(query, key);
  if (text.empty()) return 0;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    throw RequestError(400, fmt::format("{} is no whole number", quote_input(text)));
  }
}

}  // namespace

Reply Api::runs() const {
  json rows = json::array();
  std::error_code error;
  auto it = fs::recursive_directory_iterator(dir_.root(),
                                             fs::directory_options::skip_permission_denied, error);
  bool truncated = false;
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_symlink() || !it->is_directory()) continue;
    const std::string name = it->path().filename().string();
    if (!name.empty() && name[0] == '.') {
      it.disable_recursion_pending();
      continue;
    }
    if (!fs::is_regular_file(it->path() / runfolder::kConfigFile)) continue;
    if (rows.size() == kMaxRuns) {
      truncated = true;  // the table says so rather than silently showing the first kMaxRuns
      break;
    }
    rows.push_back(run_row(dir_, it->path()));
  }
  if (fs::is_regular_file(dir_.root() / runfolder::kConfigFile)) {
    rows.push_back(run_row(dir_, dir_.root()));
  }
  shown_settings(rows);
  return Reply{200, "application/json",
               json_text({{"runs", rows}, {"truncated", truncated}, {"max_runs", kMaxRuns}})};
}

Reply Api::run(const Query& query) const {
  const fs::path run = dir_.folder(query_value(query, "path"));
  const json config = read_run_json(dir_, run, runfolder::kConfigFile).value_or(json::object());
  const json reply = {{"path", dir_.relative(run)},
                      {"status", run_status(run)},
                      {"metric", headline_key(config)},
                      {"metrics", numeric_records(dir_, run, runfolder::kMetricsFile)},
                      {"by_length", by_length(dir_, run, headline_key(config))},
                      {"steps", numeric_records(dir_, run, runfolder::kStepsJsonFile)},
                      {"has_mask", run_file(dir_, run, runfolder::kMaskFile).has_value()}};
  return Reply{200, "application/json", json_text(reply)};
}

Reply Api::run_mask(const Query& query) const {
  const fs::path run = dir_.folder(query_value(query, "path"));
  const std::string learned_path =
      dir_.file_to_read(dir_.relative(run / runfolder::kMaskFile)).string();
  {
    // The size the file's header declares, against the page's limit, before a byte of it is read.
    InputFile file(learned_path);
    const SafetensorsHeader header = read_safetensors_header(file, options_.max_bytes);
    const auto mask = header.tensors.find("mask");
    if (mask != header.tensors.end() && mask->second.shape.size() == 4 &&
        mask->second.shape[3] > options_.max_page_tokens) {
      throw RequestError(413, fmt::format("{} tokens: the page draws masks of at most {}",
                                          mask->second.shape[3], options_.max_page_tokens));
    }
  }
  const CompiledMask learned = read_mask_file(learned_path, options_.max_bytes);
  std::map<std::string, std::string> defines;
  for (const auto& [name, value] : learned.params) defines[name] = fmt::format("{}", value);
  CompileOptions options = compile_options(defines);
  options.open_value = learned.open_value;
  options.close_value = learned.close_value;
  const auto spec = run_file(dir_, run, runfolder::kSpecFile);
  if (!spec) throw RequestError(404, "the run folder has no spec.mask to compare its mask with");
  const CompiledMask init = compile_file(spec->string(), options);
  const CompiledMask difference = mask_difference(init, learned);
  if (difference.n > options_.max_page_tokens) {
    throw RequestError(413, fmt::format("{} tokens: the page draws masks of at most {}",
                                        difference.n, options_.max_page_tokens));
  }
  const int64_t layer = query_int(query, "layer");
  const int64_t head = query_int(query, "head");
  json header = mask_header(difference, layer, head);
  header["difference"] = true;
  return Reply{200, "application/octet-stream", mask_reply_body(difference, layer, head, header)};
}

Reply Api::reports() const {
  json reports = json::array();
  for (const std::string& report : dir_.list_files({"REPORT.md"})) {
    json plots = json::array();
    const fs::path folder = (dir_.root() / report).parent_path() / "plots";
    std::error_code error;
    for (auto it = fs::directory_iterator(folder, error); !error && it != fs::directory_iterator();
         it.increment(error)) {
      if (!it->is_symlink() && it->path().extension() == ".png") {
        plots.push_back(dir_.relative(it->path()));
      }
    }
    std::sort(plots.begin(), plots.end());
    reports.push_back({{"path", report}, {"plots", plots}});
  }
  return Reply{200, "application/json", json_text({{"reports", reports}})};
}

Reply Api::raw(const Query& query) const {
  const fs::path path = dir_.file_to_read(query_value(query, "path"));
  const std::string extension = path.extension().string();
  if (extension != ".md" && extension != ".png") {
    throw RequestError(403, "the dashboard shows .md reports and .png plots only");
  }
  return Reply{200, extension == ".png" ? "image/png" : "text/plain; charset=utf-8",
               read_regular_file(path.string(), uint64_t{32} << 20, "file")};
}

}  // namespace maskprior::serve
