// The runs layer: the archive of a results folder (runfolder/archive.h) read back exactly, and
// every malformed archive refused with the file, line and what is wrong.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/error.h"
#include "runfolder/archive.h"
#include "runfolder/run_files.h"
#include "runfolder/run_state.h"
#include "tests/test_util.h"

namespace {

namespace fs = std::filesystem;
using maskprior::InputError;
namespace runfolder = maskprior::runfolder;

class RunsArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = maskprior::testing::unique_temp_dir(
        std::string("runfolder_test_") +
        ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Writes `text` gzip-compressed to DIR/name.
  fs::path gzip(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    gzFile out = gzopen(path.c_str(), "wb");
    EXPECT_NE(out, nullptr);
    EXPECT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
              static_cast<int>(text.size()));
    gzclose(out);
    return path;
  }
  std::string refusal(const fs::path& archive) {
    try {
      runfolder::read_archive(archive);
    } catch (const InputError& e) {
      return e.what();
    }
    return "accepted";
  }
  fs::path dir_;
};

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(RunsArchiveTest, ReadsRunsAndExtractsTheirFilesByteForByte) {
  const std::string config = "{\n  \"task\": \"parity2\"\n}\n";
  const std::string metrics = "{\"step\":0}\r\n{\"step\":1}\n";  // kept as it was, CR and all
  gzip("cell/runs.jsonl.gz", "{\"path\":\"runs/init=mask/seed0\",\"files\":{\"config.json\":" +
                                 nlohmann::json(config).dump() +
                                 ",\"metrics.jsonl\":" + nlohmann::json(metrics).dump() +
                                 "}}\n\n{\"path\":\"runs/init=mask/seed1\",\"files\":{}}\n");
  const auto read = runfolder::read_archive(dir_ / "cell" / runfolder::kArchiveFile);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_EQ(read[0].path, "runs/init=mask/seed0");
  EXPECT_EQ(read[0].files.at("config.json"), config);
  EXPECT_EQ(runfolder::find_archives(dir_), std::vector<fs::path>{dir_ / "cell" / "runs.jsonl.gz"});
  const fs::path into = dir_ / "out";
  fs::create_directories(into);
  EXPECT_EQ(runfolder::extract_archives(dir_, into), 2u);
  EXPECT_EQ(slurp(into / "cell/runs/init=mask/seed0/config.json"), config);
  EXPECT_EQ(slurp(into / "cell/runs/init=mask/seed0/metrics.jsonl"), metrics);
  EXPECT_TRUE(fs::is_directory(into / "cell/runs/init=mask/seed1"));
}

TEST_F(RunsArchiveTest, ExtractedRunsLiveInAPrivateFolderRemovedAfterwards) {
  gzip("study/a/runs.jsonl.gz", "{\"path\":\"runs/seed0\",\"files\":{\"summary.json\":\"{}\"}}\n");
  fs::path tree;
  {
    const runfolder::ExtractedRuns extracted(dir_ / "study");
    tree = extracted.tree();
    EXPECT_EQ(tree.filename(), "study");  // named as the results folder: the same row labels
    EXPECT_TRUE(fs::is_regular_file(tree / "a/runs/seed0/summary.json"));
    EXPECT_EQ(extracted.display(tree / "a/runs/seed0"),
              (dir_ / "study" / "a/runs/seed0").string() + " (archived)");
    EXPECT_EQ(fs::status(tree.parent_path()).permissions() & fs::perms::all, fs::perms::owner_all);
  }
  EXPECT_FALSE(fs::exists(tree));
  EXPECT_TRUE(runfolder::ExtractedRuns(dir_ / "nothing-here").tree().empty());
}

TEST_F(RunsArchiveTest, RefusesWhatNoArchiveOfRunsHolds) {
  const auto refused = [&](const std::string& name, const std::string& text) {
    return refusal(gzip(name + "/runs.jsonl.gz", text));
  };
  EXPECT_NE(refused("a", "{\"path\":\"../x\",\"files\":{}}\n").find(":1: path '../x' is not a"),
            std::string::npos);
  EXPECT_NE(refused("b", "{\"path\":\"/etc\",\"files\":{}}\n").find("path '/etc' is not"),
            std::string::npos);
  EXPECT_NE(refused("c", "\n{\"path\":\"x\",\"files\":{\"weights.safetensors\":\"\"}}\n")
                .find(":2: 'weights.safetensors' is no file an archived run keeps"),
            std::string::npos);
  EXPECT_NE(refused("d", "{\"path\":\"x\",\"files\":{}}\n{\"path\":\"x\",\"files\":{}}\n")
                .find(":2: run 'x' is in the archive twice"),
            std::string::npos);
  EXPECT_NE(refused("e", "[1, 2]\n").find(":1: not a run"), std::string::npos);
  EXPECT_NE(refused("f", "{\"path\":\"x\",\"files\":{\"config.json\":3}}\n")
                .find("the text of config.json is not a string"),
            std::string::npos);
  EXPECT_NE(refused("g", "{\"path\": tru").find("runs.jsonl.gz:1:"), std::string::npos);
  EXPECT_NE(refused("h", std::string(600, '[')).find("nested"), std::string::npos);
  std::ofstream(dir_ / "i.jsonl.gz") << "\x1f\x8b not really gzip";
  EXPECT_NE(refusal(dir_ / "i.jsonl.gz").find("not a readable gzip file"), std::string::npos);
  fs::create_directories(dir_ / "j.jsonl.gz");
  EXPECT_NE(refusal(dir_ / "j.jsonl.gz").find("not a regular file"), std::string::npos);
  const fs::path big = gzip("k/runs.jsonl.gz", std::string(3 << 20, ' '));
  try {
    runfolder::read_archive(big, 1 << 20);
    ADD_FAILURE() << "a 3 MiB archive read under a 1 MiB cap";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 1 MiB decompressed"), std::string::npos);
  }
}

