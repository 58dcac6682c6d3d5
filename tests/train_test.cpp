// Tests of training (train/): the config table and presets, runs, resume, signals, the data order
// and where each initialisation puts the attention mass at step 0.
// Tiny models on parity2 with n = 6 bits (64 cube points, 48 seen) keep every test fast.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>
#include <type_traits>
#include <variant>

#include "core/error.h"
#include "io/mask_file.h"
#include "io/safetensors.h"
#include "runfolder/run_files.h"
#include "runtime/experiment.h"
#include "runtime/host.h"
#include "runtime/init.h"
#include "runtime/model.h"
#include "runtime/regression_experiment.h"
#include "tasks/family.h"
#include "tests/parity2_spec.h"
#include "tests/test_util.h"
#include "tests/train_fixture.h"
#include "train/config.h"
#include "train/data_order.h"
#include "train/interrupt.h"
#include "train/presets.h"
#include "train/run_folder.h"
#include "train/train.h"

namespace maskprior::runtime {
namespace {

using training::config_field;
using training::config_fields;
using training::config_from_json;
using training::ConfigField;
using training::FieldRule;
using training::kPresetPaper;
using training::kPresetQuick;
using training::resolve_config;
using training::resume;
using training::to_json;
using training::train;
using training::TrainConfig;

using maskprior::testing::parity2_spec;
namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

inline constexpr int kBits = 6;

class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = maskprior::testing::unique_temp_dir(fmt::format("maskprior_runtime_{}", info->name()));
    spec_path_ = (dir_ / "parity2.safetensors").string();
    write_mask_file(parity2_spec(kBits), spec_path_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A tiny model on parity2 with n = 6; `epochs` = 0 only measures step 0.
  TrainConfig tiny(const std::string& init, int64_t epochs) const {
    TrainConfig c = maskprior::testing::tiny_train_config(/*mlp=*/32);
    c.task = "parity2";
    c.n = kBits;
    c.spec = init == "vanilla" || init == "mimetic" ? "" : spec_path_;
    c.init = init;
    c.lr = 3e-3;
    c.weight_decay = 0;
    c.epochs = epochs;
    c.batch_size = 16;
    c.qk_opt_steps = 400;
    return c;
  }

  static json without_wall(json summary) {
    summary.erase("wall_seconds");
    return summary;
  }

  static std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  struct Result {
    int code = -1;
    std::string out, err;
  };

  /// Runs `maskc ARGS` (shell text) in the test's folder.
  Result maskc(const std::string& args) const {
    const auto out = dir_ / ".stdout", err = dir_ / ".stderr";
    const std::string command = fmt::format("cd '{}' && '{}' {} >'{}' 2>'{}'", dir_.string(),
                                            MASKC_PATH, args, out.string(), err.string());
    const int status = std::system(command.c_str());
    Result r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_text(out);
    r.err = read_text(err);
    return r;
  }

  static std::vector<json> read_lines(const fs::path& path) {
    std::vector<json> records;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) records.push_back(json::parse(line));
    return records;
  }

