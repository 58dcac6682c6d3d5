// REPORT.md's tables and text blocks (see tables.h).
#include "report/tables.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <set>
#include <string_view>
#include <utility>

#include "compiler/compile.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "runfolder/run_files.h"
#include "runfolder/run_state.h"
#include "tasks/truth_table.h"
#include "validate/mdi.h"
#include "validate/validate.h"

namespace maskprior::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// "mean (reached k/n)" of the first step at which `key` reached `threshold`.
std::string steps_cell(const ReportRow& row, const std::string& key, double threshold) {
  std::vector<double> steps;
  for (const RunRecord& run : row.runs) {
    if (auto s = steps_to(run, key, threshold)) steps.push_back(static_cast<double>(*s));
  }
  if (steps.empty()) return fmt::format("never (0/{})", row.runs.size());
  const Summary s = summarize(steps);
  return fmt::format("{:.0f}{} ({}/{})", s.mean, s.n > 1 ? fmt::format(" ± {:.0f}", s.std) : "",
                     steps.size(), row.runs.size());
}

/// The spec path of a run as it can be opened from here.
std::string spec_path(const std::string& spec, const std::string& share_dir) {
  if (spec.empty() || fs::path(spec).is_absolute() || fs::exists(spec)) return spec;
  return (fs::path(share_dir) / spec).string();
}

std::string wall_cell(const Summary& wall) {
  return wall.n == 0 ? "—" : fmt::format("{:.0f}", wall.mean);
}

/// A config value as text; "—" when the run's config does not have it.
std::string field(const json& config, const char* key) {
  if (!config.contains(key) || config[key].is_null()) return "—";
  const json& v = config[key];
  if (v.is_string()) return inert(v.get<std::string>());
  if (v.is_number_float()) return fmt::format("{:g}", v.get<double>());
  return inert(v.dump());
}

/// A row's settings but those only a prior reads (runfolder/run_files.h kPriorKeys).
json without_prior(const ReportRow& row) {
  json settings = row.settings.is_object() ? row.settings : json::object();
  for (const std::string_view key : runfolder::kPriorKeys) settings.erase(std::string(key));
  return settings;
}

/// The two-sided 95% quantile of Student's t with `df` degrees of freedom (1.96 past 30).
double t_quantile_95(size_t df) {
  static constexpr double kTable[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                      2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                      2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                      2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  return df == 0 ? NAN : df <= 30 ? kTable[df - 1] : 1.96;
}

/// `key` of each seed of a row's runs.
std::map<int64_t, double> by_seed(const ReportRow& row, const std::string& key) {
  std::map<int64_t, double> values;
  for (const RunRecord& run : row.runs) {
    const json seed = run.config.value("seed", json());
    const double v = metric_value(run.summary, key);
    if (seed.is_number_integer() && std::isfinite(v)) values[seed.get<int64_t>()] = v;
  }
  return values;
}

}  // namespace

