// Where a rank's runs go on the machine's cores (experiments/placement.h): runs at once and the
// threads of each, as `maskc reproduce` and `maskc sweep` place them under several ranks.
#include <gtest/gtest.h>

#include "experiments/placement.h"

namespace maskprior::training {
namespace {

World ranks(int size, int local_size) {
  World world;
  world.size = size;
  world.local_size = local_size;
  return world;
}

TEST(PlacementTest, ThreadsPerRunShareTheCores) {
  EXPECT_EQ(threads_per_run(/*cores=*/16, /*jobs=*/4), 4);
  EXPECT_EQ(threads_per_run(/*cores=*/16, /*jobs=*/3), 5);
  EXPECT_EQ(threads_per_run(/*cores=*/16, /*jobs=*/2, /*local_ranks=*/4), 2);
  EXPECT_EQ(threads_per_run(/*cores=*/2, /*jobs=*/4), 1);  // never below one
  EXPECT_EQ(threads_per_run(/*cores=*/2, /*jobs=*/1, /*local_ranks=*/4), 1);
}

TEST(PlacementTest, SeveralRanksShareTheMachineUnlessGiven) {
  // 4 ranks on this machine of 16 cores: 4 runs at once each, 1 thread per run.
  Placement placement = place_on_cores(ranks(8, 4), /*cores=*/16, /*jobs=*/16,
                                       /*jobs_given=*/false, /*threads_given=*/false);
  EXPECT_EQ(placement.jobs, 4);
  EXPECT_EQ(placement.threads, 1);
  // --jobs 2 given: the threads follow it (16 / (2 × 4)).
  placement = place_on_cores(ranks(8, 4), 16, /*jobs=*/2, /*jobs_given=*/true,
                             /*threads_given=*/false);
  EXPECT_EQ(placement.jobs, 2);
  EXPECT_EQ(placement.threads, 2);
  // --threads given: left to the runs' settings.
  placement = place_on_cores(ranks(2, 2), 16, /*jobs=*/16, /*jobs_given=*/false,
                             /*threads_given=*/true);
  EXPECT_EQ(placement.jobs, 8);
  EXPECT_FALSE(placement.threads.has_value());
  // More ranks here than cores: one run at a time with one thread.
  placement = place_on_cores(ranks(4, 4), /*cores=*/2, /*jobs=*/2, /*jobs_given=*/false,
                             /*threads_given=*/false);
  EXPECT_EQ(placement.jobs, 1);
  EXPECT_EQ(placement.threads, 1);
}

TEST(PlacementTest, OneRankOrNoneKeepsTheGivenJobs) {
  for (const std::optional<World>& world : {std::optional<World>(), std::optional(ranks(1, 1))}) {
    const Placement placement = place_on_cores(world, /*cores=*/16, /*jobs=*/16,
                                               /*jobs_given=*/false, /*threads_given=*/false);
    EXPECT_EQ(placement.jobs, 16);
    EXPECT_FALSE(placement.threads.has_value());
  }
}

}  // namespace
}  // namespace maskprior::training
