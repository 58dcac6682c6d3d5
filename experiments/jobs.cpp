#include "experiments/jobs.h"

#include <fmt/format.h>

#include <exception>
#include <iostream>

#include "core/supervisor.h"

namespace maskprior::training {

JobsOutcome run_jobs(const std::vector<Job>& jobs, int parallel,
                     std::chrono::milliseconds status_every,
                     const std::function<void(const std::vector<size_t>&)>& on_status) {
  std::vector<ChildProcess> children;
  for (const Job& job : jobs) {
    children.push_back({job.label, [&job] {
                          try {
                            return job.run();
                          } catch (const std::exception& e) {
                            std::cerr
                                << fmt::format("maskc: error in {}: {}\n", job.label, e.what());
                            return 1;
                          }
                        }});
  }
  SuperviseOptions options;
  options.parallel = parallel;
  options.tick_every = status_every;
  options.on_tick = on_status;
  options.cannot_start = [](const ChildProcess& child, int /*error*/) {
    return fmt::format("[jobs] cannot start a process for {}", child.label);
  };
  const Supervision supervision = supervise(children, options);
  JobsOutcome outcome;
  outcome.interrupted = supervision.signal != 0;
  for (const ChildExit& exit : supervision.exits) {
    // 130 / 143: stopped with a checkpoint (train/interrupt.h), after a signal or by the run's
    // own --stop-after: interrupted (the same command resumes it), not failed.
    if (is_stop_status(exit.status)) {
      outcome.interrupted = true;
    } else if (exit.status != 0) {
      outcome.failed.push_back(jobs[exit.child].label);
    }
  }
  return outcome;
}

}  // namespace maskprior::training