std::string mdi_text(const TaskSection& section, const std::string& share_dir) {
  if (!section.family->truth_table) return "";
  const RunRecord& first = section.rows.front()->runs.front();
  const int64_t n = first.config.value("n", int64_t{15});
  tasks::TruthTable table;
  try {
    if (n < 0 || n > INT32_MAX) throw InputError(fmt::format("n = {} is no size of a task", n));
    table = section.family->truth_table(section.task, static_cast<int>(n));
  } catch (const InputError& e) {  // an n no run of the task can have: named, not fatal
    return fmt::format("MDI not computed: {} (the n of {})\n\n", inert(e.what()), inert(first.dir));
  }
  const validate::MinDegreeInterpolator mdi = validate::min_degree_interpolator(table, 0);
  if (!mdi.unavailable.empty()) return fmt::format("MDI not computed: {}\n\n", mdi.unavailable);
  std::string text = fmt::format(
      "The validator's min-degree interpolator `{}` (n = {}) scores {:.2f}% on the cube "
      "({} on the unseen part): a run at that accuracy has learned the MDI, not the "
      "target.\n\n",
      validate::format_polynomial(mdi.coefficients, table.inputs), n, 100 * mdi.accuracy(),
      mdi.unseen_accuracy() ? fmt::format("{:.2f}%", 100 * *mdi.unseen_accuracy()) : "n/a");
  std::set<std::string> done;
  for (const ReportRow* row : section.rows) {
    const std::string path = spec_path(row->spec, share_dir);
    if (path.empty() || !path.ends_with(".mask")) continue;
    const RunRecord& run = row->runs.front();
    const std::string name = fs::path(path).filename().string();
    try {
      // The source the run trained on: its own copy (spec.mask, kept wherever the run or its
      // archive now is), else the file its config names.
      const std::string source = !run.spec_source.empty()
                                     ? run.spec_source
                                     : read_regular_file(path, kMaxSpecBytes, "spec");
      if (!done.insert(source).second) continue;
      // Compiled as the run compiled it (train/run_spec.cpp load_spec): its -D values, then the
      // parameters it fills in (tasks::filled_spec_params).
      CompileOptions options;
      options.provenance = false;
      const json defines = run.config.value("defines", json::object());
      for (const auto& [key, value] : defines.items()) {
        options.defines[key] = value.is_string() ? value.get<std::string>() : value.dump();
      }
      CompiledMask mask = compile_source(source, name, options);
      const auto filled =
          tasks::filled_spec_params(*section.family, run.config, mask.params, options.defines);
      if (!filled.empty()) {
        options.defines.insert(filled.begin(), filled.end());
        mask = compile_source(source, name, options);
      }
      validate::ValidateOptions validate_options;
      validate_options.depth = run.config.value("depth", int64_t{1});
      const validate::ValidationReport report = validate::validate_target(
          mask, validate::task_target(mask, section.task, validate_options), validate_options);
      const auto& exclusion = report.outputs.front().mdi_exclusion;
      if (!exclusion) continue;
      text += fmt::format("- `{}`: MDI {} by the mask — {}.\n", inert(name),
                          exclusion->excluded ? "excluded" : "not excluded", exclusion->reason);
    } catch (const std::exception& e) {
      text += fmt::format("- `{}`: not validated ({})\n", inert(name), inert(e.what()));
    }
  }
  return text + (done.empty() ? "" : "\n");
}

namespace {

/// The columns besides `key` that the results and runs tables show: the family's other metrics
/// shown in tables that some row has, then its diagnostics of the learned function (Boolean: the
/// coefficient of the monomial the MDI leaves out, the margin of the unseen predictions from the
/// rounding boundary).
std::vector<tasks::Metric> table_metrics(const TaskSection& section, const std::string& key) {
  std::vector<tasks::Metric> metrics;
  for (const tasks::Metric& metric : section.family->metrics) {
    if (!metric.in_tables || metric.key == key) continue;
    const bool present = std::any_of(section.rows.begin(), section.rows.end(),
                                     [&](auto* row) { return over_seeds(*row, metric.key).n > 0; });
    if (present) metrics.push_back(metric);
  }
  metrics.insert(metrics.end(), section.family->diagnostics.begin(),
                 section.family->diagnostics.end());
  return metrics;
}

/// The table's titles and rules of `metrics`' columns (" title |" and "---|" each).
std::pair<std::string, std::string> metric_columns(const std::vector<tasks::Metric>& metrics) {
  std::string titles, rules;
  for (const tasks::Metric& metric : metrics) {
    titles += fmt::format(" {} |", metric.column());
    rules += "---|";
  }
  return {titles, rules};
}

/// The `count` largest learned Fourier coefficients of a run at its end (summary.json "fourier":
/// monomial → coefficient), largest magnitude first: "{0} +0.645, {0,1,2} −0.349"; "—" for none.
std::string top_fourier(const json& summary, size_t count) {
  const json fourier = summary.value("fourier", json());
  if (!fourier.is_object()) return "—";
  std::vector<std::pair<std::string, double>> terms;
  for (const auto& [monomial, value] : fourier.items()) {
    if (value.is_number()) terms.emplace_back(monomial, value.get<double>());
  }
  std::vector<std::string> parts;
  for (const auto& [monomial, value] : largest_terms(std::move(terms), count)) {
    parts.push_back(fmt::format("{} {:+.3f}", inert(monomial == "{}" ? "∅" : monomial), value));
  }
  return parts.empty() ? "—" : fmt::format("{}", fmt::join(parts, ", "));
}

/// A run's value of `key` as a table cell ("—" when it has none).
std::string run_cell(const RunRecord& run, const std::string& key, bool percent) {
  return cell(summarize({metric_value(run.summary, key)}), percent);
}

}  // namespace

