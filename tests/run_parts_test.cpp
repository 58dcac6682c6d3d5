// The training loop's collaborators, each alone: the batch order over epochs, the session's clock,
// the history of evaluations across sessions, and what the checkpointer says it kept.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/error.h"
#include "io/json_file.h"
#include "train/checkpoint.h"
#include "train/data_order.h"
#include "train/evaluation_history.h"
#include "train/run_folder.h"
#include "train/session_clock.h"

namespace maskprior::training {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class RunPartsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("run_parts_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

json record(int64_t step, double accuracy) {
  json r = {{"step", step}, {"accuracy", accuracy}};
  if (step > 0) r["train_loss"] = 1.0 / static_cast<double>(step);
  return r;
}

TEST(BatchOrderTest, StepsWalkTheEpochsBatchesInOrder) {
  const std::vector<int64_t> groups = {7, 5};
  BatchOrder order(3, groups, 4);
  ASSERT_EQ(order.steps_per_epoch(), batches_per_epoch(groups, 4));
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    const EpochBatches expected = epoch_batches(3, epoch, groups, 4);
    for (int64_t b = 0; b < order.steps_per_epoch(); ++b) {
      const auto [first, count] = expected.batches[static_cast<size_t>(b)];
      const std::vector<int64_t> rows(expected.order.begin() + first,
                                      expected.order.begin() + first + count);
      EXPECT_EQ(order.rows(epoch * order.steps_per_epoch() + b), rows) << epoch << " " << b;
    }
  }
  // Asked out of order (a resumed run starts mid-epoch), the same rows.
  BatchOrder resumed(3, groups, 4);
  BatchOrder fresh(3, groups, 4);
  EXPECT_EQ(resumed.rows(5), fresh.rows(5));
  EXPECT_EQ(resumed.rows(1), fresh.rows(1));
}

TEST(SessionClockTest, TheFirstStepOfASessionIsNotTimed) {
  SessionClock clock;
  EXPECT_TRUE(clock.timing()["seconds_per_step"].is_null());
  clock.set_evaluation_seconds(1.5);
  clock.begin_steps(10);  // a session resumed at step 10
  auto begin = SessionClock::Clock::now();
  clock.step_done(11, begin);  // its first step warms up
  EXPECT_EQ(clock.timing()["timed_steps"], 0);
  begin = SessionClock::Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  clock.step_done(12, begin);
  const json timing = clock.timing();
  EXPECT_EQ(timing["timed_steps"], 1);
  EXPECT_GE(timing["seconds_per_step"].get<double>(), 0.015);
  EXPECT_EQ(timing["evaluation_seconds"], 1.5);
  EXPECT_GE(timing["setup_seconds"].get<double>(), 0.0);
  EXPECT_GE(clock.elapsed(), timing["setup_seconds"].get<double>());
}

TEST_F(RunPartsTest, HistoryKeepsInitMetricsAndTheLastRecord) {
  const RunFolder folder((dir_ / "run").string());
  fs::create_directories(folder.path());
  EvaluationHistory history(folder);
  history.start(record(0, 0.1));
  EXPECT_TRUE(history.last_record().is_null());
  history.append(record(4, 0.5));
  history.append(record(8, 0.9));
  EXPECT_EQ(history.steps(), (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(history.last_record()["accuracy"], 0.9);
  EXPECT_EQ(read_json_file(folder.file(kInitFile))["accuracy"], 0.1);
  ASSERT_EQ(history.records().size(), 3u);
  EXPECT_EQ(history.records()[1], record(4, 0.5));
  EXPECT_TRUE(history.lost().empty());
}

TEST_F(RunPartsTest, ResumedHistoryDropsLaterRecordsAndFindsLostOnes) {
  const RunFolder folder((dir_ / "run").string());
  fs::create_directories(folder.path());
  {
    EvaluationHistory first(folder);
    first.start(record(0, 0.1));
    for (int64_t step : {4, 8, 12}) first.append(record(step, 0.1 * static_cast<double>(step)));
  }
  // The checkpoint at step 8 recorded evaluations 0, 4, 8: step 12 came after it.
  EvaluationHistory resumed(folder);
  resumed.resume(8, std::vector<int64_t>{0, 4, 8});
  EXPECT_EQ(resumed.steps(), (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(resumed.last_record()["step"], 8);
  EXPECT_EQ(resumed.init_record()["accuracy"], 0.1);
  EXPECT_EQ(read_json_lines(folder.file(kMetricsFile)).size(), 3u);
  // A checkpoint that recorded an evaluation the file no longer holds: lost, and the run goes on.
  EvaluationHistory lossy(folder);
  lossy.resume(8, std::vector<int64_t>{0, 2, 4, 8});
  EXPECT_EQ(lossy.lost(), std::vector<int64_t>{2});
  // The file holds a step the run never wrote: another run's history.
  EvaluationHistory foreign(folder);
  EXPECT_THROW(foreign.resume(8, std::vector<int64_t>{0, 8}), InputError);
}

TEST(RunPartsNoFolderTest, HistoryWithoutAFolderKeepsTheSessionInMemory) {
  const RunFolder none("");
  EvaluationHistory history(none);
  history.start(record(0, 0.2));
  history.append(record(3, 0.7));
  ASSERT_EQ(history.records().size(), 2u);
  EXPECT_EQ(history.records()[1]["accuracy"], 0.7);
}

TEST(RunPartsNoFolderTest, CheckpointerSaysWhatItKept) {
  EXPECT_EQ(Checkpointer("", false).kept(), "no --out, so nothing was saved");
  EXPECT_EQ(Checkpointer("runs/x", true).kept(), "no checkpoint had been written yet");
}

}  // namespace
}  // namespace maskprior::training
