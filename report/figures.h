// REPORT.md's figures (see report.h): PNG plots under DIR/plots, each returned as its Markdown
// image line ("" when there is nothing to draw). Internal to report/.
#pragma once

#include <filesystem>
#include <string>

#include "report/section.h"

namespace maskprior::report {

/// InputError unless root/plots is missing or a folder of root's own: a symlink (or anything
/// else) there could send the plots outside DIR.
void check_plots_folder(const std::filesystem::path& root);
/// The metric per row: one marker per seed and the mean ± std; or, when the rows sweep the train
/// fraction, the metric against it with one line per init.
std::string final_figure(const std::filesystem::path& root, const TaskSection& section,
                         const std::string& key);
/// One figure of the section, NAME-by-setting.png: the metric against each setting the rows
/// differ in, but init (the lines), the train fraction (final_figure) and the spec's digest.
std::string setting_figures(const std::filesystem::path& root, const TaskSection& section,
                            const std::string& key);
/// Learning curves, prior mass and mask drift over training, one line per row.
std::string curve_figures(const std::filesystem::path& root, const TaskSection& section,
                          const std::string& key);
/// Boolean rows: the learned Fourier coefficients over training, one figure of the section,
/// NAME-fourier.png, with a panel per row. A row with more than 8 coefficients draws those largest
/// in magnitude at the last evaluation (the largest over its seeds), and its panel's title says
/// how many it drew. The alt text names the panels.
std::string fourier_figures(const std::filesystem::path& root, const TaskSection& section);
/// Runs over several sizes: `key` at each test size, a table (a column per size; sizes some run
/// trained at marked) and NAME-by-length.png (one line per row, the size on the x axis); "" when
/// no run of the section has `by_length`.
std::string by_length_text(const std::filesystem::path& root, const TaskSection& section,
                           const std::string& key);

}  // namespace maskprior::report