std::string runs_table(const TaskSection& section, const std::string& key) {
  const bool share = is_share(section, key);
  const std::vector<tasks::Metric> metrics = table_metrics(section, key);
  const bool fourier = std::any_of(section.rows.begin(), section.rows.end(), [](auto* row) {
    return std::any_of(row->runs.begin(), row->runs.end(),
                       [](const RunRecord& run) { return run.summary.contains("fourier"); });
  });
  const auto [titles, rules] = metric_columns(metrics);
  std::string out = fmt::format(
      "**Each run** at its end{}:\n\n| run | seed | {}{} |{}{} steps to 95% | prior mass start → "
      "end | wall s | commit |\n|---|---|---|{}{}---|---|---|---|\n",
      fourier ? "; f̂: its largest learned Fourier coefficients" : "", inert(key), share ? " %" : "",
      titles, fourier ? " largest f̂ |" : "", rules, fourier ? "---|" : "");
  for (const ReportRow* row : section.rows) {
    std::vector<const RunRecord*> runs;
    for (const RunRecord& run : row->runs) runs.push_back(&run);
    const auto seed_of = [](const RunRecord* run) {
      const json seed = run->config.value("seed", json());
      return seed.is_number_integer() ? seed.get<int64_t>() : INT64_MAX;
    };
    std::stable_sort(runs.begin(), runs.end(),
                     [&](auto* a, auto* b) { return seed_of(a) < seed_of(b); });
    for (const RunRecord* run : runs) {
      std::string extra;
      for (const tasks::Metric& metric : metrics) {
        extra += fmt::format(" {} |", run_cell(*run, metric.key, metric.is_share()));
      }
      if (fourier) extra += fmt::format(" {} |", top_fourier(run->summary, 4));
      const auto steps = share ? steps_to(*run, key, 0.95) : std::nullopt;
      const std::string start = run_cell(*run, "prior_mass_init", false);
      const std::string end = run_cell(*run, "prior_mass", false);
      const std::string commit = string_at(run->summary.value("provenance", json()), "commit", "");
      out += fmt::format("| {} | {} | {} |{} {} | {} | {} | {} |\n", inert(row->label),
                         inert(run->config.value("seed", json()).dump()),
                         run_cell(*run, key, share), extra,
                         !share  ? "—"
                         : steps ? fmt::format("{}", *steps)
                                 : "never",
                         start == "—" && end == "—" ? "—" : start + " → " + end,
                         wall_cell(summarize({metric_value(run->summary, "wall_seconds")})),
                         commit.empty() ? "—" : inert(commit.substr(0, 7)));
    }
  }
  return out + "\n";
}

