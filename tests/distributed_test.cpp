// train/distributed.h without processes: shards of a batch and the launcher's variables.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "core/error.h"
#include "mask_fixture.h"
#include "test_util.h"
#include "train/distributed.h"
#include "train/rendezvous_file.h"

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

using testing::input_error;
using testing::TempDir;

/// Sets the variables for one test and clears them after.
class Environment : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                             "MASTER_PORT", "MASKC_DIST_TIMEOUT", "SLURM_PROCID", "SLURM_NTASKS",
                             "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID", "SLURM_STEP_TASKS_PER_NODE",
                             "MASKC_RENDEZVOUS_FILE", "TMPDIR", "XDG_RUNTIME_DIR"}) {
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

// WORLD_SIZE without RANK is a launcher's mistake, not one process (which would train the whole
// job in every process).
TEST_F(Environment, WorldSizeWithoutRankIsAnError) {
  set("WORLD_SIZE", "4");
  EXPECT_NE(input_error([] {
              (void)world_from_environment();
            }).find("WORLD_SIZE='4' is set but RANK is not"),
            std::string::npos);
}

// MASKC_DIST_TIMEOUT takes what --dist-timeout takes: decimal seconds from 0.001 to 1e7, never NaN.
TEST_F(Environment, TimeoutTakesTheFlagsForms) {
  set("RANK", "0");
  set("MASKC_DIST_TIMEOUT", "2.5");
  EXPECT_EQ(world_from_environment()->timeout_seconds, 2.5);
  set("MASKC_DIST_TIMEOUT", "0.001");
  EXPECT_EQ(world_from_environment()->timeout_seconds, 0.001);
  for (const char* bad : {"nan", "inf", "0", "-1", "1e8", "2s", "x"}) {
    set("MASKC_DIST_TIMEOUT", bad);
    EXPECT_NE(input_error([] { (void)world_from_environment(); }).find("MASKC_DIST_TIMEOUT='"),
              std::string::npos)
        << bad;
  }
}

// A master address that cannot be one is refused at once, not after the rendezvous timeout.
TEST_F(Environment, MasterAddressIsAnAddressOrAHostName) {
  for (const char* good : {"127.0.0.1", "10.1.2.3", "::1", "fe80::1", "node0",
                           "gpu-17.cluster.example", "localhost"}) {
    EXPECT_NO_THROW(check_master_address(good)) << good;
  }
  for (const char* bad : {"", "999.1.1.1", "1.2.3", "bad addr", "-node", "node-", "a..b", ":::1",
                          "a/b", "x\x1b[31m"}) {
    EXPECT_THROW(check_master_address(bad), InputError) << bad;
  }
  set("RANK", "0");
  set("MASTER_ADDR", "999.1.1.1");
  EXPECT_NE(input_error([] { (void)world_from_environment(); })
                .find("master address '999.1.1.1' (MASTER_ADDR / --master-addr) is not an IPv4 "
                      "address"),
            std::string::npos);
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

// On one machine the ranks meet through a file in a folder only this user can enter, never
// through a port every host can reach; across machines, through rank 0's TCP port.
TEST_F(Environment, LoopbackMeetsThroughAPrivateFileAndOtherHostsThroughTcp) {
  const TempDir temp;
  const auto dir = std::filesystem::path(temp.file("x")).parent_path();
  set("TMPDIR", dir.c_str());
  World world;
  world.master_port = 29611;
  const std::string file = rendezvous_file_of(world);
  EXPECT_EQ(file, fmt::format("{}/maskc-{}/rendezvous-29611", dir.string(), ::getuid()));
  struct stat info {};
  ASSERT_EQ(::stat(std::filesystem::path(file).parent_path().c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0700u);
  world.master_addr = "node0";
  EXPECT_EQ(rendezvous_file_of(world), "");
  world.rendezvous_file = (dir / "mine").string();
  EXPECT_EQ(rendezvous_file_of(world), world.rendezvous_file);  // chosen: used even across hosts
  set("MASKC_RENDEZVOUS_FILE", world.rendezvous_file.c_str());
  set("RANK", "0");
  EXPECT_EQ(world_from_environment()->rendezvous_file, world.rendezvous_file);
}

// A folder someone else could have made or can write is refused, naming it.
TEST_F(Environment, AnOpenFolderIsRefused) {
  const TempDir temp;
  const auto dir = std::filesystem::path(temp.file("x")).parent_path();
  set("TMPDIR", dir.c_str());
  const auto mine = dir / fmt::format("maskc-{}", ::getuid());
  std::filesystem::create_directory(mine);
  ::chmod(mine.c_str(), 0777);
  World world;
  EXPECT_NE(input_error([&] { (void)rendezvous_file_of(world); }).find("is not a private folder"),
            std::string::npos);
  world.rendezvous_file = (mine / "store").string();
  EXPECT_NE(input_error([&] { (void)rendezvous_file_of(world); }).find("writable by every user"),
            std::string::npos);
  world.rendezvous_file = (dir / "missing" / "store").string();
  EXPECT_NE(input_error([&] { (void)rendezvous_file_of(world); }).find("does not exist"),
            std::string::npos);
}

// Rank 0 clears what an earlier job left and publishes the file; a second rank 0 is refused while
// the first lives; another rank waits for rank 0 and sees it end.
TEST(RendezvousFile, RankZeroOwnsThePathAndOthersWatchIt) {
  const TempDir temp;
  const std::string path = temp.file("store");
  std::ofstream(path) << "an earlier job's keys";
  {
    const RendezvousFile rank0(path, 0, 2, 1);
    EXPECT_FALSE(std::filesystem::exists(path)) << "the old store is cleared";
    EXPECT_TRUE(std::filesystem::exists(path + ".rank0"));
    EXPECT_NE(
        input_error([&] { RendezvousFile again(path, 0, 2, 1); }).find("in use by another job"),
        std::string::npos);
    const RendezvousFile rank1(path, 1, 2, 1);
    EXPECT_TRUE(rank1.rank0_alive());
  }
  EXPECT_FALSE(std::filesystem::exists(path + ".rank0")) << "withdrawn at the end";
  // An earlier rank 0 that died (its file left behind, unlocked) is not taken for a live one.
  std::ofstream(path + ".rank0") << "12345\n";
  const auto message = input_error([&] { RendezvousFile rank1(path, 1, 2, 0.2); });
  EXPECT_NE(message.find("rank 0 did not open the rendezvous"), std::string::npos) << message;
  // A rank that waits for rank 0 goes on as soon as rank 0 has published.
  std::unique_ptr<RendezvousFile> late;
  std::thread rank0([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    late = std::make_unique<RendezvousFile>(path, 0, 2, 1);
  });
  const RendezvousFile rank1(path, 1, 2, 5);
  rank0.join();
  EXPECT_TRUE(rank1.rank0_alive());
  late.reset();
  EXPECT_FALSE(rank1.rank0_alive());
}

}  // namespace
}  // namespace maskprior::training