// One definition of a run's state: no config is no run; a summary that does not say
// `interrupted` is finished; otherwise a held lock is running, else stopped.
TEST_F(RunsArchiveTest, RunStateIsOneDefinition) {
  using runfolder::RunState;
  const fs::path run = dir_ / "run";
  fs::create_directories(run);
  EXPECT_EQ(runfolder::run_state(run), RunState::kNone);
  std::ofstream(run / "config.json") << "{}";
  EXPECT_EQ(runfolder::run_state(run), RunState::kStopped);
  std::ofstream(run / ".lock") << "";
  EXPECT_EQ(runfolder::run_state(run), RunState::kRunning);
  EXPECT_STREQ(runfolder::run_state_name(RunState::kRunning), "running");
  std::ofstream(run / "summary.json") << R"({"interrupted": true})";
  EXPECT_EQ(runfolder::run_state(run), RunState::kRunning);
  EXPECT_FALSE(runfolder::finished_summary(run));
  fs::remove(run / ".lock");
  EXPECT_EQ(runfolder::run_state(run), RunState::kStopped);
  std::ofstream(run / "summary.json") << R"({"accuracy": 0.5})";
  EXPECT_EQ(runfolder::run_state(run), RunState::kFinished);
  EXPECT_EQ(runfolder::finished_summary(run)->at("accuracy"), 0.5);
  std::ofstream(run / "summary.json") << "{not json";  // its readers say what is wrong
  EXPECT_EQ(runfolder::run_state(run), RunState::kFinished);
  EXPECT_STREQ(runfolder::run_state_name(RunState::kFinished), "finished");
}

// A sweep's status line reads the newest complete record of a running run's step log: a line
// still being written (no newline yet) is skipped, and so is a log that is no record at all.
TEST_F(RunsArchiveTest, LatestStepIsTheLastCompleteLine) {
  const fs::path run = dir_ / "steps";
  fs::create_directories(run);
  EXPECT_FALSE(runfolder::latest_step(run)) << "no log yet";
  std::string log;
  for (int step = 10; step <= 400; step += 10) {  // more than the 4 KiB read
    log += R"({"loss":0.5,"seconds":)" + std::to_string(step) + R"(.5,"step":)" +
           std::to_string(step) + "}\n";
  }
  std::ofstream(run / "steps.jsonl") << log << R"({"loss":0.4,"sec)";
  const auto record = runfolder::latest_step(run);
  ASSERT_TRUE(record);
  EXPECT_EQ(record->at("step"), 400);
  EXPECT_EQ(record->at("seconds"), 400.5);
  std::ofstream(run / "steps.jsonl") << R"({"step":10})"
                                     << "\n";  // a single line
  EXPECT_EQ(runfolder::latest_step(run)->at("step"), 10);
  std::ofstream(run / "steps.jsonl") << "not json\n";
  EXPECT_FALSE(runfolder::latest_step(run));
  std::ofstream(run / "steps.jsonl") << R"({"step":"ten"})"
                                     << "\n";
  EXPECT_FALSE(runfolder::latest_step(run));
}

// A status line or report says how far a run has got: step of the total its config.json resolved,
// loss, time so far and the time left at its pace so far; what it cannot read it leaves out.
TEST_F(RunsArchiveTest, ProgressTextGivesStepOfTotalAndTimeLeft) {
  const fs::path run = dir_ / "progress";
  fs::create_directories(run);
  EXPECT_EQ(runfolder::progress_text(run), "no step logged yet");
  std::ofstream(run / "steps.jsonl") << R"({"loss":0.00033,"seconds":2472,"step":1070})"
                                     << "\n";
  EXPECT_EQ(runfolder::progress_text(run), "step 1070, loss 0.00033, 41.2 min") << "no config";
  std::ofstream(run / "config.json") << R"({"resolved": {"steps": 3840}})";
  EXPECT_EQ(runfolder::progress_text(run),
            "step 1070 of 3840, loss 0.00033, 41.2 min, about 106.7 min left");
  std::ofstream(run / "config.json") << R"({"resolved": {"steps": "many"}})";
  EXPECT_EQ(runfolder::progress_text(run), "step 1070, loss 0.00033, 41.2 min");
  std::ofstream(run / "config.json") << R"({"resolved": [)";  // being written
  EXPECT_EQ(runfolder::progress_text(run), "step 1070, loss 0.00033, 41.2 min");
  std::ofstream(run / "config.json") << R"({"resolved": {"steps": 1070}})";  // the last step
  EXPECT_EQ(runfolder::progress_text(run), "step 1070 of 1070, loss 0.00033, 41.2 min");
  std::ofstream(run / "steps.jsonl") << R"({"step":5})"
                                     << "\n";  // no loss or time
  EXPECT_EQ(runfolder::progress_text(run), "step 5 of 1070");
  // The time left is at the recent pace: 100 s for the last 100 steps, not the 1,000 s of the
  // first 100 (a run resumed, or sharing its cores for a while, is not judged by its past).
  std::ofstream(run / "config.json") << R"({"resolved": {"steps": 1200}})";
  std::ofstream(run / "steps.jsonl") << R"({"step":100,"seconds":1000})"
                                     << "\n"
                                     << R"({"step":200,"seconds":1100})"
                                     << "\n";
  EXPECT_EQ(runfolder::progress_text(run), "step 200 of 1200, 18.3 min, about 16.7 min left");
}

}  // namespace