std::string results_table(const TaskSection& section, const std::string& key) {
  const bool share = is_share(section, key);
  const std::vector<tasks::Metric> diagnostics = table_metrics(section, key);
  // The same metric on the training rows, where the runs recorded it: a model that memorised its
  // data reads 100% there. The paper column only for families the paper has numbers for.
  const std::string train_key = "train_" + key;
  const bool train = std::any_of(section.rows.begin(), section.rows.end(),
                                 [&](auto* row) { return over_seeds(*row, train_key).n > 0; });
  const bool paper = !section.family->paper.empty();
  const auto [titles, rules] = metric_columns(diagnostics);
  std::string out = fmt::format(
      "| run | seeds | {}{} |{}{}{} steps to 50% | steps to 95% | prior mass start → end | "
      "mask drift | wall s / run |\n|---|---|---|{}{}{}---|---|---|---|---|\n",
      inert(key), share ? " %" : "", train ? fmt::format(" train{} |", share ? " %" : "") : "",
      paper ? " paper |" : "", titles, train ? "---|" : "", paper ? "---|" : "", rules);
  for (const ReportRow* row : section.rows) {
    const Summary start = over_seeds(*row, "prior_mass_init");
    const Summary end = over_seeds(*row, "prior_mass");
    std::string extra;
    for (const tasks::Metric& metric : diagnostics) {
      extra += fmt::format(" {} |", cell(over_seeds(*row, metric.key), metric.is_share()));
    }
    const std::string train_cell =
        train ? fmt::format(" {} |", cell(over_seeds(*row, train_key), share)) : "";
    const std::string paper_cell =
        paper ? fmt::format(" {} |", key == row->family->headline().key ? paper_number(*row) : "—")
              : "";
    out += fmt::format(
        "| {} | {} | {} |{}{}{} {} | {} | {} | {} | {} |\n", inert(row->label), row->runs.size(),
        cell(over_seeds(*row, key), share), train_cell, paper_cell, extra,
        share ? steps_cell(*row, key, 0.5) : "—", share ? steps_cell(*row, key, 0.95) : "—",
        start.n + end.n ? fmt::format("{} → {}", cell(start, false), cell(end, false)) : "—",
        cell(over_seeds(*row, "mask_drift"), false), wall_cell(over_seeds(*row, "wall_seconds")));
  }
  return out + "\n";
}

