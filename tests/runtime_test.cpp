// Tests of the LibTorch runtime: the masked Transformer, initialisations, training, resume.
// Tiny models on parity2 with n = 6 bits (64 cube points, 48 seen) keep every test fast.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "io/tensor_file.h"
#include "runtime/experiment.h"
#include "runtime/init.h"
#include "runtime/model.h"
#include "train/presets.h"
#include "train/train.h"

namespace maskprior::runtime {
namespace {

using training::config_from_json;
using training::kPresetPaper;
using training::kPresetQuick;
using training::resolve_config;
using training::resume;
using training::to_json;
using training::train;
using training::TrainConfig;

namespace fs = std::filesystem;
using nlohmann::json;

inline constexpr int kBits = 6;

/// The parity2 spec of specs/gotu/parity2.mask on n bits, built by hand: diagonal, cls → x0, x1,
/// x0 ↔ x1 open (+10), everything else closed (−10).
CompiledMask parity2_spec(int n, int64_t layers = 1, int64_t heads = 1) {
  CompiledMask spec;
  spec.name = "parity2";
  spec.n = 1 + n;
  spec.layers = layers;
  spec.heads = heads;
  spec.layout.spans = {{"cls", 0, 1, std::nullopt, std::nullopt},
                       {"x", 1, n, std::nullopt, std::nullopt}};
  spec.params = {{"n", n}};
  const auto cells = static_cast<size_t>(layers * heads * spec.n * spec.n);
  spec.mask.assign(cells, -10.0f);
  spec.provenance.assign(cells, 0);
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      auto open = [&](int64_t q, int64_t k) { spec.mask[spec.index(l, h, q, k)] = 10.0f; };
      for (int64_t t = 0; t < spec.n; ++t) open(t, t);
      open(0, 1);
      open(0, 2);
      open(1, 2);
      open(2, 1);
    }
  }
  return spec;
}

class RuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        fs::temp_directory_path() / fmt::format("maskprior_runtime_{}_{}", getpid(), info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    spec_path_ = (dir_ / "parity2.safetensors").string();
    write_mask_file(parity2_spec(kBits), spec_path_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A tiny model on parity2 with n = 6; `epochs` = 0 only measures step 0.
  TrainConfig tiny(const std::string& init, int64_t epochs) const {
    TrainConfig c;
    c.task = "parity2";
    c.n = kBits;
    c.spec = init == "vanilla" || init == "mimetic" ? "" : spec_path_;
    c.init = init;
    c.dim = 32;
    c.depth = 2;
    c.heads = 2;
    c.head_dim = 16;
    c.mlp = 32;
    c.lr = 3e-3;
    c.weight_decay = 0;
    c.epochs = epochs;
    c.batch_size = 16;
    c.threads = 1;
    c.device = "cpu";
    c.probe_size = 64;
    c.qk_opt_steps = 400;
    c.progress = false;
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

  fs::path dir_;
  std::string spec_path_;
};

double mean(const json& list) {
  double sum = 0;
  for (const auto& v : list) sum += v.get<double>();
  return sum / static_cast<double>(list.size());
}

// ---------------------------------------------------------------------------------------------
// Model

TEST(ModelTest, OutputShapesFollowTheReadout) {
  torch::manual_seed(0);
  ModelConfig config{.vocab = 5,
                     .seq_len = 7,
                     .dim = 16,
                     .depth = 2,
                     .heads = 2,
                     .head_dim = 8,
                     .mlp = 16,
                     .readout = Readout::kClsRegression};
  MaskedTransformer regression(config);
  auto ids = torch::randint(0, 5, {3, 7}, torch::kLong);
  EXPECT_EQ(regression->forward(ids).sizes(), (std::vector<int64_t>{3}));
  config.readout = Readout::kCausalLm;
  MaskedTransformer lm(config);
  EXPECT_EQ(lm->forward(ids).sizes(), (std::vector<int64_t>{3, 7, 5}));
  EXPECT_THROW(lm->forward(torch::zeros({3, 6}, torch::kLong)), InputError);
}

TEST(ModelTest, CausalAttentionNeverLooksAhead) {
  torch::manual_seed(0);
  MaskedTransformer lm(ModelConfig{.vocab = 4,
                                   .seq_len = 5,
                                   .dim = 16,
                                   .depth = 1,
                                   .heads = 2,
                                   .head_dim = 8,
                                   .mlp = 16,
                                   .readout = Readout::kCausalLm});
  auto probs = lm->attention_maps(torch::randint(0, 4, {2, 5}, torch::kLong)).at(0);
  EXPECT_TRUE(torch::allclose(probs.sum(-1), torch::ones({2, 2, 5})));
  EXPECT_EQ(
      probs.masked_select(torch::ones({5, 5}, torch::kBool).triu(1)).abs().max().item<float>(),
      0.0f);
}

TEST(ModelTest, MaskAndHardMaskShapeAttention) {
  torch::manual_seed(0);
  MaskedTransformer model(ModelConfig{
      .vocab = 3, .seq_len = 3, .dim = 16, .depth = 2, .heads = 2, .head_dim = 8, .mlp = 16});
  // Row 0 open only to key 1; rows 1, 2 open everywhere; the hard mask removes 2 → 1.
  auto m = torch::full({1, 1, 3, 3}, 10.0f);
  m[0][0][0][0] = -30.0f;
  m[0][0][0][2] = -30.0f;
  model->set_mask(m, /*learnable=*/true);
  auto hard = torch::zeros({3, 3}, torch::kBool);
  hard[2][1] = true;
  model->set_hard_mask(hard);
  for (const auto& probs : model->attention_maps(torch::tensor({{2, 0, 1}}, torch::kLong))) {
    EXPECT_GT(probs[0][1][0][1].item<float>(), 0.999f);
    EXPECT_EQ(probs[0][0][2][1].item<float>(), 0.0f);
  }
  EXPECT_TRUE(model->mask().requires_grad());
  EXPECT_THROW(model->set_mask(torch::zeros({3, 1, 3, 3}), true), InputError);
}

TEST(ModelTest, RejectsWrongMaskShapesAndEmptyRows) {
  MaskedTransformer model(ModelConfig{
      .vocab = 3, .seq_len = 3, .dim = 8, .depth = 2, .heads = 2, .head_dim = 4, .mlp = 8});
  try {
    model->set_mask(torch::zeros({3, 1, 3, 3}), true);
    FAIL() << "a 3-layer mask on a 2-layer model was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("depth 2"), std::string::npos) << e.what();
  }
  auto hard = torch::zeros({3, 3}, torch::kBool);
  hard[1] = torch::ones({3}, torch::kBool);
  EXPECT_THROW(model->set_hard_mask(hard), InputError);
}

// ---------------------------------------------------------------------------------------------
// Spec tensors and init names

TEST(InitTest, NamesRoundTripAndUnknownNamesAreRefused) {
  for (const auto& name : init_method_names())
    EXPECT_EQ(init_method_name(parse_init_method(name)), name);
  try {
    parse_init_method("maskk");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("qk-svd"), std::string::npos) << e.what();
  }
}

TEST(InitTest, OpenCellsOfASmallSpec) {
  auto spec = parity2_spec(2);                                  // N = 3
  spec.hard = std::vector<uint8_t>{0, 0, 1, 0, 0, 0, 0, 0, 0};  // cls → x[1] hard-excluded
  auto open = open_cells(spec).view({3, 3}).to(torch::kLong);
  auto expected = torch::tensor({{1, 1, 0}, {0, 1, 1}, {0, 1, 1}}, torch::kLong);
  EXPECT_TRUE(torch::equal(open, expected)) << open;
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

TEST_F(RuntimeTest, RunFolderHoldsConfigWeightsAndLearnedMask) {
  auto config = tiny("mask", /*epochs=*/1);
  config.out = (dir_ / "run").string();
  const auto summary = train(config);
  for (const char* file : {"config.json", "metrics.jsonl", "summary.json", "weights.safetensors",
                           "mask.safetensors", "init.json"}) {
    EXPECT_TRUE(fs::exists(dir_ / "run" / file)) << file;
  }
  EXPECT_EQ(config_from_json(json::parse(read_text(dir_ / "run" / "config.json"))).seed,
            config.seed);
  for (const char* key :
       {"accuracy", "unseen_accuracy", "seen_mse", "unseen_mse", "train_loss", "steps",
        "wall_seconds", "prior_mass_init", "prior_mass", "mask_drift", "fourier"}) {
    EXPECT_TRUE(summary.contains(key)) << key;
  }
  const auto learned = read_mask_file((dir_ / "run" / "mask.safetensors").string());
  EXPECT_EQ(learned.n, 1 + kBits);
  EXPECT_EQ(learned.layout.spans.size(), 2u);
  const auto weights = read_safetensors((dir_ / "run" / "weights.safetensors").string());
  EXPECT_TRUE(weights.tensors.contains("mask"));
  EXPECT_TRUE(weights.tensors.contains("block0.wq.weight"));
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

}  // namespace
}  // namespace maskprior::runtime
