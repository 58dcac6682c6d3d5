// REPORT.md and its plots (see report.h).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include "compiler/compile.h"
#include "core/error.h"
#include "core/text.h"
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

/// Text from run folders (names, config and summary values) as REPORT.md shows it: valid UTF-8
/// with control characters escaped, and nothing Markdown or HTML would read as markup — `|` and
/// backticks (which would break a table or a code span) replaced, `<`, `>` and `&` as entities,
/// brackets (which would end an image's alt text) as parentheses.
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

/// The mean over a row's seeds of `value(record)` at each evaluated step, with a band of ± one
/// standard deviation where several seeds were evaluated.
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
  bool spread = false;
  for (const auto& [step, values] : at) {
    const Summary s = summarize(values);
    series.x.push_back(static_cast<double>(step));
    series.y.push_back(s.mean);
    series.low.push_back(s.n > 1 ? s.mean - s.std : NAN);
    series.high.push_back(s.n > 1 ? s.mean + s.std : NAN);
    spread = spread || s.n > 1;
  }
  series.band = true;
  if (!spread) {
    series.low.clear();
    series.high.clear();
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

/// The rows of one subject (a task, or a file of your own data) and family.
struct TaskSection {
  std::string subject, task;
  const tasks::TaskFamily* family;
  std::vector<const ReportRow*> rows;
  std::string spec;  // the spec file every row shares; "" when they differ

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

/// The metric a section is judged by: `metric` when given and some run of the section has it,
/// else the family's headline (primary_metric).
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
      "({} on the unseen part): a run at that accuracy has learned the MDI, not the "
      "target.\n\n",
      validate::format_polynomial(mdi.coefficients, table.inputs), n, 100 * mdi.accuracy(),
      mdi.unseen_accuracy() ? fmt::format("{:.2f}%", 100 * *mdi.unseen_accuracy()) : "n/a");
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
      text += fmt::format("- `{}`: MDI {} by the mask — {}.\n",
                          inert(fs::path(path).filename().string()),
                          exclusion->excluded ? "excluded" : "not excluded", exclusion->reason);
    } catch (const std::exception& e) {
      text += fmt::format("- `{}`: not validated ({})\n", inert(path), inert(e.what()));
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
  // Before them, the family's other metrics shown in tables that some row has.
  std::vector<tasks::Metric> diagnostics;
  for (const tasks::Metric& metric : section.family->metrics) {
    if (!metric.in_tables || metric.key == key) continue;
    const bool present = std::any_of(section.rows.begin(), section.rows.end(),
                                     [&](auto* row) { return over_seeds(*row, metric.key).n > 0; });
    if (present) diagnostics.push_back(metric);
  }
  diagnostics.insert(diagnostics.end(), section.family->diagnostics.begin(),
                     section.family->diagnostics.end());
  std::string titles, rules;
  for (const tasks::Metric& metric : diagnostics) {
    titles += fmt::format(" {} |", metric.column());
    rules += "---|";
  }
  std::string out = fmt::format(
      "| run | seeds | {}{} | paper |{} steps to 50% | steps to 95% | prior mass start → end | "
      "mask drift | wall s / run |\n|---|---|---|---|{}---|---|---|---|---|\n",
      inert(key), share ? " %" : "", titles, rules);
  for (const ReportRow* row : section.rows) {
    const Summary start = over_seeds(*row, "prior_mass_init");
    const Summary end = over_seeds(*row, "prior_mass");
    std::string extra;
    for (const tasks::Metric& metric : diagnostics) {
      extra += fmt::format(" {} |", cell(over_seeds(*row, metric.key), metric.is_share()));
    }
    out += fmt::format(
        "| {} | {} | {} | {} |{} {} | {} | {} | {} | {} |\n", inert(row->label), row->runs.size(),
        cell(over_seeds(*row, key), share),
        key == row->family->headline().key ? paper_number(*row) : "—", extra,
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
  if (v.is_string()) return inert(v.get<std::string>());
  if (v.is_number_float()) return fmt::format("{:g}", v.get<double>());
  return inert(v.dump());
}

std::string settings_table(const TaskSection& section) {
  std::string out =
      "| run | preset | data | model (dim × depth, heads × head dim, mlp) | optimizer | lr | batch "
      "| epochs | steps | device | threads |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ReportRow* row : section.rows) {
    const json& c = row->runs.front().config;
    const json& summary = row->runs.front().summary;  // the device used (since stop 19)
    const std::string data =
        row->family->describe_data ? inert(row->family->describe_data(c)) : std::string("—");
    out += fmt::format(
        "| {} | {} | {} | {} × {}, {} × {}, {} | {} | {} | {} | {} | {} | {} | {} |\n",
        inert(row->label), field(c, "preset"), data, field(c, "dim"), field(c, "depth"),
        field(c, "heads"), field(c, "head_dim"), field(c, "mlp"), field(c, "optimizer"),
        field(c, "lr"), field(c, "batch_size"), field(c, "epochs"), field(summary, "steps"),
        field(summary.contains("device") ? summary : c, "device"), field(c, "threads"));
  }
  return out + "\n";
}

/// InputError unless root/plots is missing or a folder of root's own: a symlink (or anything
/// else) there could send the plots outside DIR.
void check_plots_folder(const fs::path& root) {
  const fs::path plots = root / "plots";
  const fs::file_status status = fs::symlink_status(plots);
  if (status.type() == fs::file_type::not_found || status.type() == fs::file_type::directory) {
    return;
  }
  throw InputError(fmt::format(
      "[report] {} is {}: the report writes its plots only into a folder of its own; remove it",
      plots.string(), status.type() == fs::file_type::symlink ? "a symlink" : "not a folder"));
}

/// Panels of a figure file, two a row; a figure of more is split into NAME.png, NAME-2.png, ...
/// (an image of 25 panels down is 14,000 pixels tall).
constexpr int kFigureColumns = 2;
constexpr size_t kMostPanels = 50;

/// A panel of a figure, and what the figure's alt text calls it ("" for a figure of one plot).
struct Panel {
  std::string name;
  PlotSpec plot;
};

bool has_finite_y(const PlotSeries& s) {
  return std::any_of(s.y.begin(), s.y.end(), [](double v) { return std::isfinite(v); });
}

/// Draws `panels` (those with something to draw) into root/plots/NAME.png and returns its
/// Markdown image line, the alt text `title` and, when they have names, "panels: " and theirs;
/// "" when there is nothing to draw.
std::string figure(const fs::path& root, const std::string& name, const std::string& title,
                   std::vector<Panel> panels) {
  for (Panel& panel : panels) std::erase_if(panel.plot.series, std::not_fn(has_finite_y));
  std::erase_if(panels, [](const Panel& panel) { return panel.plot.series.empty(); });
  if (panels.empty()) return "";
  fs::create_directories(root / "plots");  // write_report has checked what stands there
  const size_t files = (panels.size() + kMostPanels - 1) / kMostPanels;
  std::string out;
  for (size_t k = 0; k < files; ++k) {
    const std::string file =
        "plots/" + file_name(k == 0 ? name : fmt::format("{}-{}", name, k + 1)) + ".png";
    std::vector<PlotSpec> plots;
    std::vector<std::string> names;
    for (size_t i = k * kMostPanels; i < std::min(panels.size(), (k + 1) * kMostPanels); ++i) {
      plots.push_back(panels[i].plot);
      if (!panels[i].name.empty()) names.push_back(panels[i].name);
    }
    write_plots_png((root / file).string(), plots, kFigureColumns);
    out +=
        fmt::format("![{}{}{}]({})\n\n", inert(title),
                    names.empty() ? "" : inert(fmt::format(", panels: {}", fmt::join(names, ", "))),
                    files > 1 ? fmt::format(" ({} of {})", k + 1, files) : "", file);
  }
  return out;
}

/// One plot in root/plots/NAME.png (see above), its title the alt text.
std::string figure(const fs::path& root, const std::string& name, PlotSpec plot) {
  const std::string title = plot.title;
  return figure(root, name, title, {{"", std::move(plot)}});
}

/// The metric per row: one marker per seed and the mean ± std; or, when the rows sweep the train
/// fraction, the metric against it with one line per init.
std::string final_figure(const fs::path& root, const TaskSection& section, const std::string& key) {
  const double scale = is_share(section, key) ? 100.0 : 1.0;
  std::set<double> fractions;
  for (const ReportRow* row : section.rows) fractions.insert(row->train_fraction);
  PlotSpec plot = make_plot(fmt::format("{}: {} per run", section.title(), key), "",
                            key + (scale > 1 ? " %" : ""));
  if (fractions.size() > 1) {
    plot.title = fmt::format("{}: {} against train fraction", section.title(), key);
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
    return figure(root, section.name() + "-sweep", plot);
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
  return figure(root, section.name() + "-final", plot);
}

/// The settings (RunRecord settings_of) in which the section's rows differ.
std::vector<std::string> differing_settings(const TaskSection& section) {
  std::set<std::string> keys;
  for (const ReportRow* row : section.rows) {
    for (const auto& [key, value] : row->settings.items()) keys.insert(key);
  }
  std::vector<std::string> differing;
  for (const std::string& key : keys) {
    const json first = section.rows.front()->settings.value(key, json());
    for (const ReportRow* row : section.rows) {
      if (row->settings.value(key, json()) != first) {
        differing.push_back(key);
        break;
      }
    }
  }
  return differing;
}

std::string value_text(const json& value) {
  if (value.is_number_float()) return fmt::format("{}", value.get<double>());
  if (!value.is_string()) return value.dump();
  const std::string text = value.get<std::string>();
  return text.find('/') == std::string::npos ? text : fs::path(text).filename().string();
}

/// The metric against one swept setting `x`: one line per combination of the other settings in
/// which rows differ (a grid of init × x: one line per init); numbers on a numeric axis (log when
/// they span 100×), anything else as categories.
PlotSpec setting_plot(const TaskSection& section, const std::string& key, const std::string& x,
                      const std::vector<std::string>& differing) {
  const double scale = is_share(section, key) ? 100.0 : 1.0;
  bool numeric = true;
  double low = INFINITY, high = -INFINITY;
  std::vector<std::string> categories;
  for (const ReportRow* row : section.rows) {
    const json v = row->settings.value(x, json());
    numeric = numeric && v.is_number();
    if (v.is_number()) {
      low = std::min(low, v.get<double>());
      high = std::max(high, v.get<double>());
    }
    if (std::find(categories.begin(), categories.end(), value_text(v)) == categories.end())
      categories.push_back(value_text(v));
  }
  PlotSpec plot = make_plot(fmt::format("{}: {} against {}", section.title(), key, x), x,
                            key + (scale > 1 ? " %" : ""));
  plot.log_x = numeric && low > 0 && high >= 100 * low;
  if (!numeric) plot.x_categories = categories;
  std::map<std::string, std::vector<std::pair<double, Summary>>> lines;
  for (const ReportRow* row : section.rows) {
    std::string line;
    for (const std::string& other : differing) {
      if (other == x || other == "spec_sha256") continue;
      line += fmt::format("{}{}={}", line.empty() ? "" : ", ", other,
                          value_text(row->settings.value(other, json())));
    }
    const json v = row->settings.value(x, json());
    const double at =
        numeric
            ? v.get<double>()
            : static_cast<double>(std::find(categories.begin(), categories.end(), value_text(v)) -
                                  categories.begin());
    lines[line.empty() ? "mean ± std" : line].push_back({at, over_seeds(*row, key)});
  }
  for (auto& [label, points] : lines) {
    std::sort(points.begin(), points.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    PlotSeries series{label, {}, {}, {}, {}, false};
    for (const auto& [at, v] : points) {
      series.x.push_back(at);
      series.y.push_back(scale * v.mean);
      series.low.push_back(scale * (v.mean - v.std));
      series.high.push_back(scale * (v.mean + v.std));
    }
    plot.series.push_back(std::move(series));
  }
  return plot;
}

/// One figure of the section, NAME-by-setting.png: a setting_plot per setting the rows differ in,
/// but init (the lines), the train fraction (final_figure) and the spec's digest.
std::string setting_figures(const fs::path& root, const TaskSection& section,
                            const std::string& key) {
  const std::vector<std::string> differing = differing_settings(section);
  std::vector<Panel> panels;
  for (const std::string& x : differing) {
    if (x == "init" || x == "train_fraction" || x == "spec_sha256") continue;
    panels.push_back({x, setting_plot(section, key, x, differing)});
  }
  return figure(root, section.name() + "-by-setting",
                fmt::format("{}: {} against a setting", section.title(), key), std::move(panels));
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
    PlotSpec plot = make_plot(
        fmt::format("{}: {} (seeds: mean, band ± std)", section.title(), title), "step", metric);
    for (const ReportRow* row : section.rows) plot.series.push_back(mean_curve(*row, metric));
    out += figure(root, section.name() + "-" + metric, plot);
  }
  return out;
}

/// The learned Fourier coefficients a plot draws: at most this many per row, the largest.
constexpr size_t kMaxFourierCurves = 8;

/// A metrics record's Fourier coefficients, or null when it has none. No copy: a record of an
/// n = 15 task holds 2^15 coefficients.
const json* fourier_of(const json& record) {
  const auto fourier = record.find("fourier");
  return fourier != record.end() && fourier->is_object() ? &*fourier : nullptr;
}

/// A metrics record's Fourier coefficient `name`; NaN when it has none.
double fourier_value(const json& record, const std::string& name) {
  const json* fourier = fourier_of(record);
  if (fourier == nullptr) return NAN;
  const auto c = fourier->find(name);
  return c != fourier->end() && c->is_number() ? c->get<double>() : NAN;
}

/// Boolean rows: the learned Fourier coefficients over training, one figure of the section,
/// NAME-fourier.png, with a panel per row. A row with more than kMaxFourierCurves coefficients
/// draws those largest in magnitude at the last evaluation (the largest over its seeds), and its
/// panel's title says how many it drew. The alt text names the panels.
std::string fourier_figures(const fs::path& root, const TaskSection& section) {
  std::vector<Panel> panels;
  for (const ReportRow* row : section.rows) {
    std::map<std::string, double> largest;  // coefficient → its largest |value| at a run's end
    for (const RunRecord& run : row->runs) {
      for (auto record = run.metrics.rbegin(); record != run.metrics.rend(); ++record) {
        const json* fourier = fourier_of(*record);
        if (fourier == nullptr) continue;
        for (const auto& [name, v] : fourier->items()) {
          const double magnitude = v.is_number() ? std::abs(v.get<double>()) : 0.0;
          double& best = largest[name];
          if (std::isfinite(magnitude)) best = std::max(best, magnitude);
        }
        break;  // the run's last record with coefficients
      }
    }
    if (largest.empty()) continue;
    std::vector<std::pair<std::string, double>> keys(largest.begin(), largest.end());
    const size_t drawn = std::min(keys.size(), kMaxFourierCurves);
    std::stable_sort(keys.begin(), keys.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    keys.resize(drawn);
    std::sort(keys.begin(), keys.end());  // the legend in the coefficients' own order
    const std::string which =
        drawn < largest.size() ? fmt::format(" (the {} largest of {})", drawn, largest.size()) : "";
    PlotSpec plot = make_plot(fmt::format("{}: learned Fourier coefficients{}", row->label, which),
                              "step", "coefficient");
    for (const auto& [name, magnitude] : keys) {
      plot.series.push_back(mean_curve(
          *row, [&](const json& record) { return fourier_value(record, name); }, name));
    }
    panels.push_back({row->label + which, std::move(plot)});
  }
  return figure(root, section.name() + "-fourier",
                fmt::format("{}: learned Fourier coefficients", section.title()),
                std::move(panels));
}

/// The sizes (summary.json's `by_length` keys: a run over several sizes, docs/settings.md
/// "Sizes") that some run of the section was tested at, ascending, each with whether some run
/// trained at it.
std::vector<std::pair<int64_t, bool>> tested_sizes(const TaskSection& section) {
  std::map<int64_t, bool> sizes;
  for (const ReportRow* row : section.rows) {
    for (const RunRecord& run : row->runs) {
      const json by_length = run.summary.value("by_length", json());
      if (!by_length.is_object()) continue;
      for (const auto& [size, m] : by_length.items()) {
        int64_t value = 0;
        const auto [end, error] = std::from_chars(size.data(), size.data() + size.size(), value);
        if (error != std::errc() || end != size.data() + size.size() || !m.is_object()) continue;
        const json trained = m.value("train_size", json(0));
        sizes[value] = sizes[value] || (trained.is_number() && trained.get<double>() > 0);
      }
    }
  }
  return {sizes.begin(), sizes.end()};
}

/// A row's `key` at size `size` over its seeds (the runs tested there).
Summary at_size(const ReportRow& row, int64_t size, const std::string& key) {
  std::vector<double> values;
  for (const RunRecord& run : row.runs) {
    const json by_length = run.summary.value("by_length", json());
    if (!by_length.is_object()) continue;
    const auto m = by_length.find(std::to_string(size));
    if (m != by_length.end() && m->is_object()) values.push_back(metric_value(*m, key));
  }
  return summarize(values);
}

/// Runs over several sizes: `key` at each test size, a table (a column per size; sizes some run
/// trained at marked) and NAME-by-length.png (one line per row, the size on the x axis); "" when
/// no run of the section has `by_length`.
std::string by_length_text(const fs::path& root, const TaskSection& section,
                           const std::string& key) {
  const auto sizes = tested_sizes(section);
  if (sizes.empty()) return "";
  const bool share = is_share(section, key);
  std::string out = fmt::format(
      "`{}` at each size (operand digits, or the size parameter), mean ± std over seeds{}; "
      "sizes marked * were trained on, the others never seen in training:\n\n| run |",
      inert(key), share ? " (%)" : "");
  std::string rules = "|---|";
  for (const auto& [size, trained] : sizes) {
    out += fmt::format(" {}{} |", size, trained ? "*" : "");
    rules += "---|";
  }
  out += "\n" + rules + "\n";
  PlotSpec plot =
      make_plot(fmt::format("{}: {} against size (seeds: mean, band ± std)", section.title(), key),
                "size", key + (share ? " %" : ""));
  plot.log_x = sizes.back().first >= 10 * sizes.front().first;
  const double scale = share ? 100.0 : 1.0;
  for (const ReportRow* row : section.rows) {
    out += fmt::format("| {} |", inert(row->label));
    // The legend's room is a quarter of the figure: "cell/runs/init=mask" as "cell init=mask".
    const std::string full = plot_label(*row);
    std::string label;
    for (size_t from = 0;;) {
      const size_t at = full.find("/runs/", from);
      label += full.substr(from, at == std::string::npos ? std::string::npos : at - from);
      if (at == std::string::npos) break;
      label += ' ';
      from = at + 6;
    }
    PlotSeries series{label, {}, {}, {}, {}, false};
    for (const auto& [size, trained] : sizes) {
      const Summary s = at_size(*row, size, key);
      out += fmt::format(" {} |", cell(s, share));
      if (s.n == 0 || !std::isfinite(s.mean)) continue;
      series.x.push_back(static_cast<double>(size));
      series.y.push_back(scale * s.mean);
      series.low.push_back(scale * (s.mean - s.std));
      series.high.push_back(scale * (s.mean + s.std));
    }
    out += "\n";
    plot.series.push_back(std::move(series));
  }
  return out + "\n" + figure(root, section.name() + "-by-length", std::move(plot));
}

std::string section_text(const fs::path& root, const TaskSection& section,
                         const ReportOptions& options) {
  const std::string key = primary_of(section, options.metric);
  std::string out = fmt::format("## {}\n\n", inert(section.title()));
  if (key.empty()) {
    return out + (options.metric.empty() ? std::string("No summary metric to report.\n\n")
                                         : fmt::format("No run here has `{}` in its summary.\n\n",
                                                       inert(options.metric)));
  }
  out += fmt::format(
      "`{}` of the last evaluation, mean ± std over seeds{}; *paper* is docs/paper.md's number "
      "for the same task, init and mask (— where the paper has none), reached at the paper's own "
      "budget: compare with care when the preset (Settings) is not `paper`. Steps to 50% / 95%: "
      "first evaluated step at that level, mean over the seeds that reached it (reached / "
      "seeds).\n\n",
      inert(key), is_share(section, key) ? " (%)" : "");
  out += results_table(section, key) + by_length_text(root, section, key) +
         mdi_text(section, options.source_dir);
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

/// What computed the runs (summary.json's `provenance`, device and the config's precision): one
/// line per distinct commit, build, machine, device and precision, with how many runs; runs
/// written before summaries recorded it are counted apart.
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
      const std::string commit = p.value("commit", "unknown");
      ++lines[fmt::format(
          "commit `{}`{}, {} build, LibTorch {}; machine {} ({}, {} cores); device {}, "
          "precision {}",
          inert(commit.substr(0, 12)), p.value("dirty", false) ? " (with uncommitted changes)" : "",
          inert(p.value("build_type", "?")), inert(p.value("torch", "?")),
          inert(p.value("host", "?")), inert(p.value("cpu", "?")), p.value("cores", 0),
          inert(run.summary.value("device", "?")), inert(run.config.value("precision", "?")))];
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

/// The runs the report leaves out, and why.
std::string left_out_text(const std::vector<LeftOut>& left_out) {
  if (left_out.empty()) return "";
  std::string text =
      fmt::format("**{} run{} left out** (damaged, more than a report reads, or a seed again):\n\n",
                  left_out.size(), left_out.size() == 1 ? "" : "s");
  for (const LeftOut& l : left_out) text += fmt::format("- {}\n", inert(l.reason));
  return text + "\n";
}

}  // namespace

std::string write_report(const ReportOptions& options, std::vector<LeftOut>* left_out_runs) {
  const fs::path root(options.dir);
  std::vector<LeftOut> left_out;
  const std::vector<ReportRow> rows = read_rows(options.dir, &left_out);
  check_metric(rows, options.metric);
  check_plots_folder(root);
  size_t runs = 0;
  for (const ReportRow& row : rows) runs += row.runs.size();
  std::string text = fmt::format("# Report: {}\n\n", inert(fs::absolute(root).filename().string()));
  if (fs::is_regular_file(root / "results.json")) {
    const json results = read_json_file((root / "results.json").string());
    if (results.contains("suite")) {
      text += fmt::format("Suite `{}`, preset `{}`. ", inert(results.value("suite", "?")),
                          inert(results.value("preset", "?")));
    } else if (results.value("command", "") == "sweep") {
      text += "A `maskc sweep` (its grid in results.md). ";
    }
  }
  text += fmt::format(
      "{} finished runs in {} rows, written by `maskc report`. Plots are in `plots/`.\n\n", runs,
      rows.size());
  text += provenance_text(rows) + left_out_text(left_out);
  for (const TaskSection& section : by_task(rows)) {
    text += section_text(root, section, options);
  }
  const std::string path = (root / "REPORT.md").string();
  write_file_atomic(path, text);
  if (left_out_runs != nullptr) *left_out_runs = std::move(left_out);
  return path;
}

}  // namespace maskprior::report
