// Task families (tasks/family.h): the built-in descriptors, and a toy family registered at run time
// through the same path as the built-in ones (its descriptor, then its experiment) that trains,
// reports and runs as a reproduce suite like any other.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "core/error.h"
#include "experiments/reproduce.h"
#include "report/report.h"
#include "runtime/experiment.h"
#include "runtime/regression_experiment.h"
#include "tasks/family.h"
#include "tests/test_util.h"
#include "train/config.h"
#include "train/milestones.h"
#include "train/presets.h"
#include "train/run_experiment.h"
#include "train/train.h"

namespace maskprior {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(TaskFamilies, EveryBuiltInTaskHasOneFamilyWithAHeadline) {
  std::set<std::string> seen;
  for (const std::string& task : tasks::task_names()) {
    EXPECT_TRUE(seen.insert(task).second) << task << " listed twice";
    const tasks::TaskFamily& family = tasks::family_of_task(task);
    EXPECT_FALSE(family.headline().key.empty()) << task;
    EXPECT_TRUE(family.presets.contains("quick") && family.presets.contains("paper")) << task;
  }
  EXPECT_EQ(tasks::family_of_task("parity2").headline().key, "accuracy");
  EXPECT_EQ(tasks::family_of_task("addition").headline().key, "sequence_accuracy");
  EXPECT_EQ(tasks::family_of_task("fashion-mnist").headline().key, "top1");
  const tasks::Metric& bpc = tasks::family_of_task("fortunes-char").headline();
  EXPECT_EQ(bpc.key, "test_bpc");
  EXPECT_EQ(bpc.better, tasks::Better::kLower);
  EXPECT_FALSE(bpc.is_share());
  EXPECT_THROW(tasks::family_of_task("parity9"), InputError);
}

TEST(TaskFamilies, ARunOnYourOwnDataBelongsToTheFamilyOfItsInput) {
  EXPECT_EQ(tasks::family_of_run({{"task", ""}, {"data", "train.txt"}}).name, "sequence-data");
  EXPECT_EQ(tasks::family_of_run({{"truth_table", "t.csv"}}).name, "truth-table");
  EXPECT_EQ(tasks::family_of_run({{"task", "maj3"}, {"data", ""}}).name, "boolean");
  EXPECT_EQ(tasks::family_of_run({{"task", "maj3"}}).headline().key, "accuracy");
  EXPECT_EQ(tasks::family_of_run({{"data", "d.txt"}}).headline().key, "sequence_accuracy");
}

// config.json carries a size or data setting only for the families that read it, and a run of
// another family must leave it at its default (the message names the families that read it).
TEST(TaskFamilies, ConfigJsonCarriesOnlyTheSettingsItsFamilyReads) {
  const std::vector<std::string> keys = {"n", "train_fraction", "test_size", "train_size",
                                         "data_dir"};
  auto written = [&](const std::string& input, const std::string& value) {
    training::TrainConfig config;
    config.task = input == "task" ? value : "";
    (input == "data" ? config.data : config.truth_table) = input == "task" ? "" : value;
    if (input == "data") config.predict = "c";
    const json j = training::run_config_json(config, json::object());
    std::set<std::string> present;
    for (const std::string& key : keys) {
      if (j.contains(key)) present.insert(key);
    }
    return present;
  };
  using Keys = std::set<std::string>;
  EXPECT_EQ(written("task", "parity2"), Keys({"n"}));
  EXPECT_EQ(written("task", "addition"), Keys({"train_fraction", "test_size", "train_size"}));
  EXPECT_EQ(written("task", "fashion-mnist"), Keys({"test_size", "train_size", "data_dir"}));
  EXPECT_EQ(written("task", "fortunes-char"), Keys({"n", "test_size", "train_size", "data_dir"}));
  EXPECT_EQ(written("data", "train.txt"), Keys());
  EXPECT_EQ(written("truth_table", "t.csv"), Keys());

  training::TrainConfig addition;
  addition.task = "addition";
  addition.n = 6;
  std::string message;
  try {
    training::check_config(addition);
  } catch (const InputError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("n (--n) is 6 but applies only to the boolean, language families; this "
                         "run (task addition) is of the arithmetic family: leave it at 15"),
            std::string::npos)
      << message;
}

TEST(TaskFamilies, SuitesAreDataWhoseSpecsShip) {
  const std::vector<tasks::Suite> suites = tasks::suites();
  ASSERT_FALSE(suites.empty());
  EXPECT_EQ(suites.front().name, "demo");
  EXPECT_EQ(suites.front().default_seeds, 1);
  std::vector<std::string> demo;
  for (const tasks::SuiteRun& run : suites.front().runs) demo.push_back(run.label);
  EXPECT_EQ(demo, (std::vector<std::string>{"parity2-vanilla", "parity2-mask", "addition-vanilla",
                                            "addition-mask"}));
  for (const tasks::Suite& suite : suites) {
    EXPECT_FALSE(suite.runs.empty()) << suite.name;
    for (const tasks::SuiteRun& run : suite.runs) {
      EXPECT_NO_THROW(tasks::family_of_task(run.task)) << suite.name << " " << run.label;
      if (!run.spec.empty()) {
        EXPECT_TRUE(fs::is_regular_file(fs::path(MASKPRIOR_SOURCE_DIR) / run.spec)) << run.spec;
      }
    }
  }
  EXPECT_EQ(tasks::suite("arith-sweep").runs.size(), 16U);
  EXPECT_THROW(tasks::suite("everything"), InputError);
}

// The distill suite: each distilled row reads an earlier row of the same suite that is trained,
// not distilled, and is compared with a hand-written spec of its own task.
TEST(TaskFamilies, DistillSuiteRowsReadEarlierTrainedRows) {
  const tasks::Suite suite = tasks::suite("distill");
  EXPECT_EQ(suite.default_seeds, 3);
  std::map<std::string, const tasks::SuiteRun*> earlier;
  int distilled = 0;
  for (const tasks::SuiteRun& run : suite.runs) {
    if (run.distilled) {
      ++distilled;
      ASSERT_TRUE(earlier.contains(run.distilled->row)) << run.label;
      EXPECT_FALSE(earlier.at(run.distilled->row)->distilled) << run.label;
      EXPECT_EQ(run.init, "mask") << run.label;
      EXPECT_EQ(run.spec, "specs/" + std::string(run.task == "parity2" ? "gotu" : "arith") + "/" +
                              run.task + ".mask")
          << run.label;
    }
    earlier[run.label] = &run;
  }
  EXPECT_EQ(distilled, 9);  // parity2: 2 and the transfer; addition: 2 at each of 3 fractions
  EXPECT_EQ(earlier.at("parity2-all-vanilla")->overrides.value("train_domain", ""), "all");
}

TEST(TaskFamilies, PaperNumbersApplyOnlyAtThePapersSetting) {
  const tasks::TaskFamily& arithmetic = tasks::family_of_task("addition");
  EXPECT_EQ(arithmetic.paper_number("addition", "mask", {{"train_fraction", 0.004}}), "77.49");
  EXPECT_EQ(arithmetic.paper_number("addition", "mask", {{"train_fraction", 0.01}}), std::nullopt);
  EXPECT_EQ(arithmetic.paper_number("addition", "mimetic", {{"train_fraction", 0.004}}),
            std::nullopt);
  EXPECT_EQ(tasks::family_of_task("maj3").paper_number("maj3", "vanilla", json::object()), "≈ 87");
}

TEST(TaskFamilies, PresetsComeFromTheFamilyAndTheTask) {
  const json addition = training::task_preset("addition", training::kPresetQuick);
  EXPECT_EQ(addition.at("epochs"), 25);
  EXPECT_DOUBLE_EQ(addition.at("train_fraction").get<double>(), 0.004);
  EXPECT_EQ(training::task_preset("parity2", training::kPresetPaper).at("lr"), 1e-5);
  EXPECT_EQ(training::task_preset("sequence-data", training::kPresetQuick).at("steps"), 1500);
}

TEST(TaskFamilies, MilestonesFollowTheHeadline) {
  const std::vector<json> records = {{{"step", 0}, {"accuracy", 0.2}, {"top1", 0.9}},
                                     {{"step", 10}, {"accuracy", 0.6}, {"top1", 0.9}},
                                     {{"step", 20}, {"accuracy", 0.97}, {"top1", 0.9}}};
  const json boolean = training::milestones(records, tasks::family_of_task("parity2").headline());
  EXPECT_EQ(boolean["headline_metric"], "accuracy");
  EXPECT_EQ(boolean["steps_to_50"], 10);
  EXPECT_EQ(boolean["steps_to_95"], 20);
  // Language's headline is bits per character (lower is better): no accuracy milestones.
  EXPECT_TRUE(
      training::milestones(records, tasks::family_of_task("fortunes-char").headline()).empty());
}

TEST(TaskFamilies, RegisteringATakenNameOrTaskIsRefused) {
  tasks::TaskFamily clash;
  clash.name = "boolean";
  clash.metrics = {{"accuracy", "accuracy", "accuracy", "%"}};
  EXPECT_THROW(tasks::register_family(clash), InputError);
  clash.name = "boolean-again";
  clash.tasks = {"parity2"};
  EXPECT_THROW(tasks::register_family(clash), InputError);
  clash.tasks = {};
  clash.metrics = {};
  EXPECT_THROW(tasks::register_family(clash), InputError);
  EXPECT_THROW(training::register_experiment("no-such-family", nullptr), InputError);
}

// A registered family's distilled rows must read a row listed before them that trains a model
// of its own; one that does not is refused when registered, naming the suite and the row.
TEST(TaskFamilies, RegisteringADistilledRowWithoutAnEarlierSourceIsRefused) {
  tasks::TaskFamily family;
  family.name = "distill-order-check";
  family.metrics = {{"accuracy", "accuracy", "accuracy", "%"}};
  const tasks::SuiteRun source{"src", "parity2", "", "vanilla"};
  const tasks::SuiteRun reader{"reader", "parity2",      "specs/gotu/parity2.mask",
                               "mask",   json::object(), tasks::DistilledFrom{"src"}};
  const tasks::SuiteRun chained{"chained", "parity2",      "specs/gotu/parity2.mask",
                                "mask",    json::object(), tasks::DistilledFrom{"reader"}};
  const auto refusal = [&](std::vector<tasks::SuiteRun> runs) {
    tasks::TaskFamily f = family;
    f.suites = {{"toy-suite", "", 1, std::move(runs)}};
    return testing::input_error([&] { tasks::register_family(f); });
  };
  EXPECT_NE(refusal({reader, source}).find("suite toy-suite: row reader is distilled from no"),
            std::string::npos);
  EXPECT_NE(refusal({source, reader, chained}).find("row chained is distilled from no"),
            std::string::npos);
  family.distill = {reader};
  EXPECT_NE(testing::input_error([&] {
              tasks::register_family(family);
            }).find("suite distill (family distill-order-check): row reader"),
            std::string::npos);
  for (const tasks::TaskFamily& f : tasks::families()) EXPECT_NE(f.name, family.name);
}

// ---------------------------------------------------------------------------------------------
// A toy family: copy the first of three bits, read out at a CLS token. Every point is seen.

constexpr int kToyBits = 3;

class ToyExperiment : public runtime::RegressionExperiment {
 public:
  ToyExperiment() {
    std::vector<int64_t> ids;
    std::vector<float> y;
    for (int p = 0; p < (1 << kToyBits); ++p) {
      ids.push_back(2);  // CLS
      for (int i = 0; i < kToyBits; ++i) ids.push_back(p >> i & 1);
      y.push_back((p & 1) != 0 ? 1.0F : -1.0F);
    }
    const auto rows = static_cast<int64_t>(y.size());
    rows_ids_ = torch::tensor(ids, torch::kLong).view({rows, 1 + kToyBits});
    rows_y_ = torch::tensor(y, torch::kFloat);
    rows_seen_ = torch::ones({rows}, torch::kBool);
    train_ids_ = rows_ids_.clone();
    train_y_ = rows_y_.clone();
    values_ = torch::tensor({-1.0F, 1.0F});
  }
  Layout layout() const override { return make_layout({{"cls", 1}, {"x", kToyBits}}); }
  runtime::ModelConfig model_config(const runtime::ExperimentConfig& config) const override {
    return runtime::sized_model_config(config, /*vocab=*/3, /*seq_len=*/1 + kToyBits,
                                       runtime::Readout::kClsRegression);
  }
};

/// Registers the toy family once: its descriptor (tasks layer), then its experiment (train).
void register_toy_family() {
  static const bool registered = [] {
    tasks::TaskFamily toy;
    toy.name = "toy";
    toy.title = "toy";
    toy.tasks = {"toy-copy"};
    toy.presets = {{"quick",
                    {{"dim", 16},
                     {"depth", 1},
                     {"heads", 1},
                     {"head_dim", 8},
                     {"mlp", 16},
                     {"lr", 1e-2},
                     {"steps", 120},
                     {"eval_every", 40},
                     {"batch_size", 8},
                     {"optimizer", "adam"},
                     {"weight_decay", 0.0}}},
                   {"paper", json::object()}};
    toy.metrics = {{"accuracy", "accuracy", "accuracy", "%"},
                   {"unseen_mse", "unseen MSE", "unseen mse", "", tasks::Better::kLower}};
    toy.suites = {
        {"toy-suite", "the toy family", 1, {{"toy-copy-vanilla", "toy-copy", "", "vanilla"}}}};
    tasks::register_family(toy);
    training::register_experiment(
        "toy", [](const training::TrainConfig&, const std::optional<CompiledMask>&) {
          return std::make_unique<ToyExperiment>();
        });
    return true;
  }();
  ASSERT_TRUE(registered);
}

class ToyFamilyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_toy_family();
    dir_ = maskprior::testing::unique_temp_dir("maskprior_family");
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ToyFamilyTest, TrainsAndReportsThroughItsDescriptor) {
  const json overrides = {{"threads", 1},
                          {"device", "cpu"},
                          {"progress", false},
                          {"out", (dir_ / "runs" / "toy-copy-vanilla" / "seed0").string()}};
  const training::TrainConfig config =
      training::resolve_config("toy-copy", training::kPresetQuick, overrides);
  EXPECT_EQ(config.steps, 120);  // the toy family's preset
  const json summary = training::train(config);
  EXPECT_EQ(summary["family"], "toy");
  EXPECT_EQ(summary["headline_metric"], "accuracy");
  EXPECT_DOUBLE_EQ(summary["accuracy"].get<double>(), 1.0) << summary.dump();
  EXPECT_TRUE(summary["steps_to_95"].is_number());

  const std::string report =
      report::write_report({(dir_ / "runs").string(), MASKPRIOR_SOURCE_DIR, ""});
  std::ifstream in(report);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_NE(text.str().find("## toy-copy"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("`accuracy` of the last evaluation"), std::string::npos);
  EXPECT_NE(text.str().find("| toy-copy-vanilla | 1 | 100.00 |"), std::string::npos) << text.str();
}

TEST_F(ToyFamilyTest, RunsAsAReproduceSuite) {
  training::SuiteOptions options;
  options.suite = "toy-suite";
  options.out = (dir_ / "suite").string();
  options.share_dir = MASKPRIOR_SOURCE_DIR;
  options.overrides = {{"threads", 1}, {"device", "cpu"}, {"progress", false}};
  std::ostringstream out;
  const json results = training::run_suite(options, out);
  ASSERT_EQ(results["rows"].size(), 1U) << out.str();
  EXPECT_DOUBLE_EQ(results["rows"][0]["metrics"]["accuracy"]["mean"].get<double>(), 1.0);
  const std::string table = out.str();
  // The family's metrics make the columns; every toy row is seen, so its unseen MSE is null (no
  // rows to measure) and has no column.
  EXPECT_NE(table.find("| seeds | accuracy % | steps to 95% |"), std::string::npos) << table;
  EXPECT_EQ(table.find("unseen MSE"), std::string::npos) << table;
  EXPECT_NE(table.find("| toy-copy-vanilla | 1     | 100.00     |"), std::string::npos) << table;
}

}  // namespace
}  // namespace maskprior
