// Child processes under one supervisor: `maskc reproduce --jobs N` runs each run of a suite in a
// forked child (experiments/jobs.h), `maskc launch` starts the ranks of a job as processes
// of maskc-runtime (cli/cmd_launch.cpp). The supervisor starts the children, at most `parallel` at
// once; passes SIGINT and SIGTERM on to them; waits for each; and reports how each ended as a
// shell does (the exit code, or 128 + the signal that ended it). It lives in core because the
// light `maskc`, which never links LibTorch, runs it as well as the experiments layer.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace maskprior {

/// One child process: a label for messages, and its work, run in the forked child — a function
/// of the parent's state that returns the exit status, or one that replaces the child by another
/// program (execv) and returns a status only if that fails. An exception that escapes `work` ends
/// the child with status 1 after printing `error in LABEL: WHAT`.
struct ChildProcess {
  std::string label;
  std::function<int()> work;
};

/// How one child ended.
struct ChildExit {
  size_t child = 0;  // its index among the children
  int status = 0;    // as a shell reports it: the exit code, or 128 + the signal that ended it
  int signal = 0;    // the last SIGINT or SIGTERM passed on before it ended (0: none)
};

struct SuperviseOptions {
  int parallel = 1;  // children running at once (at least 1)
  /// Each child in its own process group (every child is sent SIGTERM if the supervisor dies,
  /// whether or not it has its own group): a Ctrl-C at the terminal reaches the supervisor alone,
  /// which passes it on once (a second SIGINT would end a training run before its checkpoint,
  /// train/interrupt.h).
  bool own_process_group = false;
  /// When set: after the first child that fails, unless it stopped cleanly (is_stop_status) or a
  /// signal was passed on before it ended, no child starts and the running ones get SIGTERM, then
  /// SIGKILL this long after. Unset: the others run on.
  std::optional<std::chrono::milliseconds> stop_others_on_failure;
  /// Called with the failure before the others are stopped (to say why).
  std::function<void(const ChildExit&)> on_stopping_others;
  /// The message of the InputError thrown when a child cannot be started (fork failed with errno
  /// `error`); default: "cannot start a process for LABEL: REASON".
  std::function<std::string(const ChildProcess&, int error)> cannot_start;
  /// When set and `tick_every` is positive: called about every `tick_every` while children run,
  /// with the indices of the running ones in start order (to print how far each has got).
  std::function<void(const std::vector<size_t>& running)> on_tick;
  std::chrono::milliseconds tick_every{0};
};

struct Supervision {
  std::vector<ChildExit> exits;  // in the order the children ended
  int signal = 0;                // the last SIGINT or SIGTERM passed on (0: none)

  /// The first child to end with a non-zero status, or nullptr.
  const ChildExit* first_failure() const;
};

/// Runs `children` in order, each in a forked child process, at most options.parallel at once,
/// and returns when every child it started has ended. A child is sent SIGTERM when the supervisor
/// dies, however it dies (PR_SET_PDEATHSIG), so none is left running as an orphan. While it runs,
/// SIGINT and SIGTERM sent to this process are passed on to every running child (as often as they
/// arrive) and no further child starts; the previous handlers are restored on return. One
/// supervisor per process at a time. Throws InputError (options.cannot_start) if fork fails; the
/// children already started are left running.
Supervision supervise(const std::vector<ChildProcess>& children, const SuperviseOptions& options);

/// True for 130 and 143, the statuses of a process that stopped on SIGINT or SIGTERM — the way a
/// training run exits after writing its checkpoint (train/interrupt.h), as well as by the signal.
bool is_stop_status(int status);

}  // namespace maskprior
