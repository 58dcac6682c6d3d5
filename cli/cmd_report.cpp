// `maskc report DIR`: REPORT.md and plots from the run folders under DIR (report/report.h).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/share_dir.h"
#include "core/error.h"
#include "core/text.h"
#include "report/report.h"
#include "runfolder/run_state.h"

namespace maskprior::cli {

void add_report_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<report::ReportOptions>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write DIR/REPORT.md and PNG plots (DIR/plots) from the finished runs under DIR (a `maskc "
      "reproduce` or `maskc sweep` results folder, or any folder of run folders): per task or data "
      "file the final metric, mean ± std over seeds, next to the paper's number and the "
      "validator's min-degree interpolator (and whether the spec each row's runs kept as "
      "spec.mask can exclude it); steps to 50%/95%; each prior against vanilla seed by seed, "
      "labelled a positive control or not (\"Does the prior help?\"); settings; learning "
      "curves, prior "
      "mass, mask drift, Fourier coefficients. A row is the runs of one folder whose settings "
      "(config.json, all but the seed and execution settings such as threads and device) are "
      "equal: only seeds pool; runs of one folder that differ are rows labelled by what differs. "
      "A setting that an older run's config.json lacks (it predates the setting) takes the value "
      "the folder's other runs agree on.");
  cmd->add_option("DIR", options->dir, "results folder")->required();
  cmd->add_option("--metric", options->metric,
                  "summary.json key the tables, plots and \"Does the prior help?\" judge by "
                  "(default: each task family's headline metric, e.g. accuracy, "
                  "sequence_accuracy, top1, test_bpc; \"Does the prior help?\" judges Boolean "
                  "tasks and truth tables on their unseen points, unseen_accuracy)");
  cmd->add_option("--control-points", options->control.points,
                  "\"Does the prior help?\" labels a prior a positive control when it beats "
                  "vanilla by at least this many points of % on each seed")
      ->check(finite_range(0.01, 100.0))
      ->capture_default_str();
  cmd->add_option("--control-seeds", options->control.seeds,
                  "a positive control (--control-points) needs at least this many seeds of both "
                  "the prior and vanilla (fewer: not judged)")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_flag("--per-run", options->per_run,
                "also a table of each run, seed by seed, under each task's results: the metric "
                "and the task's diagnostics at the run's end, its largest learned Fourier "
                "coefficients (Boolean tasks), steps to 95%, prior mass, wall time and commit");
  cmd->callback([options, &exit_code] {
    options->share_dir = share_dir();
    std::vector<runfolder::LeftOut> left_out;
    std::vector<runfolder::Unfinished> unfinished;
    const std::string path = report::write_report(*options, &left_out, &unfinished);
    for (const auto& l : left_out) {
      std::cerr << "maskc report: left out " << escape_control_chars(l.reason) << "\n";
    }
    for (const auto& u : unfinished) {
      std::cerr << "maskc report: not finished (" << runfolder::run_state_name(u.state) << ", "
                << u.progress << "), not in the tables: " << escape_control_chars(u.dir) << "\n";
    }
    std::cout << "report: " << printable_utf8(path) << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
