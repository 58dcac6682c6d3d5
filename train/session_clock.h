// The timing of one session of a run (a fresh start or a resume): set-up with the step-0
// evaluation, that evaluation, and the steps after the session's first (which warms up). What a
// stopped run's summary reports and `maskc sweep --dry-run` estimates whole runs from
// (experiments/run_plan.h). No LibTorch.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>

namespace maskprior::training {

class SessionClock {
 public:
  using Clock = std::chrono::steady_clock;

  /// Seconds since the session began (the clock's construction).
  double elapsed() const;
  /// The step-0 evaluation took `seconds`.
  void set_evaluation_seconds(double seconds) { evaluation_seconds_ = seconds; }
  /// Set-up has ended; training goes on from `step` (the steps already done).
  void begin_steps(int64_t step);
  /// A step that began at `begin` has ended now, and `steps` steps are done. The session's first
  /// step is not counted: it also warms up.
  void step_done(int64_t steps, Clock::time_point begin);
  /// {setup_seconds, evaluation_seconds, seconds_per_step (null: no step timed), timed_steps}.
  nlohmann::json timing() const;

 private:
  Clock::time_point started_ = Clock::now();
  double setup_seconds_ = 0, evaluation_seconds_ = 0, step_seconds_ = 0;
  int64_t timed_steps_ = 0, first_step_ = 0;
};

}  // namespace maskprior::training
