#include "experiments/sweep.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>
#include <type_traits>

#include "core/error.h"
#include "core/supervisor.h"
#include "core/text.h"
#include "experiments/run_plan.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "io/lock_file.h"
#include "report/report.h"
#include "report/results.h"
#include "runfolder/run_files.h"
#include "train/config.h"
#include "train/interrupt.h"
#include "train/train.h"

namespace maskprior::training {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// Why `field` cannot be swept; "" when it can.
std::string not_sweepable(const ConfigField& field) {
  if (field.key == "seed") return "seeds are given by --seeds";
  if (field.key == "out") return "the runs' folders are named by their settings under --out";
  if (field.resumable) {
    return "it is an execution setting, which changes how a run is computed, not what it "
           "learns (give it after --)";
  }
  if (std::holds_alternative<std::map<std::string, std::string> TrainConfig::*>(field.member)) {
    return "give -D NAME=VALUE after --, or sweep spec files";
  }
  return "";
}

/// The keys --grid accepts, for messages.
std::string sweepable_keys() {
  std::vector<std::string> keys;
  for (const ConfigField& field : config_fields()) {
    if (not_sweepable(field).empty()) keys.push_back(field.key);
  }
  return fmt::format("{}", fmt::join(keys, ", "));
}

/// `text` as a whole number of type T, or nullopt.
template <class T>
std::optional<T> whole_number(const std::string& text) {
  T value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

/// `text` split at each comma that is not `\,` (a comma inside a piece: a file name holding one);
/// `keep_escapes` keeps the `\,` in the pieces (for a second split), else a piece holds ",".
std::vector<std::string> split_at_commas(const std::string& text, bool keep_escapes) {
  std::vector<std::string> pieces(1);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ',') {
      if (keep_escapes) pieces.back() += '\\';
      pieces.back() += text[++i];
    } else if (text[i] == ',') {
      pieces.emplace_back();
    } else {
      pieces.back() += text[i];
    }
  }
  return pieces;
}

/// One value of `field` as config.json spells it: InputError naming the key and what it takes.
json typed_value(const ConfigField& field, const std::string& text, std::string_view flag) {
  const auto bad = [&](const std::string& takes) {
    return InputError(fmt::format("{} {}: '{}' is not {}", flag, field.key, text, takes));
  };
  return std::visit(
      [&](auto member) -> json {
        using T = std::decay_t<decltype(TrainConfig().*member)>;
        if constexpr (std::is_same_v<T, std::string>) {
          if (field.allowed.empty() || (text.empty() && field.rule == FieldRule::kOneOfOrEmpty) ||
              std::find(field.allowed.begin(), field.allowed.end(), text) != field.allowed.end()) {
            return text;
          }
          throw bad(fmt::format("one of {}", fmt::join(field.allowed, ", ")));
        } else if constexpr (std::is_same_v<T, bool>) {
          if (text == "true" || text == "false") return text == "true";
          throw bad("true or false");
        } else if constexpr (std::is_integral_v<T>) {
          if (auto value = whole_number<T>(text)) return *value;
          throw bad("a whole number");
        } else if constexpr (std::is_same_v<T, double> ||
                             std::is_same_v<T, std::optional<double>>) {
          if (std::is_same_v<T, std::optional<double>> && text == "none") return nullptr;
          char* end = nullptr;
          const double value = std::strtod(text.c_str(), &end);
          if (!text.empty() && *end == '\0' && std::isfinite(value)) return value;
          throw bad(std::is_same_v<T, double> ? "a finite number" : "a finite number or none");
        } else {
          throw InternalError("--grid: a map field is not sweepable");
        }
      },
      field.member);
}

/// FNV-1a of `text`, 8 hex digits: a short, stable tag.
std::string short_hash(const std::string& text) {
  uint32_t hash = 2166136261u;
  for (unsigned char c : text) hash = (hash ^ c) * 16777619u;
  return fmt::format("{:08x}", hash);
}