std::string help_table(const TaskSection& section, const std::string& key,
                       const std::string& tables_key, const ControlCriterion& control) {
  const bool share = is_share(section, key);
  // Points of % where higher is better: other metrics have no positive-control criterion.
  const bool labelled = share && section.family->find_metric(key)->better == tasks::Better::kHigher;
  const double scale = share ? 100.0 : 1.0;
  std::string rows;
  for (const ReportRow* row : section.rows) {
    if (row->init == "vanilla") continue;
    const json settings = without_prior(*row);
    // The vanilla row of the same settings beside it (its folder's parent: a sweep's or study
    // cell's) where there is one: a row of another cell may differ from it in an execution
    // setting only, such as the precision.
    const auto matches = [&](const ReportRow* other, bool same_folder) {
      return other->init == "vanilla" && without_prior(*other) == settings &&
             (!same_folder || fs::path(other->runs.front().row).parent_path() ==
                                  fs::path(row->runs.front().row).parent_path());
    };
    auto vanilla = std::find_if(section.rows.begin(), section.rows.end(),
                                [&](auto* other) { return matches(other, true); });
    if (vanilla == section.rows.end()) {
      vanilla = std::find_if(section.rows.begin(), section.rows.end(),
                             [&](auto* other) { return matches(other, false); });
    }
    if (vanilla == section.rows.end()) continue;
    const auto mine = by_seed(*row, key), theirs = by_seed(**vanilla, key);
    std::vector<double> differences;
    std::vector<std::string> per_seed;
    size_t better = 0;
    std::string below;  // the first seed under the criterion
    for (const auto& [seed, value] : mine) {
      const auto other = theirs.find(seed);
      if (other == theirs.end()) continue;
      const double d = scale * (value - other->second);
      differences.push_back(d);
      better += d > 0 ? 1 : 0;
      per_seed.push_back(fmt::format("{}: {:+.2f}", seed, d));
      if (below.empty() && !(d >= control.points)) below = fmt::format("{}", seed);
    }
    if (differences.empty()) continue;
    const Summary s = summarize(differences);
    const double half = t_quantile_95(s.n - 1) * s.std / std::sqrt(static_cast<double>(s.n));
    const std::string verdict =
        !labelled ? "—"
        : s.n < static_cast<size_t>(control.seeds)
            ? fmt::format("not judged ({} seed{})", s.n, s.n == 1 ? "" : "s")
        : below.empty() ? std::string("**yes**")
                        : fmt::format("no (seed {})", inert(below));
    rows +=
        fmt::format("| {} | {} | {} | {:+.2f}{} | {} | {} of {} | {} |\n", inert(row->label),
                    inert((*vanilla)->label), s.n, s.mean,
                    s.n > 1 ? fmt::format(" [{:+.2f}, {:+.2f}]", s.mean - half, s.mean + half) : "",
                    fmt::join(per_seed, ", "), better, s.n, verdict);
  }
  if (rows.empty()) return "";
  return fmt::format(
             "**Does the prior help?** Each run with a prior against the vanilla run of the same "
             "settings, seed K against seed K (the same data and start): the difference in "
             "`{}`{}{} "
             "over the seeds both have, its mean with a 95% paired t-interval (none for one "
             "seed), and each seed's.{}\n\n| run | against | seeds | difference, mean [95% "
             "interval] | per seed | higher on | positive control |\n|---|---|---|---|---|---|---|"
             "\n",
             inert(key), share ? " (points of %)" : "",
             key == tables_key
                 ? ""
                 : fmt::format(", what this task family is judged by (`--metric {}` judges by the "
                               "tables' metric instead)",
                               inert(tables_key)),
             labelled ? fmt::format(" A positive control beats vanilla by at least {:g} points on "
                                    "each seed, over at least {} seeds (`--control-points`, "
                                    "`--control-seeds`); \"no (seed K)\" names the first seed "
                                    "below that.",
                                    control.points, control.seeds)
                      : "") +
         rows + "\n";
}

namespace {

/// A row's data: the family's description, or the data file by name with the examples the run
/// read ("train.txt (20 train, 1000 test)").
std::string data_cell(const ReportRow& row) {
  const json& c = row.runs.front().config;
  if (row.family->describe_data) return inert(row.family->describe_data(c));
  const json& summary = row.runs.front().summary;
  const std::string file = string_at(summary, "data", string_at(c, "data", ""));
  if (file.empty()) return "—";
  std::string sizes;
  if (summary.contains("train_size") && summary.contains("test_size")) {
    sizes = fmt::format(" ({} train, {} test)", field(summary, "train_size"),
                        field(summary, "test_size"));
  }
  return inert(fs::path(file).filename().string()) + sizes;
}

/// A setting as it ran: the run's resolved value (config.json "resolved": threads, steps, ...),
/// else the summary's, else the request.
std::string as_run(const RunRecord& run, const char* key) {
  const json resolved = run.config.value("resolved", json::object());
  if (resolved.is_object() && resolved.contains(key)) return field(resolved, key);
  if (run.summary.contains(key)) return field(run.summary, key);
  return field(run.config, key);
}

}  // namespace

