// The step log of a run folder: every `log_every` steps (and at a session's last step) one line
// with the training loss of that step, the learning rate, the gradient norm and the seconds the
// run has trained, as JSON lines (steps.jsonl) and CSV (steps.csv). Each line is appended as soon
// as its step is done, so the log can be read while the run goes; a resumed run first cuts the
// lines after its checkpoint's step, so no step is logged twice. No LibTorch here.
#pragma once

#include <cstdint>
#include <utility>

#include "train/run_folder.h"

namespace maskprior::training {

/// The first line of steps.csv.
inline constexpr const char* kStepsCsvHeader = "step,loss,lr,grad_norm,seconds";

/// One line of the step log.
struct StepRecord {
  int64_t step = 0;      // steps done (1 after the first)
  double loss = 0;       // the training loss of this step's batch (not a mean)
  double lr = 0;         // the learning rate this step used
  double grad_norm = 0;  // the L2 norm of every parameter's gradient, before the optimizer step
  double seconds = 0;    // seconds the run has trained, over all its sessions
};

class StepLog {
 public:
  /// `every` = 0 logs nothing; so does a folder that is not enabled (a run without --out).
  StepLog(RunFolder folder, int64_t every) : folder_(std::move(folder)), every_(every) {}

  bool enabled() const { return folder_.enabled() && every_ > 0; }
  /// Whether step `step` of `total` is logged: every `every` steps, and the last one.
  bool due(int64_t step, int64_t total) const;
  /// Appends `record` to both files (steps.csv gets its header first when it is new).
  void append(const StepRecord& record) const;
  /// Keeps the lines of steps up to `step` in both files (a resumed run logs the later ones
  /// again); a last line cut short (a process killed while appending) is dropped.
  void truncate(int64_t step) const;

 private:
  RunFolder folder_;
  int64_t every_;
};

}  // namespace maskprior::training