/// How a value reads in a folder name: a path by its file name, characters other than letters,
/// digits and . _ + - as _.
std::string folder_text(const json& value) {
  // Numbers as written, shortest first: 1 and 0.02, not 1.0.
  std::string text = value.is_string()         ? value.get<std::string>()
                     : value.is_null()         ? "none"
                     : value.is_number_float() ? fmt::format("{}", value.get<double>())
                                               : value.dump();
  if (value.is_string() && text.find('/') != std::string::npos) {
    text = fs::path(text).filename().string();
  }
  for (char& c : text) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '+' &&
        c != '-') {
      c = '_';
    }
  }
  return text.empty() ? "none" : text;
}

/// The folder texts of an axis's values, a short hash added to all when two would read alike.
std::vector<std::string> axis_texts(const SweepAxis& axis) {
  std::vector<std::string> texts;
  for (const json& value : axis.values) texts.push_back(folder_text(value));
  if (std::set<std::string>(texts.begin(), texts.end()).size() < texts.size()) {
    for (size_t i = 0; i < texts.size(); ++i) {
      texts[i] += '-';
      texts[i] += short_hash(axis.values[i].dump());
    }
  }
  return texts;
}

std::string string_of(const json& settings, const char* key) {
  const json value = settings.value(key, json());
  return value.is_string() ? value.get<std::string>() : std::string();
}

/// The settings of one run of `point`: every run's, the point's, then `extra` (seed, out,
/// execution settings).
json run_settings(const SweepOptions& options, const SweepPoint& point, const json& extra) {
  json settings = options.base.is_object() ? options.base : json::object();
  settings.update(point.settings);
  settings.update(extra);
  return settings;
}

TrainConfig resolve(const json& settings) {
  return resolve_config(string_of(settings, "task"), string_of(settings, "preset"), settings);
}

fs::path run_dir(const SweepOptions& options, const SweepPoint& point, int seed) {
  return fs::path(options.out) / point.name / fmt::format("seed{}", seed);
}

}  // namespace

SweepAxis parse_axis(const std::string& text, std::string_view flag) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError(fmt::format("{} '{}': give KEY={} with KEY one of {}", flag, text,
                                 flag == "--grid" ? "V1,V2,..." : "VALUE", sweepable_keys()));
  }
  SweepAxis axis{text.substr(0, eq), {}};
  const ConfigField* field = nullptr;
  for (const ConfigField& row : config_fields()) {
    if (row.key == axis.key) field = &row;
  }
  if (field == nullptr) {
    throw InputError(
        fmt::format("{}: unknown key '{}' (keys: {})", flag, axis.key, sweepable_keys()));
  }
  if (const std::string why = not_sweepable(*field); !why.empty()) {
    throw InputError(fmt::format("{}: {} cannot be swept: {}", flag, axis.key, why));
  }
  // Values split at each comma; `\,` is a comma inside one (a file name holding a comma).
  for (const std::string& piece : split_at_commas(text.substr(eq + 1), /*keep_escapes=*/false)) {
    axis.values.push_back(typed_value(*field, piece, flag));
  }
  std::set<std::string> seen;
  for (const json& value : axis.values) {
    if (!seen.insert(value.dump()).second) {
      throw InputError(fmt::format("{} {}: {} is given twice", flag, axis.key, value.dump()));
    }
  }
  return axis;
}

SweepPoint parse_point(const std::string& text) {
  // KEY=VALUE pieces, their `\,` kept for parse_axis to unescape.
  std::vector<SweepAxis> axes;
  for (const std::string& piece : split_at_commas(text, /*keep_escapes=*/true)) {
    SweepAxis axis = parse_axis(piece, "--point");
    for (const SweepAxis& earlier : axes) {
      if (earlier.key == axis.key) {
        throw InputError(fmt::format("--point '{}': {} is given twice", text, axis.key));
      }
    }
    axes.push_back(std::move(axis));
  }
  return grid_points(axes).front();
}

