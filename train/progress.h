// Progress of a run on stderr: a bar with loss and ETA on a terminal, plain lines otherwise
// (about ten per run), and notes (what is trained, evaluations, why a run stopped).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace maskprior::training {

class Progress {
 public:
  /// `enabled` = false prints nothing; `total` steps in the run, `start` the first step of this
  /// session (a resumed run's ETA counts only the steps done since).
  Progress(bool enabled, int64_t total, int64_t start);

  /// The steps start now: the ETA counts the time from here (not the set-up and the step-0
  /// evaluation before it, which would inflate it for the run's first steps).
  void begin_steps();
  /// After step `step` (1-based count of steps done) whose batch had training loss `loss`: shown
  /// as "last-step loss" (evaluation lines give the mean over the steps since the last).
  void update(int64_t step, double loss);
  /// Whether update(step, ...) would print: the loss is read from the device only then.
  bool due(int64_t step) const;
  /// A line of its own (clears the bar on a terminal).
  void note(const std::string& line);
  /// On a terminal, `line` in place of the bar until the next update or note (what the run is
  /// doing between steps, e.g. evaluating); nothing otherwise.
  void status(const std::string& line);

 private:
  using Clock = std::chrono::steady_clock;

  std::string eta(int64_t step, Clock::time_point now) const;

  bool enabled_, tty_;
  int64_t total_, start_;
  Clock::time_point begin_ = Clock::now(), last_print_{};
};

}  // namespace maskprior::training
