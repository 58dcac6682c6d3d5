// Tests of the vision and language experiments (runtime/vision_experiment,
// runtime/language_experiment), the patch model and the impulse init. Data are toy files written
// under a temporary folder (tests/vision_language_fixture.h); models are tiny, so each test takes
// seconds.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "compiler/compile.h"
#include "core/error.h"
#include "runtime/experiment.h"
#include "runtime/init.h"
#include "runtime/language_experiment.h"
#include "runtime/model.h"
#include "runtime/vision_experiment.h"
#include "tasks/fashion_mnist.h"
#include "tests/test_util.h"
#include "tests/vision_language_fixture.h"
#include "train/config.h"
#include "train/presets.h"
#include "train/run_experiment.h"
#include "train/train.h"

namespace maskprior::runtime {
namespace {

namespace fs = std::filesystem;
using maskprior::testing::input_error;
using nlohmann::json;
using training::TrainConfig;

std::string source_path(const std::string& relative) {
  return std::string(MASKPRIOR_SOURCE_DIR) + "/" + relative;
}

class VlRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = maskprior::testing::unique_temp_dir(
        fmt::format("maskprior_vlrt_{}_{}", info->test_suite_name(), info->name()));
    maskprior::testing::write_toy_fashion_mnist(dir_ / "images", /*train_rows=*/320,
                                                /*test_rows=*/100);
    maskprior::testing::write_toy_corpus(dir_ / "text", /*files=*/6, /*bytes=*/3000);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A tiny run of `task` with `init`; the task's spec where the init needs one or measures one.
  TrainConfig tiny(const std::string& task, const std::string& init) const {
    TrainConfig c;
    c.task = task;
    c.init = init;
    const bool vision = task == "fashion-mnist";
    c.spec = source_path(vision ? "specs/vision/local7x7.mask" : "specs/language/distance.mask");
    c.data_dir = (dir_ / (vision ? "images" : "text")).string();
    if (!vision) c.n = 16;  // fortunes-char: context (the spec is compiled with n = 16)
    c.test_size = 100;
    c.dim = 32;
    c.depth = 1;
    c.heads = 4;
    c.head_dim = 16;
    c.mlp = 64;
    c.optimizer = "adamw";
    c.lr = 3e-3;
    c.weight_decay = 0;
    c.epochs = 1;
    c.batch_size = 32;
    c.threads = 1;
    c.device = "cpu";
    c.probe_size = 64;
    c.progress = false;
    return c;
  }

  fs::path dir_;
};

/// Adam on one fixed batch for `steps` steps; returns (first, last) loss.
std::pair<double, double> fit_one_batch(const TrainConfig& config, int steps) {
  const auto experiment = training::make_run_experiment(config, std::nullopt);
  torch::manual_seed(0);
  MaskedTransformer model(experiment->model_config(training::experiment_config(config)));
  InitOptions options;
  options.probe_ids = experiment->probe_inputs(64);
  options.layout = experiment->layout();
  std::optional<CompiledMask> spec;
  if (!config.spec.empty()) {
    CompileOptions compile;
    if (config.task == "fortunes-char") compile.defines["n"] = std::to_string(config.n);
    spec = compile_file(config.spec, compile);
  }
  apply_init(model, parse_init_method(config.init), spec ? &*spec : nullptr, options);
  const Batch batch = experiment->train_batch(torch::arange(32, torch::kLong));
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(3e-3));
  model->train();
  double first = 0, last = 0;
  for (int step = 0; step < steps; ++step) {
    auto loss = experiment->loss(model->forward(batch.inputs), batch);
    adam.zero_grad();
    loss.backward();
    adam.step();
    last = loss.item<double>();
    if (step == 0) first = last;
  }
  return {first, last};
}

// ---------------------------------------------------------------------------------------------
// Patches, augmentation, windows