std::vector<SweepPoint> grid_points(const std::vector<SweepAxis>& grid) {
  std::vector<std::vector<std::string>> texts;
  for (const SweepAxis& axis : grid) texts.push_back(axis_texts(axis));
  std::vector<SweepPoint> points;
  std::vector<size_t> at(grid.size(), 0);  // an odometer, the last axis fastest
  while (!grid.empty()) {
    SweepPoint point{"", json::object()};
    for (size_t a = 0; a < grid.size(); ++a) {
      point.settings[grid[a].key] = grid[a].values[at[a]];
      point.name += fmt::format("{}{}={}", a ? "," : "", grid[a].key, texts[a][at[a]]);
    }
    points.push_back(std::move(point));
    size_t a = grid.size();
    while (a > 0 && ++at[a - 1] == grid[a - 1].values.size()) at[--a] = 0;
    if (a == 0) break;
  }
  return points;
}

std::vector<SweepPoint> combinations(const SweepOptions& options) {
  if (options.points.empty()) return grid_points(options.grid);
  std::set<std::string> names;
  for (const SweepPoint& point : options.points) {
    if (!names.insert(point.name).second) {
      throw InputError(fmt::format("--point {} is given twice", point.name));
    }
  }
  return options.points;
}

std::vector<SweepPoint> sweep_points(const SweepOptions& options) {
  const char* flag = options.points.empty() ? "--grid combination" : "--point";
  std::vector<SweepPoint> points = combinations(options);
  for (const SweepPoint& point : points) {
    try {
      check_trains_a_step(resolve(run_settings(
          options, point, {{"seed", 0}, {"out", run_dir(options, point, 0).string()}})));
    } catch (const InputError& e) {
      throw InputError(fmt::format("{} {}: {}", flag, point.name, e.what()));
    }
    if (point.name.size() > NAME_MAX) {
      throw InputError(
          fmt::format("{} {}...: its folder name has {} bytes, more than the {} of a file "
                      "name; sweep fewer keys at once, or give the files shorter names",
                      flag, point.name.substr(0, 60), point.name.size(), NAME_MAX));
    }
  }
  return points;
}

void check_sweep_inputs(const std::vector<SweepPoint>& points, const SweepOptions& options) {
  for (const SweepPoint& point : points) {
    const json settings = run_settings(options, point, json::object());
    check_device_available(settings.value("device", std::string("auto")));
    for (const char* key : {"spec", "data", "test_data", "truth_table"}) {
      const std::string path = string_of(settings, key);
      if (!path.empty() && !fs::is_regular_file(path)) {
        const bool swept = point.settings.contains(key);
        throw InputError(fmt::format(
            "[sweep] {} ({}): {} '{}' is not a file{}", point.name, key, key, path,
            swept ? " (--grid splits values at commas: write \\, for a comma in a file name)"
                  : ""));
      }
    }
  }
}

void check_sweep_runs(const std::vector<SweepPoint>& points, const SweepOptions& options) {
  // In a child process: the checks start LibTorch's and oneTBB's threads, which must not be
  // running in the process that forks the runs. Its first failure comes back through a pipe.
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw InputError(fmt::format("[sweep] cannot check the runs: {}", std::strerror(errno)));
  }
  const int to_parent = pipe_fds[1];
  const ChildProcess checker{
      "[sweep] checking every combination", [&points, &options, to_parent] {
        for (const SweepPoint& point : points) {
          try {
            check_run(resolve(run_settings(options, point, {{"seed", 0}, {"out", ""}})));
          } catch (const std::exception& e) {
            // Below the pipe's buffer: written before anyone reads.
            const std::string message =
                fmt::format("[sweep] {}: {}", point.name, e.what()).substr(0, 16384);
            if (::write(to_parent, message.data(), message.size()) < 0) {
              return 2;
            }
            return 1;
          }
        }
        return 0;
      }};
  const Supervision checked = supervise({checker}, SuperviseOptions{});
  ::close(pipe_fds[1]);
  std::string message;
  char buffer[4096];
  for (ssize_t got; (got = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
    message.append(buffer, static_cast<size_t>(got));
  }
  ::close(pipe_fds[0]);
  if (const ChildExit* failed = checked.first_failure()) {
    throw InputError(message.empty() ? fmt::format("[sweep] checking the combinations ended with "
                                                   "status {}",
                                                   failed->status)
                                     : message);
  }
}

