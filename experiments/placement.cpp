#include "experiments/placement.h"

#include <algorithm>

namespace maskprior::training {

int threads_per_run(int cores, int jobs, int local_ranks) {
  return std::max(1, cores / (jobs * local_ranks));
}

Placement place_on_cores(const std::optional<World>& world, int cores, int jobs, bool jobs_given,
                         bool threads_given) {
  Placement placement{jobs, std::nullopt};
  if (!world || world->size <= 1) return placement;
  const int local_ranks = world->local_size;
  if (!jobs_given) placement.jobs = std::max(1, cores / local_ranks);
  if (!threads_given) placement.threads = threads_per_run(cores, placement.jobs, local_ranks);
  return placement;
}

}  // namespace maskprior::training