TEST(VlPieces, ImagePatchesAreRowMajorOnTheGrid) {
  auto images = torch::arange(2 * 28 * 28, torch::kFloat).view({2, 28, 28});
  auto patches = image_patches(images);
  ASSERT_EQ(patches.sizes(), (std::vector<int64_t>{2, 49, 16}));
  // Patch (1, 2) of image 1 = rows 4..7, columns 8..11.
  for (int64_t y = 0; y < 4; ++y) {
    for (int64_t x = 0; x < 4; ++x) {
      EXPECT_EQ(patches[1][1 * 7 + 2][y * 4 + x].item<float>(),
                images[1][4 + y][8 + x].item<float>());
    }
  }
}

TEST(VlPieces, ShiftAndFlipMoveEveryPixel) {
  auto image = torch::arange(1, 10, torch::kFloat).view({1, 3, 3});  // 1 2 3 / 4 5 6 / 7 8 9
  auto shift = [&](int64_t dy, int64_t dx, bool flip) {
    return shift_and_flip(image, torch::tensor({dy, dx}, torch::kLong).view({1, 2}),
                          torch::tensor({flip}, torch::kBool))[0];
  };
  EXPECT_TRUE(torch::equal(shift(0, 0, false), image[0]));
  EXPECT_TRUE(
      torch::equal(shift(1, 0, false),
                   torch::tensor({0.f, 0.f, 0.f, 1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).view({3, 3})));
  EXPECT_TRUE(
      torch::equal(shift(0, -2, false),
                   torch::tensor({3.f, 0.f, 0.f, 6.f, 0.f, 0.f, 9.f, 0.f, 0.f}).view({3, 3})));
  EXPECT_TRUE(
      torch::equal(shift(0, 0, true),
                   torch::tensor({3.f, 2.f, 1.f, 6.f, 5.f, 4.f, 9.f, 8.f, 7.f}).view({3, 3})));
  EXPECT_NE(input_error([&] { shift(3, 0, false); }).find("larger than 2"), std::string::npos);
}

TEST(VlPieces, TextWindowsOverlapByOneByte) {
  auto windows = text_windows("abcdefghij", 3);  // (10 − 1) / 3 = 3 windows of 4 bytes
  ASSERT_EQ(windows.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(windows[0][0].item<uint8_t>(), 'a');
  EXPECT_EQ(windows[1][0].item<uint8_t>(), 'd');
  EXPECT_EQ(windows[2][3].item<uint8_t>(), 'j');
  EXPECT_EQ(text_windows("abc", 3).size(0), 0);
}

// ---------------------------------------------------------------------------------------------
// The patch model and the impulse pattern

TEST(VlModel, PatchInputsAndClassLogits) {
  ModelConfig config;
  config.seq_len = 5;
  config.dim = 16;
  config.depth = 1;
  config.heads = 2;
  config.head_dim = 8;
  config.mlp = 16;
  config.readout = Readout::kClsClassify;
  config.classes = 3;
  config.patch_features = 6;
  MaskedTransformer model(config);
  EXPECT_FALSE(model->token_embedding());
  auto logits = model->forward(torch::randn({2, 4, 6}));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{2, 3}));
  EXPECT_NE(input_error([&] {
              model->forward(torch::randn({2, 5, 6}));
            }).find("expected float patches [B, 4, 6]"),
            std::string::npos);
  EXPECT_NE(input_error([&] { model->forward(torch::zeros({2, 4, 6}, torch::kLong)); }), "");
  config.classes = 0;
  EXPECT_NE(input_error([&] { MaskedTransformer bad(config); }).find("classes must be positive"),
            std::string::npos);
}

