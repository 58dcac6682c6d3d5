// REPORT.md and its plots (see report.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "compiler/compile.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "render/plot.h"
#include "report/report.h"
#include "report/stats.h"
#include "tasks/family.h"
#include "tasks/truth_table.h"
#include "validate/mdi.h"
#include "validate/validate.h"

namespace maskprior::report {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

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

std::string file_name(const std::string& text) {
  std::string name;
  for (char c : text) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return name;
}

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

/// The mean over a row's seeds of `value(record)` at each evaluated step.
PlotSeries mean_curve(const ReportRow& row, const std::function<double(const json&)>& value,
                      const std::string& label) {
  std::map<int64_t, std::vector<double>> at;
  for (const RunRecord& run : row.runs) {
    for (const json& record : run.metrics) {
      const double v = value(record);
      if (std::isfinite(v)) at[record.value("step", int64_t{0})].push_back(v);
    }
  }
  PlotSeries series{label, {}, {}, {}, {}, false};
  for (const auto& [step, values] : at) {
    series.x.push_back(static_cast<double>(step));
    series.y.push_back(summarize(values).mean);
  }
  return series;
}

/// A row's name in a plot whose title names its task ("addition-mask" → "mask"), so that the
/// legend and the category labels fit.
std::string plot_label(const ReportRow& row) {
  const std::string prefix = row.task + "-";
  return row.label.size() > prefix.size() && row.label.starts_with(prefix)
             ? row.label.substr(prefix.size())
             : row.label;
}

PlotSeries mean_curve(const ReportRow& row, const std::string& key) {
  return mean_curve(
      row, [&](const json& record) { return metric_value(record, key); }, plot_label(row));
}

PlotSpec make_plot(std::string title, std::string x_label, std::string y_label) {
  PlotSpec plot;
  plot.title = std::move(title);
  plot.x_label = std::move(x_label);
  plot.y_label = std::move(y_label);
  return plot;
}

struct TaskSection {
  std::string task;
  const tasks::TaskFamily* family;
  std::vector<const ReportRow*> rows;
};

/// A share in [0, 1] (shown as %): what the section's task family says of `key`.
bool is_share(const TaskSection& section, const std::string& key) {
  const tasks::Metric* metric = section.family->find_metric(key);
  return metric != nullptr && metric->is_share();
}

std::vector<TaskSection> by_task(const std::vector<ReportRow>& rows) {
  std::vector<TaskSection> sections;
  for (const ReportRow& row : rows) {
    auto it = std::find_if(sections.begin(), sections.end(), [&](const TaskSection& s) {
      return s.task == row.task && s.family == row.family;
    });
    if (it == sections.end()) {
      sections.push_back({row.task, row.family, {}});
      it = std::prev(sections.end());
    }
    it->rows.push_back(&row);
  }
  return sections;
}

std::string primary_of(const TaskSection& section) {
  for (const ReportRow* row : section.rows) {
    if (auto key = primary_metric(*row)) return *key;
  }
  return "";
}

/// The spec path of a run as it can be opened from here.
std::string spec_path(const std::string& spec, const std::string& source_dir) {
  if (spec.empty() || fs::path(spec).is_absolute() || fs::exists(spec)) return spec;
  return (fs::path(source_dir) / spec).string();
}

/// What the validator says about the task's min-degree interpolator, and for each spec of the
/// section whether its mask can exclude it (families whose target is a Boolean function on the
/// cube; "" otherwise).
std::string mdi_text(const TaskSection& section, const std::string& source_dir) {
  if (!section.family->truth_table) return "";
  const int n = section.rows.front()->runs.front().config.value("n", 15);
  const tasks::TruthTable table = section.family->truth_table(section.task, n);
  const validate::MinDegreeInterpolator mdi = validate::min_degree_interpolator(table, 0);
  if (!mdi.unavailable.empty()) return fmt::format("MDI not computed: {}\n\n", mdi.unavailable);
  std::string text = fmt::format(
      "The validator's min-degree interpolator `{}` (n = {}) scores {:.2f}% on the cube "
      "({:.2f}% on the unseen part): a run at that accuracy has learned the MDI, not the "
      "target.\n\n",
      validate::format_polynomial(mdi.coefficients, table.inputs), n, 100 * mdi.accuracy(),
      100 * mdi.unseen_accuracy());
  std::set<std::string> done;
  for (const ReportRow* row : section.rows) {
    const std::string path = spec_path(row->spec, source_dir);
    if (path.empty() || !path.ends_with(".mask") || !done.insert(path).second) continue;
    try {
      // As the run compiled it (train/run_spec.cpp load_spec), followed through the model's layers.
      const json& config = row->runs.front().config;
      const int64_t depth = config.value("depth", int64_t{1});
      CompileOptions options;
      options.provenance = false;
      options.defines["n"] = std::to_string(n);
      CompiledMask mask = compile_file(path, options);
      if (mask.params.contains("depth")) {  // a spec written for any depth
        options.defines["depth"] = std::to_string(depth);
        mask = compile_file(path, options);
      }
      validate::ValidateOptions validate_options;
      validate_options.depth = depth;
      const validate::ValidationReport report = validate::validate_target(
          mask, validate::task_target(mask, section.task, validate_options), validate_options);
      const auto& exclusion = report.outputs.front().mdi_exclusion;
      if (!exclusion) continue;
      text += fmt::format("- `{}`: MDI {} by the mask — {}.\n", fs::path(path).filename().string(),
                          exclusion->excluded ? "excluded" : "not excluded", exclusion->reason);
    } catch (const std::exception& e) {
      text += fmt::format("- `{}`: not validated ({})\n", path, e.what());
    }
  }
  return text + (done.empty() ? "" : "\n");
}

std::string wall_cell(const Summary& wall) {
  return wall.n == 0 ? "—" : fmt::format("{:.0f}", wall.mean);
}

std::string results_table(const TaskSection& section, const std::string& key) {
  const bool share = is_share(section, key);
  // The family's diagnostics of the learned function (Boolean: the coefficient of the monomial
  // the MDI leaves out, the margin of the unseen predictions from the rounding boundary).
  const std::vector<tasks::Metric>& diagnostics = section.family->diagnostics;
  std::string titles, rules;
  for (const tasks::Metric& metric : diagnostics) {
    titles += fmt::format(" {} |", metric.column());
    rules += "---|";
  }
  std::string out = fmt::format(
      "| run | seeds | {}{} | paper |{} steps to 50% | steps to 95% | prior mass start → end | "
      "mask drift | wall s / run |\n|---|---|---|---|{}---|---|---|---|---|\n",
      key, share ? " %" : "", titles, rules);
  for (const ReportRow* row : section.rows) {
    const Summary start = over_seeds(*row, "prior_mass_init");
    const Summary end = over_seeds(*row, "prior_mass");
    std::string extra;
    for (const tasks::Metric& metric : diagnostics) {
      extra += fmt::format(" {} |", cell(over_seeds(*row, metric.key), metric.is_share()));
    }
    out += fmt::format(
        "| {} | {} | {} | {} |{} {} | {} | {} | {} | {} |\n", row->label, row->runs.size(),
        cell(over_seeds(*row, key), share), paper_number(*row), extra,
        share ? steps_cell(*row, key, 0.5) : "—", share ? steps_cell(*row, key, 0.95) : "—",
        start.n + end.n ? fmt::format("{} → {}", cell(start, false), cell(end, false)) : "—",
        cell(over_seeds(*row, "mask_drift"), false), wall_cell(over_seeds(*row, "wall_seconds")));
  }
  return out + "\n";
}

/// A config value as text; "—" when the run's config does not have it.
std::string field(const json& config, const char* key) {
  if (!config.contains(key) || config[key].is_null()) return "—";
  const json& v = config[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:g}", v.get<double>());
  return v.dump();
}

std::string settings_table(const TaskSection& section) {
  std::string out =
      "| run | preset | data | model (dim × depth, heads × head dim, mlp) | optimizer | lr | batch "
      "| epochs | steps | device | threads |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ReportRow* row : section.rows) {
    const json& c = row->runs.front().config;
    const json& summary = row->runs.front().summary;  // the device used (since stop 19)
    const std::string data =
        row->family->describe_data ? row->family->describe_data(c) : std::string("—");
    out += fmt::format(
        "| {} | {} | {} | {} × {}, {} × {}, {} | {} | {} | {} | {} | {} | {} | {} |\n", row->label,
        field(c, "preset"), data, field(c, "dim"), field(c, "depth"), field(c, "heads"),
        field(c, "head_dim"), field(c, "mlp"), field(c, "optimizer"), field(c, "lr"),
        field(c, "batch_size"), field(c, "epochs"), field(summary, "steps"),
        field(summary.contains("device") ? summary : c, "device"), field(c, "threads"));
  }
  return out + "\n";
}