namespace {

/// The grid as results.json records it. A list of combinations (--point) is recorded as the
/// axes it spans (each key with the values its combinations give, in order), for the report's
/// plots against each swept setting.
json grid_json(const SweepOptions& options) {
  std::vector<SweepAxis> axes = options.grid;
  for (const SweepPoint& point : options.points) {
    for (const auto& [key, value] : point.settings.items()) {
      auto axis =
          std::find_if(axes.begin(), axes.end(), [&](const auto& a) { return a.key == key; });
      if (axis == axes.end()) axis = axes.insert(axes.end(), SweepAxis{key, {}});
      if (std::find(axis->values.begin(), axis->values.end(), value) == axis->values.end())
        axis->values.push_back(value);
    }
  }
  json out = json::array();
  for (const SweepAxis& axis : axes) out.push_back({{"key", axis.key}, {"values", axis.values}});
  return out;
}

/// A list of combinations as results.json records it: each one's name and settings.
json points_json(const std::vector<SweepPoint>& points) {
  json out = json::array();
  for (const SweepPoint& point : points)
    out.push_back({{"name", point.name}, {"settings", point.settings}});
  return out;
}

/// Every run's settings without the execution settings (threads, ...): what a sweep's results
/// are of.
json learned_base(json base) {
  if (!base.is_object()) return json::object();
  for (const std::string& key : runfolder::execution_keys()) base.erase(key);
  return base;
}

/// The grid's keys, in order, as results.json records them (empty for anything else).
std::vector<std::string> grid_keys(const json& grid) {
  std::vector<std::string> keys;
  if (!grid.is_array()) return keys;
  for (const json& axis : grid) keys.push_back(axis.is_object() ? axis.value("key", "") : "");
  return keys;
}

/// The results.json of an earlier sweep in options.out that this one extends: the same flags
/// after -- and the same grid keys (other values, or more seeds, add cells or runs to it), or,
/// for a list of combinations (--point), an earlier list (more combinations add cells).
/// nullopt when options.out holds no results; InputError when they are another command's or
/// another sweep's (other keys or flags), which this sweep would overwrite.
std::optional<json> earlier_results(const SweepOptions& options) {
  const fs::path path = fs::path(options.out) / "results.json";
  if (!fs::is_regular_file(path)) return std::nullopt;
  const json results = read_json_file(path.string());
  std::vector<std::string> keys;
  for (const SweepAxis& axis : options.grid) keys.push_back(axis.key);
  const bool listed = !options.points.empty();
  if (results.is_object() && results.value("command", json()) == "sweep" &&
      results.contains("points") == listed &&
      (listed || grid_keys(results.value("grid", json())) == keys) &&
      learned_base(results.value("base", json())) == learned_base(options.base)) {
    return results;
  }
  throw InputError(fmt::format(
      "{} holds the results of another {} ({}), which this sweep would overwrite: choose another "
      "--out, or move its results.md and results.json away first (its runs stay where they are)",
      printable_utf8(options.out),
      results.is_object() && results.value("command", json()) == "sweep" ? "sweep" : "command",
      printable_utf8(path.string())));
}

/// What the tables cover: this sweep and the earlier one it extends (`earlier`, its results.json),
/// each key's values (the earlier first) and the more seeds; the runs of the cells the two do
/// not share are tabulated where their folders hold finished runs.
SweepOptions tabulated(const SweepOptions& options, const std::optional<json>& earlier) {
  SweepOptions both = options;
  if (!earlier) return both;
  both.seeds = std::max(options.seeds, earlier->value("seeds", 1));
  if (!options.points.empty()) {  // the earlier combinations first, then this sweep's new ones
    both.points.clear();
    for (const json& point : (*earlier)["points"]) {
      if (point.is_object() && point.value("name", json()).is_string())
        both.points.push_back(
            {point["name"].get<std::string>(), point.value("settings", json::object())});
    }
    for (const SweepPoint& point : options.points) {
      const bool known = std::any_of(both.points.begin(), both.points.end(),
                                     [&](const SweepPoint& p) { return p.name == point.name; });
      if (!known) both.points.push_back(point);
    }
    return both;
  }
  const json& grid = (*earlier)["grid"];
  for (size_t a = 0; a < both.grid.size(); ++a) {
    std::vector<json> values = grid[a].value("values", std::vector<json>{});
    for (const json& v : both.grid[a].values) {
      if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
    }
    both.grid[a].values = values;
  }
  return both;
}

/// Trains, resumes or reuses one run of the sweep.
json run_one(const SweepOptions& options, const SweepPoint& point, int seed,
             const json& execution) {
  const fs::path dir = run_dir(options, point, seed);
  json settings = run_settings(options, point, {{"seed", seed}, {"out", dir.string()}});
  settings.update(execution);
  if (auto summary = reuse_or_resume(dir.string(), settings, "sweep")) return *summary;
  return train(resolve(settings));
}

/// Every run: each combination's seeds, named "NAME seed K".
std::vector<PlannedRun> plan_runs(const SweepOptions& options,
                                  const std::vector<SweepPoint>& points) {
  std::vector<PlannedRun> runs;
  for (const SweepPoint& point : points) {
    for (int seed = 0; seed < options.seeds; ++seed) {
      const fs::path dir = run_dir(options, point, seed);
      runs.push_back(
          {fmt::format("{} seed {}", point.name, seed), dir.string(),
           [options, point, seed](const json& execution) {
             return run_one(options, point, seed, execution);
           },
           point.name,
           [options, point, seed, dir] {
             return resolve(run_settings(options, point, {{"seed", seed}, {"out", dir.string()}}));
           }});
    }
  }
  return runs;
}

/// "Grid: `init` = vanilla, mask; `lr` = 0.001, 0.01", or "Combinations: `init=vanilla`;
/// `init=mask,lr=0.01`" for a list of them.
std::string grid_text(const SweepOptions& options) {
  std::vector<std::string> parts;
  if (!options.points.empty()) {
    for (const SweepPoint& point : options.points) parts.push_back(fmt::format("`{}`", point.name));
    return fmt::format("Combinations: {}", fmt::join(parts, "; "));
  }
  for (const SweepAxis& axis : options.grid) {
    std::vector<std::string> values;
    for (const json& v : axis.values)
      values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    parts.push_back(fmt::format("`{}` = {}", axis.key, fmt::join(values, ", ")));
  }
  return fmt::format("Grid: {}", fmt::join(parts, "; "));
}

/// results.json's rows and results.md's tables of the finished runs: one row per combination.
std::pair<json, std::string> tabulate(const std::vector<SweepPoint>& points,
                                      const std::vector<PlannedRun>& runs,
                                      const std::set<std::string>& failed) {
  std::map<std::string, json> settings;
  for (const SweepPoint& point : points) settings[point.name] = point.settings;
  const std::vector<runfolder::RunRow> rows =
      runfolder::group_runs(finished_records(runs, failed), "");
  json aggregated = json::array();
  for (const runfolder::RunRow& row : rows) {
    json seeds = json::array();
    for (const runfolder::RunRecord& run : row.runs) seeds.push_back(run.config.value("seed", 0));
    aggregated.push_back({{"label", row.label},
                          {"settings", settings.at(row.runs.front().row)},
                          {"seeds", seeds},
                          {"metrics", report::aggregate_row(row)}});
  }
  return {aggregated, report::family_tables(rows, aggregated)};
}

/// results.md's heading: the grid, the seeds and the flags every run shares; `extended`: the
/// grid joins sweeps into one folder, whose cells may have run different seeds.
std::string results_heading(const SweepOptions& options, bool extended) {
  return fmt::format(
      "# maskc sweep\n\n{}; {}{} seed{} each. Every run: `{}`. One row per combination of "
      "settings: mean ± std over its seeds.\n\n",
      grid_text(options), extended ? "sweeps into this folder, up to " : "", options.seeds,
      options.seeds == 1 ? "" : "s", options.base.dump());
}

}  // namespace