TEST(VlImpulse, PatternOnATinyGrid) {
  Layout layout = make_layout({{"cls", 1}, {"p", 4}});
  layout.spans[1].grid = std::pair<int64_t, int64_t>{2, 2};  // p0 p1 / p2 p3
  const auto pattern = impulse_pattern(layout, /*heads=*/5).to(torch::kLong);
  ASSERT_EQ(pattern.sizes(), (std::vector<int64_t>{1, 5, 5, 5}));
  const auto head = [&](int64_t h) { return pattern[0][h]; };
  // Rows and columns: cls, p0, p1, p2, p3. Head 0: right neighbour (0, 1).
  EXPECT_TRUE(torch::equal(
      head(0),
      torch::tensor(
          {{0, 0, 0, 0, 0}, {0, 0, 1, 0, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 1}, {0, 0, 0, 0, 0}},
          torch::kLong)));
  // Head 3: the neighbour above (−1, 0).
  EXPECT_TRUE(torch::equal(
      head(3),
      torch::tensor(
          {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {0, 1, 0, 0, 0}, {0, 0, 1, 0, 0}},
          torch::kLong)));
  // Head 4: down and right (1, 1): only p0 → p3.
  EXPECT_EQ(head(4).sum().item<int64_t>(), 1);
  EXPECT_EQ(head(4)[1][4].item<int64_t>(), 1);
  const std::string message = input_error([] { impulse_pattern(make_layout({{"x", 4}}), 2); });
  EXPECT_NE(message.find("needs a task whose tokens lie on a grid"), std::string::npos) << message;
}

// The impulse heads are the local7x7 spec's shift heads, in the same order.
TEST(VlImpulse, FirstFourShiftsAreTheSpecsHeads) {
  const auto spec = compile_file(source_path("specs/vision/local7x7.mask"));
  const auto open = open_cells(spec);
  const auto impulse = impulse_pattern(tasks::fashion_mnist_layout(), 4);
  // Every impulse cell is open in the spec's head.
  EXPECT_TRUE((impulse & open.logical_not()).any().item<bool>() == false);
  EXPECT_EQ(impulse.sum().item<int64_t>(), 4 * 7 * 6);
}

// ---------------------------------------------------------------------------------------------
// Training

class EveryVisionInit : public VlRuntimeTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(EveryVisionInit, LossFallsOnAFixedBatch) {
  const auto [first, last] = fit_one_batch(tiny("fashion-mnist", GetParam()), 60);
  EXPECT_GT(first, 1.5);  // about ln 10 ≈ 2.3 before training
  EXPECT_LT(last, 0.25 * first) << "first " << first;
}

