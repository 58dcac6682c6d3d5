// REPORT.md's tables and text blocks (see report.h): per section the results and settings
// tables and the min-degree interpolator's note; for the whole report the provenance, the runs
// left out and those not finished. Internal to report/.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "report/section.h"

namespace maskprior::report {

/// What the validator says about the task's min-degree interpolator, and for each spec of the
/// section whether its mask can exclude it (families whose target is a Boolean function on the
/// cube; "" otherwise). Relative spec paths are tried from here, then from `share_dir`.
std::string mdi_text(const TaskSection& section, const std::string& share_dir);
/// A row per run setting: `key` over seeds, the paper's number, the family's other metrics and
/// diagnostics, steps to 50% / 95%, prior mass, mask drift and wall time.
std::string results_table(const TaskSection& section, const std::string& key);
/// "Each run": a row per run, by setting and then seed: `key` and the results table's other
/// metrics at the run's end, its largest learned Fourier coefficients (families that record
/// them), the step it first reached 95%, prior mass, wall time and commit.
std::string runs_table(const TaskSection& section, const std::string& key);
/// "Does the prior help?": each row with a prior (init other than vanilla) against the vanilla
/// row whose settings are the same but for what only a prior reads (init, spec, mask and qk
/// settings): the per-seed differences in `key` (seed K against seed K), their mean with a 95%
/// paired t-interval, how many seeds came out higher, and whether the row is a positive control
/// by `control` ("no (seed K)" names the first seed below it); the text says so when `key` is
/// not the tables' metric `tables_key`. "" when no row has such a pair.
std::string help_table(const TaskSection& section, const std::string& key,
                       const std::string& tables_key, const ControlCriterion& control);
/// A row per run setting: preset, data, model, optimiser and budget, device and threads.
std::string settings_table(const TaskSection& section);
/// What computed the runs: one line per distinct commit, build, machine, device and precision.
std::string provenance_text(const std::vector<ReportRow>& rows);
/// The runs the report leaves out, and why ("" when none).
std::string left_out_text(const std::vector<LeftOut>& left_out);
/// The run folders under `root` that have not finished, each by its path below `root` and its
/// state ("" when none): a report of a study in progress says what it does not show yet.
std::string unfinished_text(const std::filesystem::path& root,
                            const std::vector<runfolder::Unfinished>& unfinished);

}  // namespace maskprior::report