  fs::path dir_;
  std::string spec_path_;
};

using maskprior::testing::input_error;

double mean(const json& list) {
  double sum = 0;
  for (const auto& v : list) sum += v.get<double>();
  return sum / static_cast<double>(list.size());
}

// ---------------------------------------------------------------------------------------------
// Initialisations at step 0: where the attention mass goes.

class InitPatternTest : public RuntimeTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(InitPatternTest, PriorMassAtStepZero) {
  auto config = tiny(GetParam(), /*epochs=*/0);
  config.spec = spec_path_;  // measure every method against the same pattern
  const auto summary = train(config);
  const auto& mass = summary.at("prior_mass_init");
  ASSERT_EQ(mass.size(), 2u);
  const std::string init = GetParam();
  if (init == "mask" || init == "mask-fixed") {
    for (const auto& m : mass) EXPECT_GT(m.get<double>(), 0.99) << init;
  } else if (init == "qk-svd" || init == "qk-opt") {
    EXPECT_GT(mass[0].get<double>(), 0.8) << init << " layer 0";
  } else if (init == "mimetic") {  // Wq Wkᵀ ≈ 0.7 Z + 0.7 I: attends to itself, part of the pattern
    EXPECT_GT(mass[0].get<double>(), 0.5) << init;
  } else {  // vanilla, mask-zero: no pattern, roughly uniform attention
    EXPECT_LT(mean(mass), 0.45) << init;
  }
  std::cout << init << " prior mass at step 0: " << mass.dump() << "\n";
}

INSTANTIATE_TEST_SUITE_P(Methods, InitPatternTest,
                         ::testing::Values("vanilla", "mask", "mask-fixed", "mask-zero", "qk-svd",
                                           "qk-opt", "mimetic"));

// ---------------------------------------------------------------------------------------------
// Training

TEST_F(RuntimeTest, FitsTheSeenDomain) {
  for (const char* init : {"vanilla", "mask"}) {
    auto config = tiny(init, /*epochs=*/60);
    const auto summary = train(config);
    EXPECT_LT(summary.at("seen_mse").get<double>(), 0.05) << init << summary.dump();
    EXPECT_LT(summary.at("train_loss").get<double>(), 0.05) << init;
    EXPECT_EQ(summary.at("steps").get<int64_t>(), 60 * 3);
  }
}

TEST_F(RuntimeTest, MaskFixedLeavesMUnchangedAndMaskMoves) {
  auto fixed = train(tiny("mask-fixed", /*epochs=*/3));
  for (const auto& d : fixed.at("mask_drift")) EXPECT_EQ(d.get<double>(), 0.0);
  auto learnable = train(tiny("mask", /*epochs=*/3));
  EXPECT_GT(mean(learnable.at("mask_drift")), 0.0);
  EXPECT_FALSE(train(tiny("vanilla", 1)).contains("mask_drift"));
}

TEST_F(RuntimeTest, SameSeedSameMetrics) {
  auto a = tiny("mask", /*epochs=*/4);
  auto b = a;
  a.out = (dir_ / "a").string();
  b.out = (dir_ / "b").string();
  EXPECT_EQ(without_wall(train(a)), without_wall(train(b)));
  EXPECT_EQ(read_text(dir_ / "a" / "metrics.jsonl"), read_text(dir_ / "b" / "metrics.jsonl"));
  auto other_seed = tiny("mask", /*epochs=*/4);
  other_seed.seed = 1;
  EXPECT_NE(train(other_seed).at("seen_mse"),
            json::parse(read_text(dir_ / "a" / "summary.json")).at("seen_mse"));
}

// The same for a causal decoder with a learnable prior (addition, greedy decoding in the metrics):
// the same config, seed, build and thread count give byte-identical metrics.jsonl.
TEST_F(RuntimeTest, SameSeedSameMetricsForADecoder) {
  TrainConfig a = maskprior::testing::tiny_train_config();
  a.task = "addition";
  a.init = "mask";
  a.spec = std::string(MASKPRIOR_SOURCE_DIR) + "/specs/arith/addition.mask";
  a.train_fraction = 0.0005;  // 500 problems: 4 steps an epoch
  a.test_size = 200;
  a.optimizer = "adamw";
  a.lr = 1e-3;
  a.epochs = 3;
  a.batch_size = 128;
  a.eval_every = 2;
  auto b = a;
  a.out = (dir_ / "a").string();
  b.out = (dir_ / "b").string();
  EXPECT_EQ(without_wall(train(a)), without_wall(train(b)));
  const auto metrics = read_text(dir_ / "a" / "metrics.jsonl");
  EXPECT_EQ(metrics, read_text(dir_ / "b" / "metrics.jsonl"));
  EXPECT_GE(read_lines(dir_ / "a" / "metrics.jsonl").size(), 4u);  // step 0, 2, ..., 12
}

// How often a run evaluates changes only its curves, not its training: with dropout drawing
// random numbers at every step, evaluating after every step and only at the end give the same
// losses step by step and the same final evaluation, but for its mean training loss since the
// evaluation before (scripts/boolean_headline_study.sh relies on it to evaluate less often).
TEST_F(RuntimeTest, EvaluationScheduleLeavesTrainingUnchanged) {
  auto often = tiny("mask", /*epochs=*/4);
  often.attn_dropout = 0.1;
  often.resid_dropout = 0.1;
  often.log_every = 1;
  auto rarely = often;
  often.eval_every = 1;
  rarely.eval_every = 1000;  // only at step 0 and the last step
  often.out = (dir_ / "often").string();
  rarely.out = (dir_ / "rarely").string();
  train(often);
  train(rarely);
  const auto often_steps = read_lines(dir_ / "often" / "steps.jsonl");
  const auto rarely_steps = read_lines(dir_ / "rarely" / "steps.jsonl");
  ASSERT_EQ(often_steps.size(), 12u);  // 4 epochs of 3 steps, one line a step
  ASSERT_EQ(rarely_steps.size(), often_steps.size());
  for (size_t i = 0; i < often_steps.size(); ++i) {
    EXPECT_EQ(often_steps[i].at("loss"), rarely_steps[i].at("loss")) << "step " << i + 1;
    EXPECT_EQ(often_steps[i].at("grad_norm"), rarely_steps[i].at("grad_norm")) << "step " << i + 1;
  }
  const auto often_evals = read_lines(dir_ / "often" / "metrics.jsonl");
  const auto rarely_evals = read_lines(dir_ / "rarely" / "metrics.jsonl");
  EXPECT_EQ(often_evals.size(), 13u);  // step 0 and after each step
  ASSERT_EQ(rarely_evals.size(), 2u);
  // train_loss is the mean over the steps since the evaluation before: the last step's in one run,
  // all twelve steps' in the other. Everything else of the final evaluation is the same.
  double sum = 0;
  for (const auto& step : often_steps) sum += step.at("loss").get<double>();
  EXPECT_NEAR(rarely_evals.back().at("train_loss").get<double>(), sum / 12, 1e-6);
  EXPECT_NEAR(often_evals.back().at("train_loss").get<double>(),
              often_steps.back().at("loss").get<double>(), 1e-6);
  json often_last = often_evals.back(), rarely_last = rarely_evals.back();
  often_last.erase("train_loss");
  rarely_last.erase("train_loss");
  EXPECT_EQ(often_last, rarely_last);
}

// summary.json names what computed it: the commit (a 40-digit hash, or "unknown" outside a git
// checkout), the build type, LibTorch's version and the machine.
TEST_F(RuntimeTest, SummaryNamesTheCommitBuildAndMachine) {
  const auto summary = train(tiny("vanilla", /*epochs=*/0));
  const auto& p = summary.at("provenance");
  const std::string commit = p.at("commit");
  EXPECT_TRUE(commit == "unknown" || std::regex_match(commit, std::regex("[0-9a-f]{40}")))
      << commit;
  EXPECT_TRUE(p.at("dirty").is_boolean());
  EXPECT_FALSE(p.at("build_type").get<std::string>().empty());
  EXPECT_EQ(p.at("torch").get<std::string>().substr(0, 2),
            std::to_string(TORCH_VERSION_MAJOR) + ".");
  EXPECT_GT(p.at("cores").get<int>(), 0);
  EXPECT_TRUE(p.at("host").is_string());
  EXPECT_TRUE(p.at("cpu").is_string());
}

TEST_F(RuntimeTest, ResumeEqualsUninterrupted) {
  auto whole = tiny("mask", /*epochs=*/4);
  whole.eval_every = 2;
  whole.checkpoint_every = 2;
  whole.schedule = "cosine";
  whole.warmup = 3;
  auto broken = whole;
  whole.out = (dir_ / "whole").string();
  broken.out = (dir_ / "broken").string();
  broken.stop_after = 7;  // mid-epoch, between two checkpoints: steps 7.. are redone
  const auto reference = train(whole);
  const auto stopped = train(broken);
  EXPECT_TRUE(stopped.at("interrupted").get<bool>());
  EXPECT_FALSE(fs::exists(dir_ / "broken" / "summary.json"));
  const auto resumed = resume(broken.out);
  EXPECT_EQ(without_wall(resumed).dump(), without_wall(reference).dump());
  EXPECT_EQ(read_text(dir_ / "whole" / "metrics.jsonl"),
            read_text(dir_ / "broken" / "metrics.jsonl"));
  // A finished run resumes to its summary; a fresh train into the same folder is refused.
  EXPECT_EQ(without_wall(resume(broken.out)), without_wall(resumed));
  EXPECT_THROW(train(broken), InputError);
}

// A run killed before its first checkpoint leaves config.json, init.json and metrics.jsonl only:
// --resume says what to do, and a new run takes the folder over instead of refusing it.
TEST_F(RuntimeTest, RunKilledBeforeItsFirstCheckpointIsStartedAgain) {
  auto config = tiny("mask", /*epochs=*/2);
  config.out = (dir_ / "run").string();
  const auto reference = train(config);
  const std::string metrics = read_text(dir_ / "run" / "metrics.jsonl");
  for (const char* name :
       {"checkpoint.pt", "summary.json", "weights.safetensors", "mask.safetensors"}) {
    ASSERT_TRUE(fs::remove(dir_ / "run" / name)) << name;
  }
  const auto message = input_error([&] { resume(config.out); });
  EXPECT_NE(message.find("never reached a checkpoint"), std::string::npos) << message;
  EXPECT_NE(message.find("start it again"), std::string::npos) << message;
  ::testing::internal::CaptureStderr();
  const auto again = train(config);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(
      err.find(config.out + " holds a run that never reached a checkpoint; starting it again"),
      std::string::npos)
      << err;
  EXPECT_EQ(without_wall(again).dump(), without_wall(reference).dump());
  EXPECT_EQ(read_text(dir_ / "run" / "metrics.jsonl"), metrics);  // not appended to the old ones
  EXPECT_TRUE(fs::exists(dir_ / "run" / "summary.json"));
  // A run with a checkpoint is still refused: it can be resumed.
  config.stop_after = 1;
  config.out = (dir_ / "stopped").string();
  EXPECT_TRUE(train(config).at("interrupted").get<bool>());
  EXPECT_NE(input_error([&] { train(config); }).find("already holds a run"), std::string::npos);
}

TEST_F(RuntimeTest, RunFolderHoldsConfigWeightsAndLearnedMask) {
  auto config = tiny("mask", /*epochs=*/2);
  config.seed = 3;
  config.eval_every = 2;
  config.out = (dir_ / "run").string();
  const auto summary = train(config);
  const fs::path run = config.out;
  // config.json reads back as the whole config; it leaves out what parity2 does not read (the
  // arithmetic orders and sizes, vision's and language's sizes and data folder, the inputs of runs
  // on your own data) and says what the run made of its settings. summary.json is what train
  // returned.
  const json written = json::parse(read_text(run / "config.json"));
  EXPECT_EQ(to_json(config_from_json(written)), to_json(config));
  for (const char* key : {"operand_order", "answer_order", "loss_rows", "data", "predict",
                          "truth_table", "train_fraction", "test_size", "train_size", "data_dir"}) {
    EXPECT_FALSE(written.contains(key)) << key;
  }
  EXPECT_EQ(written.at("n"), config.n);
  EXPECT_EQ(written.at("mask_open"), nullptr);  // the setting: not given
  EXPECT_EQ(written.at("resolved"), json({{"device", "cpu"},
                                          {"threads", 1},
                                          {"steps", 6},
                                          {"steps_per_epoch", 3},
                                          {"eval_every", 2},
                                          {"checkpoint_every", 3},
                                          {"mask_open", 10.0},
                                          {"mask_close", -10.0}}));
  EXPECT_EQ(without_wall(json::parse(read_text(run / "summary.json"))), without_wall(summary));
  for (const char* key :
       {"accuracy", "unseen_accuracy", "seen_mse", "unseen_mse", "train_loss", "steps",
        "wall_seconds", "prior_mass_init", "prior_mass", "mask_drift", "fourier"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  // metrics.jsonl: step 0 (= init.json), then every 2 steps of the 6; the last is the summary's.
  const auto records = read_lines(run / "metrics.jsonl");
  std::vector<int64_t> steps;
  for (const auto& r : records) steps.push_back(r.at("step").get<int64_t>());
  EXPECT_EQ(steps, (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(records.front(), json::parse(read_text(run / "init.json")));
  for (const auto& [key, value] : records.back().items()) EXPECT_EQ(summary.at(key), value) << key;
  // The learned M moved away from the spec's, and weights.safetensors holds the same M.
  const auto learned = read_mask_file((run / "mask.safetensors").string());
  EXPECT_EQ(learned.n, 1 + kBits);
  EXPECT_EQ(learned.layout.spans.size(), 2u);
  EXPECT_NE(learned.mask, parity2_spec(kBits).mask);
  const auto weights = read_safetensors((run / "weights.safetensors").string());
  EXPECT_TRUE(weights.tensors.contains("block0.wq.weight"));
  ASSERT_TRUE(weights.tensors.contains("mask"));
  const auto& m = weights.tensors.at("mask").bytes;
  ASSERT_EQ(m.size(), learned.mask.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(m.data(), learned.mask.data(), m.size()), 0);
  EXPECT_EQ(weights.metadata.at("config"), to_json(config).dump());
}

TEST_F(RuntimeTest, LossFallsWellBelowItsStart) {
  auto config = tiny("mask", /*epochs=*/30);
  config.out = (dir_ / "run").string();
  const auto summary = train(config);
  const auto records = read_lines(dir_ / "run" / "metrics.jsonl");
  ASSERT_EQ(records.size(), 31u);
  const double start = records.front().at("seen_mse").get<double>();
  const double first_loss = records.at(1).at("train_loss").get<double>();
  EXPECT_LT(summary.at("seen_mse").get<double>(), 0.1 * start) << start;
  EXPECT_LT(summary.at("train_loss").get<double>(), 0.1 * first_loss) << first_loss;
}

TEST_F(RuntimeTest, LayoutMismatchIsRefused) {
  auto config = tiny("mask", /*epochs=*/1);
  config.n = kBits - 1;
  try {
    train(config);
    FAIL() << "a spec for 6 bits was accepted for a task on 5";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("`cls, x[6]` (N = 7)"), std::string::npos) << message;
    EXPECT_NE(message.find("`cls, x[5]` (N = 6)"), std::string::npos) << message;
  }
  const auto three_layers = (dir_ / "three.safetensors").string();
  write_mask_file(parity2_spec(kBits, /*layers=*/3), three_layers);
  config = tiny("mask", 1);
  config.spec = three_layers;
  EXPECT_THROW(train(config), InputError);
}

TEST(ConfigTest, PresetsFlagsAndErrors) {
  const auto quick = resolve_config("parity2", kPresetQuick, {{"lr", 0.5}});
  EXPECT_EQ(quick.dim, 64);
  EXPECT_EQ(quick.lr, 0.5);  // a flag overrides the preset
  const auto paper = resolve_config("cyclic3", kPresetPaper, json::object());
  EXPECT_EQ(paper.depth, 12);
  EXPECT_EQ(paper.epochs, 80);
  EXPECT_EQ(paper.lr, 2e-5);
  EXPECT_EQ(config_from_json(to_json(paper)).epochs, 80);
  EXPECT_THROW(resolve_config("parity2", "fast", json::object()), InputError);
  EXPECT_THROW(resolve_config("parity9", kPresetQuick, json::object()), InputError);
  EXPECT_THROW(resolve_config("parity2", "", {{"init", "mask"}}), InputError);  // needs a spec
  EXPECT_THROW(resolve_config("parity2", "", {{"optimizer", "sgd"}}), InputError);
  EXPECT_THROW(resolve_config("parity2", "", {{"batch_size", 0}}), InputError);
  EXPECT_THROW(config_from_json({{"learning_rate", 1}}), InputError);
  EXPECT_THROW(config_from_json({{"lr", "fast"}}), InputError);
}

// ---------------------------------------------------------------------------------------------
// The config table: one row per field drives JSON, checks, flags and the resume whitelist.

/// A value of `field` other than its default that its row accepts.
json other_value(const ConfigField& field) {
  const json defaults = to_json(TrainConfig{});
  const json& d = defaults.at(field.key);
  for (const auto& a : field.allowed) {
    if (a != d) return a;
  }
  return std::visit(
      [&](auto member) -> json {
        using T = std::decay_t<decltype(TrainConfig{}.*member)>;
        if constexpr (std::is_same_v<T, bool>) {
          return !d.get<bool>();
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "other-" + field.key;
        } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
          return json{{"n", "7"}};
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          return d.is_null() ? 0.5 : d.get<double>() + 0.5;
        } else if constexpr (std::is_floating_point_v<T>) {
          return field.rule == FieldRule::kFraction ? d.get<double>() / 2 : d.get<double>() + 0.5;
        } else {
          return d.get<T>() + 3;
        }
      },
      field.member);
}

std::vector<std::string> flag_names(const ConfigField& field) {
  std::vector<std::string> names;
  std::istringstream in(field.flags);
  for (std::string name; std::getline(in, name, ',');) names.push_back(name);
  return names;
}

TEST(ConfigTableTest, EveryFieldRoundTripsThroughJson) {
  const json defaults = to_json(TrainConfig{});
  std::set<std::string> keys;
  for (const auto& field : config_fields()) {
    EXPECT_TRUE(keys.insert(field.key).second) << "key twice: " << field.key;
    json changed = defaults;
    changed[field.key] = other_value(field);
    ASSERT_NE(changed, defaults) << field.key;
    // The value comes back as written and no other field moves (each row has its own member).
    EXPECT_EQ(to_json(config_from_json(changed)), changed) << field.key;
    EXPECT_EQ(to_json(config_from_json(json::parse(changed.dump()))), changed) << field.key;
  }
  // to_json writes every row and the format of the file, nothing else.
  EXPECT_EQ(keys.size() + 1, defaults.size());
  EXPECT_EQ(defaults.at(training::kConfigFormatKey), training::kConfigFormat);
  EXPECT_THROW(config_from_json({{"learning_rate", 1}}), InputError);
  EXPECT_THROW(config_field("learning_rate"), InputError);
}

/// The experiment's settings of `s`, by name (a TrainConfig field that hid one of them would be
/// read here instead).
template <class Settings>
auto experiment_settings(const Settings& s) {
  return std::tie(s.task, s.seed, s.n, s.train_domain, s.train_fraction, s.loss_rows,
                  s.operand_order, s.answer_order, s.data, s.test_data, s.predict, s.test_size,
                  s.train_size, s.data_dir, s.dim, s.depth, s.heads, s.head_dim, s.mlp,
                  s.pos_embedding, s.pos_init_std, s.norm, s.attn_dropout, s.resid_dropout,
                  s.activation);
}

// The settings an experiment reads are TrainConfig's own (inherited, one default each), and
// experiment_config hands every one over, whatever its value.
TEST(ConfigTableTest, ExperimentSettingsAreTheTrainConfigs) {
  static_assert(std::is_base_of_v<ExperimentSettings, TrainConfig>);
  EXPECT_EQ(experiment_settings(TrainConfig{}), experiment_settings(ExperimentConfig{}));
  const json defaults = to_json(TrainConfig{});
  json changed = defaults;
  for (const char* key : {"task",          "seed",           "n",
                          "train_domain",  "train_fraction", "loss_rows",
                          "operand_order", "answer_order",   "data",
                          "test_data",     "predict",        "test_size",
                          "train_size",    "data_dir",       "dim",
                          "depth",         "heads",          "head_dim",
                          "mlp",           "pos_embedding",  "pos_init_std",
                          "norm",          "attn_dropout",   "resid_dropout",
                          "activation"}) {
    changed[key] = other_value(config_field(key));
  }
  const TrainConfig config = config_from_json(changed);
  const ExperimentConfig experiment = training::experiment_config(config);
  EXPECT_EQ(experiment_settings(experiment), experiment_settings(config));
  EXPECT_NE(experiment_settings(experiment), experiment_settings(ExperimentConfig{}));
  EXPECT_EQ(experiment.n, defaults["n"].get<int>() + 3);
  EXPECT_TRUE(experiment.layout.spans.empty());  // not a setting: a sequence-data run fills it
}

TEST(ConfigTableTest, RowsAreConsistent) {
  std::set<std::string> flags;
  for (const auto& field : config_fields()) {
    for (const auto& name : flag_names(field)) {
      EXPECT_TRUE(name.starts_with("-")) << field.key;
      EXPECT_TRUE(flags.insert(name).second) << "flag twice: " << name;
    }
    EXPECT_FALSE(field.help.empty()) << field.key;
    const bool choice = field.rule == FieldRule::kOneOf || field.rule == FieldRule::kOneOfOrEmpty;
    EXPECT_EQ(choice, !field.allowed.empty()) << field.key;
    std::visit(
        [&](auto member) {
          using T = std::decay_t<decltype(TrainConfig{}.*member)>;
          const bool text = std::is_same_v<T, std::string>;
          const bool number = (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) ||
                              std::is_same_v<T, std::optional<double>>;
          if (choice || field.rule == FieldRule::kNonEmpty) {
            EXPECT_TRUE(text) << field.key;
          }
          if (field.rule == FieldRule::kPositive || field.rule == FieldRule::kNonNegative ||
              field.rule == FieldRule::kFraction) {
            EXPECT_TRUE(number) << field.key;
          }
        },
        field.member);
  }
  // The lists come from where the names are defined.
  EXPECT_EQ(config_field("init").allowed, init_method_names());
  EXPECT_EQ(config_field("preset").allowed, training::preset_names());
}

TEST(ConfigTableTest, ChecksComeFromTheRows) {
  json valid = to_json(TrainConfig{});
  valid["task"] = "parity2";
  EXPECT_NO_THROW(training::check_config(config_from_json(valid)));
  int checked = 0;
  for (const auto& field : config_fields()) {
    std::vector<json> bad;
    switch (field.rule) {
      case FieldRule::kPositive:
        bad = {0, -1};
        break;
      case FieldRule::kNonNegative:
        bad = {-1};
        break;
      case FieldRule::kFraction:
        bad = {0, 1.5};
        break;
      case FieldRule::kProbability:
        bad = {-0.1, 1};
        break;
      case FieldRule::kThreadCount:
        bad = {-1, 1025, 1000000};
        break;
      case FieldRule::kOneOf:
      case FieldRule::kOneOfOrEmpty:
        bad = {"bogus"};
        break;
      case FieldRule::kNonEmpty:
        bad = {""};
        break;
      case FieldRule::kAny:
        break;
    }
    for (const json& value : bad) {
      json j = valid;
      j[field.key] = value;
      const auto message = input_error([&] { training::check_config(config_from_json(j)); });
      EXPECT_NE(message.find(field.key), std::string::npos) << field.key << " = " << value;
      for (const auto& a : field.allowed) EXPECT_NE(message.find(a), std::string::npos) << message;
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
  // Cross-field: an init that needs a spec.
  EXPECT_NE(input_error([] {
              resolve_config("parity2", "", {{"init", "mask"}});
            }).find("needs a spec"),
            std::string::npos);
}

// NaN passes every range comparison and inf poisons a run: every floating setting must be finite,
// in the library (InputError naming the field) and on the command line (usage error, exit 2).
TEST(ConfigTableTest, EveryFloatingFieldMustBeFinite) {
  TrainConfig valid;
  valid.task = "parity2";
  int checked = 0;
  for (const auto& field : config_fields()) {
    const auto* member = std::get_if<double TrainConfig::*>(&field.member);
    const auto* optional = std::get_if<std::optional<double> TrainConfig::*>(&field.member);
    if (member == nullptr && optional == nullptr) continue;
    for (const double value :
         {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
          -std::numeric_limits<double>::infinity()}) {
      TrainConfig config = valid;
      if (member != nullptr) config.*(*member) = value;
      if (optional != nullptr) config.*(*optional) = value;
      const auto message = input_error([&] { training::check_config(config); });
      EXPECT_NE(message.find(field.key + " must be a finite number"), std::string::npos)
          << field.key << " = " << value << ": " << message;
      ++checked;
    }
  }
  // train_fraction, pos_init_std, the dropouts (attention, residual, MLP), mask_open/close, lr,
  // the decays, qk_contrast/lr
  EXPECT_EQ(checked, 3 * 12);
}

TEST_F(RuntimeTest, NonFiniteTrainFlagsAreUsageErrors) {
  for (const auto& field : config_fields()) {
    if (!std::holds_alternative<double TrainConfig::*>(field.member) &&
        !std::holds_alternative<std::optional<double> TrainConfig::*>(field.member)) {
      continue;
    }
    const std::string flag = flag_names(field).back();
    std::vector<std::string> values = {"nan"};
    if (field.key == "lr") values = {"nan", "NaN", "inf", "-inf", "1e999"};
    for (const std::string& value : values) {
      const auto r = maskc(fmt::format("train --task parity2 {}={} -q --out run", flag, value));
      EXPECT_EQ(r.code, 2) << flag << " " << value << ": " << r.err;
      EXPECT_NE(r.err.find("must be a finite number"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(dir_ / "run")) << flag << " " << value;
    }
  }
}

// A model that cannot fit is refused before anything is allocated or written, in one line that
// names the size and the settings (before: a LibTorch allocation failure with a 26-frame backtrace
// and a run folder holding config.json).
TEST_F(RuntimeTest, AModelThatCannotFitIsRefusedBeforeTheRunFolder) {
  for (const std::string flags :
       {"--dim 1000000000000", "--mlp 10000000000", "--depth 100000 --dim 100000"}) {
    const auto r = maskc("train --task parity2 --preset quick " + flags + " -q --out run");
    EXPECT_EQ(r.code, 1) << flags << ": " << r.err;
    EXPECT_NE(r.err.find("training this model would take about"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(flags.substr(0, flags.find(' ', 2))), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("frame #"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "run")) << flags;
  }
  // The estimate grows with every size, and a quick parity2 model is far below any machine.
  runtime::ModelConfig model;
  const auto small = runtime::estimate_footprint(model, 256);
  EXPECT_LT(small.training_bytes, 1e9);
  for (int64_t runtime::ModelConfig::*size :
       {&runtime::ModelConfig::dim, &runtime::ModelConfig::mlp, &runtime::ModelConfig::depth,
        &runtime::ModelConfig::seq_len, &runtime::ModelConfig::vocab}) {
    runtime::ModelConfig bigger = model;
    bigger.*size *= 2;
    EXPECT_GT(runtime::estimate_footprint(bigger, 256).training_bytes, small.training_bytes);
  }
  EXPECT_GT(runtime::estimate_footprint(model, 512).training_bytes, small.training_bytes);
}

// mask_open, mask_close and mask_weight_decay are unset unless given: null in config.json, and an
// explicit value (0 included) is recorded as given.
TEST(ConfigTableTest, OptionalFieldsRoundTripThroughJson) {
  const json defaults = to_json(TrainConfig{});
  for (const char* key : {"mask_open", "mask_close", "mask_weight_decay"}) {
    EXPECT_TRUE(defaults.at(key).is_null()) << key;
  }
  const auto unset = config_from_json(json::parse(defaults.dump()));
  EXPECT_FALSE(unset.mask_open || unset.mask_close || unset.mask_weight_decay);
  json given = defaults;
  given["mask_open"] = 0.0;
  given["mask_close"] = -3.0;
  given["mask_weight_decay"] = 0.0;
  const auto config = config_from_json(json::parse(given.dump()));
  EXPECT_EQ(config.mask_open, std::optional<double>(0.0));
  EXPECT_EQ(config.mask_close, std::optional<double>(-3.0));
  EXPECT_EQ(config.mask_weight_decay, std::optional<double>(0.0));
  EXPECT_EQ(to_json(config), given);
  // Flags: given is recorded, 0 included; absent stays unset.
  const auto flags = resolve_config("parity2", "", {{"mask_open", 0}, {"mask_weight_decay", 0}});
  EXPECT_EQ(flags.mask_open, std::optional<double>(0.0));
  EXPECT_EQ(flags.mask_close, std::nullopt);
  EXPECT_EQ(flags.mask_weight_decay, std::optional<double>(0.0));
  EXPECT_NE(input_error([] {
              resolve_config("parity2", "", {{"mask_weight_decay", -1}});
            }).find("mask_weight_decay must not be negative"),
            std::string::npos);
  json wrong = defaults;
  wrong["mask_open"] = "wide";
  EXPECT_NE(input_error([&] { config_from_json(wrong); }).find("'mask_open' has the wrong type"),
            std::string::npos);
}

// A config.json written before the optional fields (no config_format) spelled "unset" as 0
// (mask_open, mask_close) and as a negative mask_weight_decay: it reads back as unset, and its
// other values as written.
TEST(ConfigTableTest, OldSentinelsReadAsUnset) {
  json old = to_json(TrainConfig{});
  old.erase(training::kConfigFormatKey);
  old["mask_open"] = 0.0;
  old["mask_close"] = 0.0;
  old["mask_weight_decay"] = -1.0;
  const auto unset = config_from_json(old);
  EXPECT_EQ(unset.mask_open, std::nullopt);
  EXPECT_EQ(unset.mask_close, std::nullopt);
  EXPECT_EQ(unset.mask_weight_decay, std::nullopt);
  json old_task = old;
  old_task["task"] = "parity2";
  EXPECT_NO_THROW(training::check_config(config_from_json(old_task)));
  old["mask_open"] = 3.0;
  old["mask_close"] = -3.0;
  old["mask_weight_decay"] = 0.0;
  const auto given = config_from_json(old);
  EXPECT_EQ(given.mask_open, std::optional<double>(3.0));
  EXPECT_EQ(given.mask_close, std::optional<double>(-3.0));
  EXPECT_EQ(given.mask_weight_decay, std::optional<double>(0.0));
  // The current format keeps a 0 as written; a format this maskc does not know is refused.
  json current = to_json(TrainConfig{});
  current["mask_open"] = 0.0;
  EXPECT_EQ(config_from_json(current).mask_open, std::optional<double>(0.0));
  current[training::kConfigFormatKey] = 3;
  EXPECT_NE(input_error([&] { config_from_json(current); }).find("config_format is 3"),
            std::string::npos);
}

TEST(ConfigTableTest, EveryPresetResolves) {
  for (const auto& task : tasks::task_names()) {
    for (const auto& preset : training::preset_names()) {
      EXPECT_EQ(resolve_config(task, preset, json::object()).preset, preset) << task;
    }
  }
}

TEST(ConfigTableTest, PriorKeysAreRowsOfTheTable) {
  const json defaults = training::to_json(training::TrainConfig{});
  for (const std::string_view key : runfolder::kPriorKeys) {
    if (key == "spec_sha256") continue;  // summary.json's, not a setting
    EXPECT_TRUE(defaults.contains(std::string(key))) << key;
  }
}

TEST(ConfigTableTest, ResumeMayChangeOnlyExecutionSettings) {
  EXPECT_EQ(training::resumable_keys(),
            (std::vector<std::string>{"threads", "device", "precision", "progress", "stop_after",
                                      "log_every"}));
  EXPECT_NO_THROW(training::check_resume_overrides({{"threads", 2},
                                                    {"device", "cpu"},
                                                    {"precision", "bf16"},
                                                    {"progress", false},
                                                    {"stop_after", 5}}));
  const auto message = input_error([] { training::check_resume_overrides({{"lr", 0.1}}); });
  EXPECT_NE(message.find("cannot change 'lr'"), std::string::npos) << message;
  EXPECT_NE(message.find("threads, device, precision, progress, stop_after"), std::string::npos)
      << message;
}

TEST_F(RuntimeTest, ResumeRefusesOtherSettingsInTheLibraryAndTheCli) {
  auto config = tiny("mask", /*epochs=*/4);  // 12 steps
  config.out = (dir_ / "run").string();
  config.stop_after = 2;
  ASSERT_TRUE(train(config).at("interrupted").get<bool>());
  const auto message = input_error([&] { resume(config.out, {{"lr", 0.1}}); });
  EXPECT_NE(message.find("cannot change 'lr'"), std::string::npos) << message;
  // The CLI refuses a flag of another setting as a usage error naming the flags that may change.
  for (const std::string flag : {"--lr 0.1", "--preset quick", "--epochs 9", "-D n=6"}) {
    const auto r = maskc("train --resume run " + flag);
    EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
    EXPECT_NE(r.err.find("cannot change a run being resumed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--threads, --device, --precision, -q/--quiet, --stop-after"),
              std::string::npos)
        << r.err;
  }
  EXPECT_EQ(to_json(config_from_json(json::parse(read_text(dir_ / "run" / "config.json")))),
            to_json(config));
  // Execution settings may change: stop again later, then finish.
  EXPECT_EQ(maskc("train --resume run --threads 1 -q --stop-after 6").code, 130);
  EXPECT_FALSE(fs::exists(dir_ / "run" / "summary.json"));
  const auto r = maskc("train --resume run --device cpu --quiet --json");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("steps").get<int64_t>(), 12);
  EXPECT_EQ(read_lines(dir_ / "run" / "metrics.jsonl").back().at("step").get<int64_t>(), 12);
}

// A run folder written before the optional fields (mask_open and mask_close 0, mask_weight_decay
// -1, no config_format) resumes with the meaning it started with: the spec's values, one decay.
TEST_F(RuntimeTest, RunFolderOfTheOldConfigFormatResumes) {
  auto config = tiny("mask", /*epochs=*/2);  // 6 steps
  config.out = (dir_ / "run").string();
  config.stop_after = 2;
  ASSERT_TRUE(train(config).at("interrupted").get<bool>());
  json old = json::parse(read_text(dir_ / "run" / "config.json"));
  old.erase(training::kConfigFormatKey);
  old["mask_open"] = 0.0;
  old["mask_close"] = 0.0;
  old["mask_weight_decay"] = -1.0;
  std::ofstream(dir_ / "run" / "config.json") << old.dump(2);
  // Nor did such a folder have the fingerprints and checkpoint sums that --resume checks.
  ASSERT_TRUE(fs::remove(dir_ / "run" / "fingerprints.json"));
  ASSERT_TRUE(fs::remove(dir_ / "run" / "checkpoint.json"));
  const auto summary = resume(config.out, json());
  EXPECT_FALSE(summary.at("interrupted").get<bool>());
  EXPECT_EQ(summary.at("steps").get<int64_t>(), 6);
}

TEST_F(RuntimeTest, ProgressSaysWhatEachEvaluationFoundAndTook) {
  // 48 seen rows in batches of 16: 3 steps an epoch, evaluations at steps 0, 3 and 6.
  const auto r = maskc(fmt::format(
      "train --task parity2 --spec {}/specs/gotu/parity2.mask --init mask --n {} --dim 16 "
      "--depth 1 --heads 1 --head-dim 16 --mlp 16 --epochs 2 --batch-size 16 --probe-size 16 "
      "--threads 1 --device cpu",
      MASKPRIOR_SOURCE_DIR, kBits));
  ASSERT_EQ(r.code, 0) << r.err;
  std::vector<std::string> evaluations;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("step ") && line.find("evaluat") != std::string::npos) {
      evaluations.push_back(line);
    }
  }
  // Step 0 is announced before it runs (at the paper's sizes it takes minutes), then reported;
  // the later ones add the mean train loss over the steps since the last. Each names the
  // family's metrics and says how long it took.
  const std::string number = "[0-9]+\\.[0-9]+";
  const std::string metrics = "accuracy " + number + ", unseen accuracy " + number +
                              ", seen accuracy " + number + ", seen mse " + number +
                              ", unseen mse " + number;
  const std::vector<std::string> expected = {
      "step 0: evaluating the initial model",
      "step 0: " + metrics + ", evaluated in " + number + " s",
      "step 3: mean train loss " + number + " over steps 1-3, " + metrics + ", evaluated in " +
          number + " s",
      "step 6: mean train loss " + number + " over steps 4-6, " + metrics + ", evaluated in " +
          number + " s"};
  ASSERT_EQ(evaluations.size(), expected.size()) << r.err;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_TRUE(std::regex_match(evaluations[i], std::regex(expected[i]))) << evaluations[i];
  }
  EXPECT_LT(r.err.find("parameters"), r.err.find(evaluations[0])) << r.err;  // after the header
}

// --print-config: every resolved setting (defaults, the preset, the flags given) as config.json
// holds them — without the settings the run's family does not read — and nothing trained or
// written.
TEST_F(RuntimeTest, PrintConfigShowsEveryResolvedSettingAndTrainsNothing) {
  const auto r = maskc(
      "train --task parity2 --preset quick --norm post --pos-init-std 0.02 --mask-sharing layer "
      "--out run --print-config");
  ASSERT_EQ(r.code, 0) << r.err;
  const json shown = json::parse(r.out);
  const json defaults = to_json(TrainConfig{});
  const auto foreign = tasks::foreign_settings(tasks::family_of_run(shown));
  for (const auto& [key, value] : defaults.items()) {
    const bool read = std::find(foreign.begin(), foreign.end(), key) == foreign.end();
    EXPECT_EQ(shown.contains(key), read) << key;
  }
  for (const char* key : {"operand_order", "train_fraction", "data", "predict"}) {  // not parity2's
    EXPECT_FALSE(shown.contains(key)) << key;
  }
  EXPECT_EQ(shown.at("norm"), "post");
  EXPECT_EQ(shown.at("pos_init_std"), 0.02);
  EXPECT_EQ(shown.at("mask_sharing"), "layer");
  const json preset = training::task_preset("parity2", "quick");
  for (const char* key : {"lr", "epochs", "dim", "depth"}) {
    EXPECT_EQ(shown.at(key), preset.at(key)) << key;
  }
  EXPECT_FALSE(fs::exists(dir_ / "run"));
  EXPECT_EQ(maskc("train --task parity2 --activation tanh --print-config").code, 2);
  EXPECT_EQ(maskc("train --resume run --print-config").code, 2);
}

// The architecture's settings reach the run: config.json records them, the learned M has one
// slice per layer and head, and a run at the defaults written before they existed resumes as one.
TEST_F(RuntimeTest, ArchitectureSettingsReachTheRun) {
  auto config = tiny("mask", /*epochs=*/1);
  config.out = (dir_ / "run").string();
  config.norm = "post";
  config.activation = "relu";
  config.pos_embedding = "sinusoidal";
  config.attn_dropout = 0.1;
  config.resid_dropout = 0.1;
  config.mask_sharing = "head";
  const auto summary = train(config);
  EXPECT_FALSE(summary.value("interrupted", false));
  const json written = json::parse(read_text(dir_ / "run" / "config.json"));
  EXPECT_EQ(written.at("norm"), "post");
  EXPECT_EQ(written.at("activation"), "relu");
  EXPECT_EQ(written.at("pos_embedding"), "sinusoidal");
  EXPECT_EQ(written.at("attn_dropout"), 0.1);
  EXPECT_EQ(written.at("mask_sharing"), "head");
  const auto learned = read_mask_file((dir_ / "run" / "mask.safetensors").string());
  EXPECT_EQ(learned.layers, config.depth);
  EXPECT_EQ(learned.heads, config.heads);

  auto old = tiny("mask", /*epochs=*/2);  // 6 steps
  old.out = (dir_ / "old").string();
  old.stop_after = 2;
  ASSERT_TRUE(train(old).at("interrupted").get<bool>());
  json j = json::parse(read_text(dir_ / "old" / "config.json"));
  for (const char* key : {"pos_embedding", "pos_init_std", "norm", "attn_dropout", "resid_dropout",
                          "activation", "mask_sharing"}) {
    ASSERT_TRUE(j.contains(key));
    j.erase(key);
  }
  std::ofstream(dir_ / "old" / "config.json") << j.dump(2);
  ASSERT_TRUE(fs::remove(dir_ / "old" / "fingerprints.json"));  // as in an old run folder
  ASSERT_TRUE(fs::remove(dir_ / "old" / "checkpoint.json"));
  old.stop_after = 0;
  old.out = (dir_ / "whole").string();
  const auto whole = train(old);
  const auto resumed = resume((dir_ / "old").string(), json());
  EXPECT_EQ(without_wall(resumed).at("accuracy"), without_wall(whole).at("accuracy"));
  EXPECT_EQ(read_text(dir_ / "old" / "metrics.jsonl"), read_text(dir_ / "whole" / "metrics.jsonl"));
}

TEST_F(RuntimeTest, TrainFlagsAreTheConfigTable) {
  const auto r = maskc("train --help");
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> shown;
  std::map<std::string, std::string> line_of;
  std::istringstream help(r.out);
  for (std::string line; std::getline(help, line);) {
    if (!line.starts_with("  -")) continue;
    std::istringstream words(line);
    std::string names;
    words >> names;
    std::istringstream parts(names);
    for (std::string name; std::getline(parts, name, ',');) {
      shown.insert(name);
      line_of[name] = line;
    }
  }
  std::set<std::string> expected = {"-h",      "--help",         "--resume",
                                    "--json",  "--print-config", "--save-test-rows",
                                    "--config"};  // the command's own (--config: a file
                                                  // of the table's keys)
  for (const char* name : {"--rank", "--world-size", "--local-rank", "--master-addr",
                           "--master-port", "--rendezvous-file", "--dist-timeout"}) {
    expected.insert(name);  // data-parallel: where this process stands, not the run's config
  }
  for (const auto& field : config_fields()) {
    for (const auto& name : flag_names(field)) expected.insert(name);
    EXPECT_NE(r.out.find(field.help), std::string::npos) << field.key;
    if (!field.allowed.empty()) {  // checked by CLI11 against the same list as check_config
      const auto list = fmt::format("{{{}}}", fmt::join(field.allowed, ","));
      EXPECT_NE(line_of[flag_names(field).front()].find(list), std::string::npos) << field.key;
    }
  }
  EXPECT_EQ(shown, expected);
  // The allowed values are enforced at parse time: a usage error.
  EXPECT_EQ(maskc("train --task parity2 --optimizer sgd").code, 2);
  EXPECT_EQ(maskc("train --task parity2 --schedule linear").code, 2);
  EXPECT_EQ(maskc("train --task parity2 --device tpu").code, 2);
}

TEST_F(RuntimeTest, CliTrainingLearnsAndFillsTheRunFolder) {
  const auto r = maskc(fmt::format(
      "train --task parity2 --spec {}/specs/gotu/parity2.mask --init mask --n {} --dim 32 "
      "--depth 2 --heads 2 --head-dim 16 --mlp 32 --lr 3e-3 --weight-decay 0 --epochs 30 "
      "--batch-size 16 --probe-size 64 --threads 1 --device cpu -q --json --out run",
      MASKPRIOR_SOURCE_DIR, kBits));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto summary = json::parse(r.out);
  const auto start = json::parse(read_text(dir_ / "run" / "init.json"));
  EXPECT_LT(summary.at("seen_mse").get<double>(), 0.1 * start.at("seen_mse").get<double>());
  EXPECT_EQ(without_wall(summary),
            without_wall(json::parse(read_text(dir_ / "run" / "summary.json"))));
  const auto config = config_from_json(json::parse(read_text(dir_ / "run" / "config.json")));
  EXPECT_EQ(config.defines, (std::map<std::string, std::string>{}));
  EXPECT_EQ(config.epochs, 30);
  EXPECT_FALSE(config.progress);
}

// ---------------------------------------------------------------------------------------------
// Data order, schedule, interruption

TEST(DataOrderTest, EpochOrderIsAPermutationFixedBySeedAndEpoch) {
  auto order = training::epoch_order(5, 2, 100);
  EXPECT_EQ(order, training::epoch_order(5, 2, 100));
  EXPECT_NE(order, training::epoch_order(5, 3, 100));
  EXPECT_NE(order, training::epoch_order(6, 2, 100));
  std::sort(order.begin(), order.end());
  for (int64_t i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
}

TEST(DataOrderTest, WarmupThenConstantOrCosine) {
  TrainConfig c;
  c.lr = 1.0;
  c.warmup = 4;
  EXPECT_DOUBLE_EQ(training::learning_rate(c, 0, 20), 0.25);
  EXPECT_DOUBLE_EQ(training::learning_rate(c, 3, 20), 1.0);
  EXPECT_DOUBLE_EQ(training::learning_rate(c, 19, 20), 1.0);
  c.schedule = "cosine";
  EXPECT_DOUBLE_EQ(training::learning_rate(c, 4, 20), 1.0);
  EXPECT_DOUBLE_EQ(training::learning_rate(c, 12, 20), 0.5);
  EXPECT_NEAR(training::learning_rate(c, 20, 20), 0.0, 1e-12);
}

TEST(InterruptTest, SigintAndSigtermAreCaughtInsideTheScopeOnly) {
  for (const int sig : {SIGINT, SIGTERM}) {
    auto* const before = std::signal(sig, SIG_IGN);
    {
      training::InterruptScope scope;
      EXPECT_EQ(training::InterruptScope::stop_signal(), 0);
      std::raise(sig);
      EXPECT_EQ(training::InterruptScope::stop_signal(), sig);
    }
    EXPECT_EQ(std::signal(sig, before), SIG_IGN) << "handler of " << sig << " not restored";
  }
}

// reproduce holds a scope around its runs: a signal that came between two runs (or after a run's
// last check) must still be there when the next run's scope opens, and stop the suite.
TEST(InterruptTest, AnInnerScopeKeepsAPendingSignal) {
  auto* const before = std::signal(SIGTERM, SIG_IGN);
  {
    training::InterruptScope suite;
    std::raise(SIGTERM);
    {
      training::InterruptScope run;
      EXPECT_EQ(training::InterruptScope::stop_signal(), SIGTERM);
    }
    EXPECT_EQ(training::InterruptScope::stop_signal(), SIGTERM);
  }
  {
    training::InterruptScope next;  // outermost again: starts clean
    EXPECT_EQ(training::InterruptScope::stop_signal(), 0);
  }
  std::signal(SIGTERM, before);
}

TEST_F(RuntimeTest, SigtermStopsWithACheckpointAndResumes) {
  auto config = tiny("mask", /*epochs=*/100000);
  config.out = (dir_ / "run").string();
  std::thread killer([&] {  // once the run has started (init.json written), as `kill` would
    while (!fs::exists(dir_ / "run" / "init.json")) std::this_thread::sleep_for(10ms);
    ::kill(::getpid(), SIGTERM);
  });
  const auto stopped = train(config);
  killer.join();
  EXPECT_TRUE(stopped.at("interrupted").get<bool>());
  EXPECT_EQ(stopped.at("signal").get<int>(), SIGTERM);
  EXPECT_TRUE(fs::exists(dir_ / "run" / "checkpoint.pt"));
  EXPECT_FALSE(fs::exists(dir_ / "run" / "summary.json"));
  const int64_t steps = stopped.at("steps").get<int64_t>();
  const auto resumed = resume(config.out, {{"stop_after", steps + 3}});
  EXPECT_FALSE(resumed.contains("signal"));
  EXPECT_EQ(resumed.at("steps").get<int64_t>(), steps + 3);
}

}  // namespace
}  // namespace maskprior::runtime
