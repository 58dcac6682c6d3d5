// Stopping a run cleanly: SIGINT (Ctrl-C) and SIGTERM set a flag that the training loop polls
// between steps; the loop then writes a checkpoint and returns (a signal handler can do no more).
#pragma once

namespace maskprior::training {

/// Installs the SIGINT and SIGTERM handlers for its lifetime and restores the previous ones
/// after. A second signal of the same kind ends the process at once. The outermost scope starts
/// with no signal; an inner one (a run inside `reproduce`) keeps one that arrived before it, so a
/// signal between two runs of a suite, or after a run's last check, stops the suite.
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