INSTANTIATE_TEST_SUITE_P(Inits, EveryVisionInit,
                         ::testing::Values("vanilla", "mask", "mask-fixed", "qk-svd", "mimetic",
                                           "impulse"),
                         [](const auto& test) {
                           std::string name = test.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

class EveryLanguageInit : public VlRuntimeTest,
                          public ::testing::WithParamInterface<const char*> {};

TEST_P(EveryLanguageInit, LossFallsOnAFixedBatch) {
  const auto [first, last] = fit_one_batch(tiny("fortunes-char", GetParam()), 40);
  EXPECT_GT(first, 4.0);  // about ln 256 ≈ 5.5 before training
  EXPECT_LT(last, 0.5 * first) << "first " << first;
}

INSTANTIATE_TEST_SUITE_P(Inits, EveryLanguageInit,
                         ::testing::Values("vanilla", "mask", "mask-fixed", "mask-zero"),
                         [](const auto& test) {
                           std::string name = test.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST_F(VlRuntimeTest, VisionRunReportsTop1AndPriorMass) {
  auto config = tiny("fashion-mnist", "impulse");
  config.epochs = 3;
  const json summary = training::train(config);
  ASSERT_TRUE(summary.contains("top1")) << summary.dump(2);
  EXPECT_GT(summary["top1"].get<double>(), 0.3);  // 10 classes: chance is 0.1
  EXPECT_EQ(summary["test_size"], 100);
  EXPECT_EQ(summary["train_size"], 320);
  EXPECT_EQ(summary["data_info"]["train_images"], 320);
  EXPECT_NE(summary["data_info"]["note"].get<std::string>().find("320 of 320"), std::string::npos);
  ASSERT_TRUE(summary.contains("prior_mass_init")) << summary.dump(2);
  EXPECT_EQ(summary["init_info"]["shifts"].size(), 4u);
  // impulse at step 0 puts more mass on the spec's open cells than vanilla does.
  config.init = "vanilla";
  config.epochs = 0;
  const json vanilla = training::train(config);
  EXPECT_GT(summary["prior_mass_init"][0].get<double>(),
            vanilla["prior_mass_init"][0].get<double>() + 0.1)
      << summary["prior_mass_init"] << " vs " << vanilla["prior_mass_init"];
}

TEST_F(VlRuntimeTest, LanguageRunReportsBitsPerCharacter) {
  auto config = tiny("fortunes-char", "mask");
  config.train_size = 200;
  config.epochs = 3;
  const json summary = training::train(config);
  for (const char* key : {"test_loss", "test_bpc", "test_perplexity", "validation_bpc"}) {
    ASSERT_TRUE(summary.contains(key)) << key << summary.dump(2);
  }
  const double loss = summary["test_loss"].get<double>();
  EXPECT_NEAR(summary["test_bpc"].get<double>(), loss / std::log(2.0), 1e-9);
  EXPECT_NEAR(summary["test_perplexity"].get<double>(), std::exp(loss), 1e-6);
  EXPECT_LT(summary["test_bpc"].get<double>(), 4.0);  // uniform over 256 bytes: 8 bits
  EXPECT_EQ(summary["train_size"], 200);
  EXPECT_NE(summary["data_info"]["note"].get<std::string>().find("(a seeded subset)"),
            std::string::npos);
  EXPECT_TRUE(summary.contains("mask_drift"));
  EXPECT_TRUE(summary.contains("prior_mass_init"));
}

// Augmentation draws come from the seed and the batch's rows: a stopped and resumed run ends with
// exactly the metrics of an uninterrupted one.
TEST_F(VlRuntimeTest, VisionResumeEqualsUninterrupted) {
  auto config = tiny("fashion-mnist", "mask");
  config.epochs = 2;
  config.out = (dir_ / "whole").string();
  training::train(config);
  config.out = (dir_ / "parts").string();
  config.stop_after = 7;
  EXPECT_TRUE(training::train(config)["interrupted"].get<bool>());
  training::resume(config.out, json::object());
  const auto read = [](const fs::path& path) {
    std::ifstream in(path);
    std::vector<json> records;
    for (std::string line; std::getline(in, line);) {
      json record = json::parse(line);
      record.erase("wall_seconds");
      records.push_back(record);
    }
    return records;
  };
  const auto whole = read(dir_ / "whole" / "metrics.jsonl");
  EXPECT_EQ(whole.size(), 3u);  // step 0 and one per epoch
  EXPECT_EQ(read(dir_ / "parts" / "metrics.jsonl"), whole);
}

TEST_F(VlRuntimeTest, MissingDataIsAClearError) {
  auto config = tiny("fashion-mnist", "vanilla");
  config.data_dir = (dir_ / "nothing").string();
  std::string message = input_error([&] { training::train(config); });
  EXPECT_NE(message.find("--data-dir"), std::string::npos) << message;
  config = tiny("fortunes-char", "vanilla");
  config.data_dir = (dir_ / "nothing").string();
  message = input_error([&] { training::train(config); });
  EXPECT_NE(message.find("is not a folder"), std::string::npos) << message;
}

TEST_F(VlRuntimeTest, ImpulseOnATaskWithoutAGridLeavesNoRunFolder) {
  auto config = tiny("fortunes-char", "impulse");
  config.out = (dir_ / "run").string();
  const std::string message = input_error([&] { training::train(config); });
  EXPECT_NE(message.find("needs a task whose tokens lie on a grid"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir_ / "run"));
}

TEST(VlPresets, BothFamiliesResolve) {
  for (const char* task : {"fashion-mnist", "fortunes-char"}) {
    for (const auto& preset : training::preset_names()) {
      const auto config = training::resolve_config(task, preset, json::object());
      EXPECT_EQ(config.preset, preset);
      EXPECT_EQ(config.heads, 4) << "the specs' heads (local7x7: 4; distance: 1, broadcast)";
    }
  }
  EXPECT_EQ(training::resolve_config("fortunes-char", "quick", json::object()).n, 64);
}

}  // namespace
}  // namespace maskprior::runtime
