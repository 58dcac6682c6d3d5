// REPORT.md's figures (see figures.h).
#include "report/figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "core/error.h"
#include "render/plot.h"

namespace maskprior::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string file_name(const std::string& text) {
  std::string name;
  for (char c : text) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return name;
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

PlotSpec make_plot(std::string title, std::string x_label, std::string y_label) {
  PlotSpec plot;
  plot.title = std::move(title);
  plot.x_label = std::move(x_label);
  plot.y_label = std::move(y_label);
  return plot;
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
  // A sweep's values in the order of its grid (--grid norm=pre,post: pre first), not as the run
  // folders sort.
  for (const json& axis : section.grid) {
    if (!axis.is_object() || axis.value("key", json()) != x) continue;
    const json values = axis.value("values", json::array());
    if (!values.is_array()) break;
    auto place = [&](const std::string& category) {
      for (size_t i = 0; i < values.size(); ++i) {
        if (value_text(values[i]) == category) return i;
      }
      return values.size();
    };
    std::stable_sort(categories.begin(), categories.end(),
                     [&](const auto& a, const auto& b) { return place(a) < place(b); });
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

}  // namespace

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
  // Names that would run into each other below the axis are numbered, the key under the figure.
  std::string key_text;
  if (!categories_fit(plot)) {
    key_text = "Runs in the figure above: ";
    for (size_t i = 0; i < plot.x_categories.size(); ++i) {
      key_text += fmt::format("{}{} = {}", i == 0 ? "" : ", ", i + 1, inert(plot.x_categories[i]));
      plot.x_categories[i] = std::to_string(i + 1);
    }
    key_text += ".\n\n";
  }
  return figure(root, section.name() + "-final", plot) + key_text;
}

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

std::string curve_figures(const fs::path& root, const TaskSection& section,
                          const std::string& key) {
  std::string out;
  // The headline in % where it is a share, as in the tables; the per-layer metrics as their mean
  // over layers (and heads), which the title says.
  const double scale = is_share(section, key) ? 100.0 : 1.0;
  const std::tuple<std::string, std::string, double> curves[] = {
      {key, key + " (test) against step", scale},
      {"prior_mass", "attention mass on the prior's open cells, mean over layers", 1.0},
      {"mask_drift", "mask drift ||log σ(M_t) − log σ(M_0)||, mean over layers", 1.0}};
  for (const auto& [metric, title, factor] : curves) {
    PlotSpec plot =
        make_plot(fmt::format("{}: {} (seeds: mean, band ± std)", section.title(), title), "step",
                  metric + (factor > 1 ? " %" : ""));
    for (const ReportRow* row : section.rows) {
      plot.series.push_back(mean_curve(
          *row,
          [&, f = factor, m = metric](const json& record) { return f * metric_value(record, m); },
          plot_label(*row)));
    }
    out += figure(root, section.name() + "-" + metric, plot);
  }
  return out;
}

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
    std::vector<std::pair<std::string, double>> keys =
        largest_terms({largest.begin(), largest.end()}, kMaxFourierCurves);
    const size_t drawn = keys.size();
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

namespace {

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

}  // namespace

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

}  // namespace maskprior::report
