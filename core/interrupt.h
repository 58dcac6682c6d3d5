// A request to stop the process (SIGINT, SIGTERM) that long work polls. The handlers that make
// the request are train/interrupt.h's; a process that installs none never sees one. The training
// loop reads it between steps and stops with a checkpoint; set-up work (reading a data file,
// fitting an initialisation, hashing the files of a run) calls check_stop_requested, which
// throws Interrupted, so a signal during set-up ends the run promptly through the normal error
// path instead of waiting for the first step.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace maskprior {

/// Records `signal` as the request to stop. Async-signal-safe (one lock-free atomic store).
void request_stop(int signal);
/// Forgets a request: a new outermost InterruptScope starts with none.
void clear_stop_request();
/// The signal that asked the process to stop (SIGINT or SIGTERM), 0 if none has.
int stop_requested();

/// "SIGINT", "SIGTERM", else "signal N".
std::string signal_name(int signal);

/// Work stopped by a signal before it was done; the CLI exits with 128 + signal().
class Interrupted : public std::runtime_error {
 public:
  /// what(): "stopped by SIGTERM while DURING, before training started".
  Interrupted(int signal, std::string_view during);
  int signal() const { return signal_; }

 private:
  int signal_;
};

/// Throws Interrupted when a stop has been requested; `during` says what was being done ("fitting
/// the qk-opt initialisation"). A loop whose message needs formatting tests stop_requested()
/// itself, so that each poll stays one atomic load.
void check_stop_requested(std::string_view during);

}  // namespace maskprior
