// `maskc report DIR`: REPORT.md and plots from the run folders under DIR (report/report.h).
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/share_dir.h"
#include "report/report.h"

namespace maskprior::cli {

void add_report_command(CLI::App& app, int& exit_code) {
  auto dir = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "report",
      "Write DIR/REPORT.md and PNG plots (DIR/plots) from the finished runs under DIR (a `maskc "
      "reproduce` results folder or any folder of run folders): per task the final metric, mean ± "
      "std over seeds, next to the paper's number and the validator's min-degree interpolator; "
      "steps to 50%/95%; settings; learning curves, prior mass, mask drift, Fourier coefficients.");
  cmd->add_option("DIR", *dir, "results folder")->required();
  cmd->callback([dir, &exit_code] {
    const std::string path = report::write_report({*dir, share_dir()});
    std::cout << "report: " << path << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