/// Draws `plot` into root/plots/NAME.png and returns its Markdown image line; "" when there is
/// nothing to draw.
std::string figure(const fs::path& root, const std::string& name, PlotSpec plot) {
  std::erase_if(plot.series, [](const PlotSeries& s) {
    return std::none_of(s.y.begin(), s.y.end(), [](double v) { return std::isfinite(v); });
  });
  if (plot.series.empty()) return "";
  fs::create_directories(root / "plots");
  const std::string file = "plots/" + file_name(name) + ".png";
  write_plot_png((root / file).string(), plot);
  return fmt::format("![{}]({})\n\n", plot.title, file);
}

/// The metric per row: one marker per seed and the mean ± std; or, when the rows sweep the train
/// fraction, the metric against it with one line per init.
std::string final_figure(const fs::path& root, const TaskSection& section, const std::string& key) {
  const double scale = is_share(section, key) ? 100.0 : 1.0;
  std::set<double> fractions;
  for (const ReportRow* row : section.rows) fractions.insert(row->train_fraction);
  PlotSpec plot = make_plot(fmt::format("{}: {} per run", section.task, key), "",
                            key + (scale > 1 ? " %" : ""));
  if (fractions.size() > 1) {
    plot.title = fmt::format("{}: {} against train fraction", section.task, key);
    plot.x_label = "train fraction %";
    plot.log_x = true;
    std::map<std::string, PlotSeries> by_init;
    for (const ReportRow* row : section.rows) {
      PlotSeries& s = by_init[row->init];
      s.label = row->init;
      const Summary v = over_seeds(*row, key);
      s.x.push_back(100 * row->train_fraction);
      s.y.push_back(scale * v.mean);
      s.low.push_back(scale * (v.mean - v.std));
      s.high.push_back(scale * (v.mean + v.std));
    }
    for (auto& [init, s] : by_init) plot.series.push_back(std::move(s));
    return figure(root, section.task + "-sweep", plot);
  }
  PlotSeries seeds{"seeds", {}, {}, {}, {}, true}, mean{"mean ± std", {}, {}, {}, {}, false};
  for (size_t i = 0; i < section.rows.size(); ++i) {
    const ReportRow& row = *section.rows[i];
    plot.x_categories.push_back(plot_label(row));
    for (const RunRecord& run : row.runs) {
      seeds.x.push_back(static_cast<double>(i) + 0.15);
      seeds.y.push_back(scale * metric_value(run.summary, key));
    }
    const Summary v = over_seeds(row, key);
    mean.x.push_back(static_cast<double>(i));
    mean.y.push_back(scale * v.mean);
    mean.low.push_back(scale * (v.mean - v.std));
    mean.high.push_back(scale * (v.mean + v.std));
  }
  mean.points = true;
  plot.series = {mean, seeds};
  return figure(root, section.task + "-final", plot);
}