json dry_run_sweep(const SweepOptions& options, std::ostream& out) {
  const std::vector<SweepPoint> points = sweep_points(options);
  check_sweep_inputs(points, options);
  out << fmt::format("maskc sweep --dry-run: {} combination{} × {} seed{} in {}\n", points.size(),
                     points.size() == 1 ? "" : "s", options.seeds, options.seeds == 1 ? "" : "s",
                     printable_utf8(options.out));
  PlanOptions plan{"sweep", options.jobs, options.base.contains("threads"), std::nullopt,
                   std::nullopt};
  return dry_run_plan(plan_runs(options, points), plan, out);
}

json run_sweep(const SweepOptions& options, std::ostream& out) {
  const std::vector<SweepPoint> points = sweep_points(options);
  check_sweep_inputs(points, options);
  // A folder of another sweep's run with other settings is refused before anything runs.
  for (const SweepPoint& point : points) {
    for (int seed = 0; seed < options.seeds; ++seed) {
      const fs::path dir = run_dir(options, point, seed);
      if (!fs::is_regular_file(dir / runfolder::kConfigFile)) continue;
      check_started(dir.string(),
                    run_settings(options, point, {{"seed", seed}, {"out", dir.string()}}), "sweep");
    }
  }
  const std::optional<json> earlier = earlier_results(options);
  check_sweep_runs(points, options);
  const bool split = options.world && options.world->size > 1;
  const bool sharded = options.shard_count > 1;
  fs::create_directories(options.out);
  // One sweep per folder; ranks and array tasks share it (rank 0 alone holds the lock).
  const bool locks = sharded ? false : !split || options.world->rank == 0;
  const FolderLock lock(locks ? options.out : std::string());
  InterruptScope signals;
  const std::vector<PlannedRun> runs = plan_runs(options, points);
  PlanOptions plan{"sweep", options.jobs, options.base.contains("threads"), options.world,
                   std::nullopt};
  plan.status_every = options.status_every;
  if (sharded) plan.shard = PlanShard{options.shard_index, options.shard_count};
  if (sharded) plan.world.reset();
  const PlanOutcome outcome = run_plan(runs, plan, out);
  if (split && !sharded && options.world->rank != 0) {  // rank 0 writes the tables
    return {{"rank", options.world->rank}, {"interrupted", outcome.interrupted}};
  }
  if (!outcome.tabulate) {
    out << (outcome.interrupted ? "interrupted: run the same command again to continue\n"
                                : "this share is done; the tables come with the last run\n");
    return {{"interrupted", outcome.interrupted}, {"tabulated", false}};
  }
  // The tables of every finished run of this sweep and of the earlier one it extends.
  const SweepOptions table = tabulated(options, earlier);
  const std::vector<SweepPoint> table_points = combinations(table);
  auto [rows, tables] = tabulate(table_points, plan_runs(table, table_points), outcome.failed);
  json results = {{"command", "sweep"},
                  {"base", options.base},
                  {"seeds", table.seeds},
                  {"rows", rows},
                  {"interrupted", outcome.interrupted}};
  results["grid"] = grid_json(table);
  if (!table.points.empty()) results["points"] = points_json(table.points);
  if (!outcome.failed.empty()) results["failed"] = outcome.failed;
  write_results_files(options.out, results_heading(table, earlier.has_value()), tables, results,
                      out);
  if (!outcome.interrupted) throw_if_failed(outcome.failed, "sweep");
  return results;
}

}  // namespace maskprior::training
