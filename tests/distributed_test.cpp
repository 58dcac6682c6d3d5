// train/distributed.h without processes: shards of a batch and the launcher's variables.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "core/error.h"
#include "train/distributed.h"

namespace maskprior::training {
namespace {

TEST(Shard, CoversTheBatchContiguouslyWithSizesWithinOne) {
  for (int64_t count : {1, 2, 7, 15, 16, 256, 257}) {
    for (int world : {1, 2, 3, 4, 8, 20}) {
      int64_t next = 0, smallest = count, largest = 0;
      for (int rank = 0; rank < world; ++rank) {
        const Shard shard = shard_of(count, rank, world);
        if (shard.size > 0) {
          EXPECT_EQ(shard.offset, next) << count << " rows, rank " << rank << " of " << world;
        }
        next += shard.size;
        smallest = std::min(smallest, shard.size);
        largest = std::max(largest, shard.size);
      }
      EXPECT_EQ(next, count);
      EXPECT_LE(largest - smallest, 1);
    }
  }
}

/// Sets the variables for one test and clears them after.
class Environment : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name :
         {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
          "MASKC_DIST_TIMEOUT", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS",
          "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE"}) {
      ::unsetenv(name);
    }
  }
  static void set(const char* name, const char* value) { ::setenv(name, value, 1); }
};

TEST_F(Environment, NoLauncherMeansOneProcess) {
  TearDown();
  EXPECT_FALSE(world_from_environment().has_value());
}

TEST_F(Environment, TorchrunVariables) {
  set("RANK", "3");
  set("WORLD_SIZE", "4");
  set("LOCAL_RANK", "1");
  set("LOCAL_WORLD_SIZE", "2");
  set("MASTER_ADDR", "node0");
  set("MASTER_PORT", "29555");
  set("MASKC_DIST_TIMEOUT", "7");
  const auto world = world_from_environment();
  ASSERT_TRUE(world.has_value());
  EXPECT_EQ(world->rank, 3);
  EXPECT_EQ(world->size, 4);
  EXPECT_EQ(world->local_rank, 1);
  EXPECT_EQ(world->local_size, 2);
  EXPECT_EQ(world->master_addr, "node0");
  EXPECT_EQ(world->master_port, 29555);
  EXPECT_EQ(world->timeout_seconds, 7);
}

TEST_F(Environment, BadValuesNameTheVariable) {
  set("RANK", "x1");
  try {
    (void)world_from_environment();
    FAIL() << "RANK=x1 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("RANK='x1'"), std::string::npos) << e.what();
  }
  set("RANK", "2");
  set("WORLD_SIZE", "2");
  EXPECT_THROW((void)world_from_environment(), InputError);  // rank 2 of 2
  set("RANK", "0");
  set("MASTER_PORT", "70000");
  EXPECT_THROW((void)world_from_environment(), InputError);
}

TEST_F(Environment, SlurmJobStepButNotTheBatchShell) {
  set("SLURM_PROCID", "0");
  set("SLURM_NTASKS", "4");  // a batch script's shell: no job step, so one process
  EXPECT_FALSE(world_from_environment().has_value());
  set("SLURM_PROCID", "2");
  set("SLURM_STEP_NUM_TASKS", "4");
  set("SLURM_LOCALID", "0");
  set("SLURM_STEP_TASKS_PER_NODE", "2(x2)");
  const auto world = world_from_environment();
  ASSERT_TRUE(world.has_value());
  EXPECT_EQ(world->rank, 2);
  EXPECT_EQ(world->size, 4);
  EXPECT_EQ(world->local_size, 2);
}

}  // namespace
}  // namespace maskprior::training
