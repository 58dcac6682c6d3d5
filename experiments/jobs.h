// Running the runs of a suite in parallel processes (`maskc reproduce --jobs N`): each run goes
// to a forked child, at most N at a time, under the process supervisor of core/supervisor.h. The
// parent forks before it has done any LibTorch work, so a child starts from a clean state and
// runs with its own threads.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace maskprior::training {

/// One unit of work: a label for messages and the function a child runs (its exit status).
struct Job {
  std::string label;
  std::function<int()> run;
};

struct JobsOutcome {
  std::vector<std::string> failed;  // labels of jobs that exited non-zero, other than 130 / 143
  /// SIGINT/SIGTERM arrived (children were asked to stop), or a job stopped with a checkpoint
  /// (exit 130 / 143: a signal, or a run's --stop-after), so that the same command resumes it.
  bool interrupted = false;
};

/// Runs every job in a child process, at most `parallel` at once, and waits for all of them.
/// SIGINT and SIGTERM sent to the parent are passed on to the running children (which checkpoint
/// and stop) and no new job starts. A job that throws prints `maskc: error in LABEL: WHAT` and
/// exits 1. With `status_every` positive, `on_status` is called about that often while jobs run,
/// with the indices of the running ones (to print how far each has got).
JobsOutcome run_jobs(const std::vector<Job>& jobs, int parallel,
                     std::chrono::milliseconds status_every = {},
                     const std::function<void(const std::vector<size_t>&)>& on_status = {});

}  // namespace maskprior::training