/// Learning curves, prior mass and mask drift over training, one line per row.
std::string curve_figures(const fs::path& root, const TaskSection& section,
                          const std::string& key) {
  std::string out;
  const std::pair<std::string, std::string> curves[] = {
      {key, key + " (test) against step"},
      {"prior_mass", "attention mass on the prior's open cells"},
      {"mask_drift", "mask drift ||log σ(M_t) − log σ(M_0)||"}};
  for (const auto& [metric, title] : curves) {
    PlotSpec plot = make_plot(fmt::format("{}: {}", section.task, title), "step", metric);
    for (const ReportRow* row : section.rows) plot.series.push_back(mean_curve(*row, metric));
    out += figure(root, section.task + "-" + metric, plot);
  }
  return out;
}

/// Boolean rows: the learned Fourier coefficients over training, one plot per row.
std::string fourier_figures(const fs::path& root, const TaskSection& section) {
  std::string out;
  for (const ReportRow* row : section.rows) {
    std::set<std::string> keys;
    for (const RunRecord& run : row->runs) {
      for (const json& record : run.metrics) {
        if (!record.contains("fourier") || !record["fourier"].is_object()) continue;
        for (const auto& [name, v] : record["fourier"].items()) keys.insert(name);
      }
    }
    if (keys.empty()) continue;
    PlotSpec plot = make_plot(fmt::format("{}: learned Fourier coefficients", row->label), "step",
                              "coefficient");
    for (const std::string& name : keys) {
      plot.series.push_back(mean_curve(
          *row,
          [&](const json& record) {
            const json& f = record.value("fourier", json::object());
            return f.contains(name) && f[name].is_number() ? f[name].get<double>() : NAN;
          },
          name));
    }
    out += figure(root, row->label + "-fourier", plot);
  }
  return out;
}

