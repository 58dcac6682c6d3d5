// Stopping a run cleanly: SIGINT (Ctrl-C) and SIGTERM request a stop (core/interrupt.h). The
// training loop polls it between steps, then writes a checkpoint and returns (a signal handler can
// do no more); set-up work polls it too and throws Interrupted, so a signal while a run reads its
// data or fits its initialisation ends the run at once, before anything is trained.
#pragma once

namespace maskprior::training {

/// Installs the SIGINT and SIGTERM handlers for its lifetime and restores the previous ones
/// after. A second signal of the same kind ends the process at once. The outermost scope starts
/// and ends with no signal; an inner one (a run inside `reproduce`) keeps one that arrived before
/// it, so a signal between two runs of a suite, or after a run's last check, stops the suite.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  /// The signal that asked the run to stop (SIGINT or SIGTERM), 0 if none has arrived.
  static int stop_signal();

 private:
  void (*previous_int_)(int);
  void (*previous_term_)(int);
};

}  // namespace maskprior::training
