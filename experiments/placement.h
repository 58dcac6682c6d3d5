// Where a process's runs go on this machine's cores: how many run at once (--jobs, each in a
// forked process) and with how many threads each. One formula for `maskc reproduce` and
// `maskc sweep` under several ranks (`maskc launch`, torchrun, srun), and for the plan's forked
// runs (run_plan.cpp).
#pragma once

#include <optional>

#include "train/distributed.h"

namespace maskprior::training {

/// The threads of each of `jobs` runs at once when `local_ranks` processes share this machine's
/// `cores`: cores / (jobs × local_ranks), at least 1.
int threads_per_run(int cores, int jobs, int local_ranks = 1);

/// How one rank runs its share: runs at once, and every run's threads when placing decided them.
struct Placement {
  int jobs = 1;
  std::optional<int> threads;  // nullopt: as the runs' settings say
};

/// A rank's place on this machine's `cores` when `world` has several ranks, world->local_size of
/// them here: unless given, runs at once = cores / local ranks, and each run's threads =
/// threads_per_run(cores, jobs, local ranks). With no world or one rank: `jobs` as given and no
/// threads (a plan with jobs > 1 gives its forked runs threads_per_run(cores, jobs) itself).
Placement place_on_cores(const std::optional<World>& world, int cores, int jobs, bool jobs_given,
                         bool threads_given);

}  // namespace maskprior::training