std::string settings_table(const TaskSection& section) {
  // The settings the rows differ in first, one column each (a sweep's grid keys).
  const std::vector<std::string> swept = differing_settings(section);
  std::string titles, rules;
  for (const std::string& key : swept) {
    titles += fmt::format(" {} |", inert(key));
    rules += "---|";
  }
  std::string out = fmt::format(
      "| run |{} preset | data | model (dim × depth, heads × head dim, mlp) | optimizer | lr | "
      "batch | epochs | steps | device | threads |\n|---|{}---|---|---|---|---|---|---|---|---|---|"
      "\n",
      titles, rules);
  for (const ReportRow* row : section.rows) {
    const RunRecord& run = row->runs.front();
    const json& c = run.config;
    std::string values;
    for (const std::string& key : swept) {
      values += fmt::format(
          " {} |", row->settings.contains(key) ? inert(value_text(row->settings[key])) : "—");
    }
    // Epochs as run (a small data file takes many per step budget): the summary's count.
    const json& summary = run.summary;
    const std::string epochs = summary.value("epoch", json()).is_number()
                                   ? fmt::format("{:g}", summary["epoch"].get<double>())
                                   : field(c, "epochs");
    out += fmt::format(
        "| {} |{} {} | {} | {} × {}, {} × {}, {} | {} | {} | {} | {} | {} | {} | {} |\n",
        inert(row->label), values, field(c, "preset"), data_cell(*row), field(c, "dim"),
        field(c, "depth"), field(c, "heads"), field(c, "head_dim"), field(c, "mlp"),
        field(c, "optimizer"), field(c, "lr"), field(c, "batch_size"), epochs, as_run(run, "steps"),
        field(summary.contains("device") ? summary : c, "device"), as_run(run, "threads"));
  }
  return out + "\n";
}

std::string provenance_text(const std::vector<ReportRow>& rows) {
  std::map<std::string, int> lines;
  int unknown = 0;
  for (const ReportRow& row : rows) {
    for (const RunRecord& run : row.runs) {
      const json p = run.summary.value("provenance", json());
      if (!p.is_object()) {
        ++unknown;
        continue;
      }
      // Each field as text whatever the file holds: a damaged summary gives "?", not an error.
      const json dirty = p.value("dirty", json()), cores = p.value("cores", json());
      ++lines[fmt::format(
          "commit `{}`{}, {} build, LibTorch {}; machine {} ({}, {} cores); device {}, "
          "precision {}",
          inert(string_at(p, "commit", "unknown").substr(0, 12)),
          dirty.is_boolean() && dirty.get<bool>() ? " (with uncommitted changes)" : "",
          inert(string_at(p, "build_type", "?")), inert(string_at(p, "torch", "?")),
          inert(string_at(p, "host", "?")), inert(string_at(p, "cpu", "?")),
          cores.is_number_integer() ? cores.dump() : "?",
          inert(string_at(run.summary, "device", "?")),
          inert(string_at(run.config, "precision", "?")))];
    }
  }
  std::string text = "Computed with:\n\n";
  auto runs = [](int count) { return fmt::format("{} run{}", count, count == 1 ? "" : "s"); };
  for (const auto& [line, count] : lines) text += fmt::format("- {}: {}\n", line, runs(count));
  if (unknown > 0) {
    text +=
        fmt::format("- {} from before summaries recorded the commit and machine\n", runs(unknown));
  }
  return text + "\n";
}

std::string left_out_text(const std::vector<LeftOut>& left_out) {
  if (left_out.empty()) return "";
  std::string text =
      fmt::format("**{} run{} left out** (damaged, more than a report reads, or a seed again):\n\n",
                  left_out.size(), left_out.size() == 1 ? "" : "s");
  for (const LeftOut& l : left_out) text += fmt::format("- {}\n", inert(l.reason));
  return text + "\n";
}

std::string unfinished_text(const fs::path& root,
                            const std::vector<runfolder::Unfinished>& unfinished) {
  if (unfinished.empty()) return "";
  std::string text = fmt::format(
      "**{} run{} not finished**, not in the tables (a stopped run resumes when its command runs "
      "again):\n\n",
      unfinished.size(), unfinished.size() == 1 ? "" : "s");
  for (const runfolder::Unfinished& u : unfinished) {
    text += fmt::format("- `{}`: {}, {}\n", inert(fs::relative(u.dir, root).generic_string()),
                        runfolder::run_state_name(u.state), u.progress);
  }
  return text + "\n";
}

}  // namespace maskprior::report