std::string section_text(const fs::path& root, const TaskSection& section,
                         const std::string& source_dir) {
  const std::string key = primary_of(section);
  std::string out = fmt::format("## {}\n\n", section.task.empty() ? "(no task)" : section.task);
  if (key.empty()) return out + "No summary metric to report.\n\n";
  out += fmt::format(
      "`{}` of the last evaluation, mean ± std over seeds{}; *paper* is docs/paper.md's number "
      "for the same task, init and mask (— where the paper has none), reached at the paper's own "
      "budget: compare with care when the preset (Settings) is not `paper`. Steps to 50% / 95%: "
      "first evaluated step at that level, mean over the seeds that reached it (reached / "
      "seeds).\n\n",
      key, is_share(section, key) ? " (%)" : "");
  out += results_table(section, key) + mdi_text(section, source_dir);
  out += "Settings:\n\n" + settings_table(section);
  out += final_figure(root, section, key) + curve_figures(root, section, key) +
         fourier_figures(root, section);
  return out;
}

}  // namespace

std::string write_report(const ReportOptions& options) {
  const fs::path root(options.dir);
  const std::vector<ReportRow> rows = read_rows(options.dir);
  size_t runs = 0;
  for (const ReportRow& row : rows) runs += row.runs.size();
  std::string text = fmt::format("# Report: {}\n\n", fs::absolute(root).filename().string());
  if (fs::is_regular_file(root / "results.json")) {
    const json results = read_json_file((root / "results.json").string());
    text += fmt::format("Suite `{}`, preset `{}`. ", results.value("suite", "?"),
                        results.value("preset", "?"));
  }
  text += fmt::format(
      "{} finished runs in {} rows, written by `maskc report`. Plots are in `plots/`.\n\n", runs,
      rows.size());
  for (const TaskSection& section : by_task(rows)) {
    text += section_text(root, section, options.source_dir);
  }
  const std::string path = (root / "REPORT.md").string();
  write_file_atomic(path, text);
  return path;
}

}  // namespace maskprior::report
