// Tests of the arithmetic experiments (issue 5): sequences and batches, the answer loss, greedy
// decoding (against a hand-written causal model and a model trained to memorise problems),
// metrics, presets, a short run that beats chance, and every init method on both tasks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/arithmetic_experiment.h"
#include "runtime/experiment.h"
#include "runtime/init.h"
#include "runtime/model.h"
#include "tasks/arithmetic_task.h"
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

using nlohmann::json;

std::vector<int64_t> row(const torch::Tensor& t) {
  auto c = t.to(torch::kCPU).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

std::string spec_path(const std::string& name) {
  return std::string(MASKPRIOR_SOURCE_DIR) + "/specs/arith/" + name;
}

/// A small run configuration: tiny model, few problems, quiet.
TrainConfig tiny_config(const std::string& task, const std::string& init) {
  TrainConfig config;
  config.task = task;
  config.init = init;
  config.spec = init == "vanilla" || init == "mimetic" || init == "mask-zero"
                    ? ""
                    : spec_path(task + ".mask");
  config.train_fraction = 0.0005;
  config.test_size = 200;
  config.dim = 32;
  config.depth = 2;
  config.heads = 2;
  config.head_dim = 16;
  config.mlp = 64;
  config.optimizer = "adamw";
  config.lr = 1e-3;
  config.epochs = 1;
  config.batch_size = 128;
  config.qk_opt_steps = 20;
  config.probe_size = 64;
  config.progress = false;
  config.threads = 1;  // tiny models: a second thread only waits on a busy machine
  config.device = "cpu";
  return config;
}

TEST(ArithmeticIds, EncodesKnownProblems) {
  const auto addition = tasks::make_arithmetic_task("addition");
  // 123 + 456 = 579 → answer reversed and padded to 4 digits: 9 7 5 0.
  EXPECT_EQ(
      row(arithmetic_ids(addition, {123 * 1000 + 456})),
      (std::vector<int64_t>{1, 2, 3, tasks::kTokenPlus, 4, 5, 6, tasks::kTokenEquals, 9, 7, 5, 0}));
  const auto multiplication = tasks::make_arithmetic_task("multiplication");
  // 999 · 999 = 998001 → 1 0 0 8 9 9; 7 · 5 = 35 → 5 3 0 0 0 0.
  auto ids = arithmetic_ids(multiplication, {999 * 1000 + 999, 7 * 1000 + 5});
  ASSERT_EQ(ids.sizes(), (std::vector<int64_t>{2, 14}));
  EXPECT_EQ(row(ids[0]), (std::vector<int64_t>{9, 9, 9, tasks::kTokenTimes, 9, 9, 9,
                                               tasks::kTokenEquals, 1, 0, 0, 8, 9, 9}));
  EXPECT_EQ(row(ids[1]), (std::vector<int64_t>{0, 0, 7, tasks::kTokenTimes, 0, 0, 5,
                                               tasks::kTokenEquals, 5, 3, 0, 0, 0, 0}));
  EXPECT_THROW(arithmetic_ids(addition, {1000000}), InputError);
}

TEST(ArithmeticExperiment, BatchesHoldTheSplitsProblems) {
  TrainConfig config = tiny_config("addition", "vanilla");
  config.train_fraction = 0.004;
  config.seed = 3;
  auto experiment = make_arithmetic_experiment(training::experiment_config(config));
  const auto task = tasks::make_arithmetic_task("addition");
  const auto split = tasks::split_problems(task, 0.004, 200, /*seed=*/3);
  ASSERT_EQ(experiment->train_size(), 4000);

  const std::vector<int64_t> rows = {0, 17, 3999};
  const auto batch = experiment->train_batch(torch::tensor(rows, torch::kLong));
  ASSERT_EQ(batch.inputs.sizes(), (std::vector<int64_t>{3, 12}));
  ASSERT_EQ(batch.targets.sizes(), (std::vector<int64_t>{3, 4}));
  std::vector<int64_t> problems;
  for (int64_t r : rows) problems.push_back(split.train[static_cast<size_t>(r)]);
  const auto expected = arithmetic_ids(task, problems);
  EXPECT_TRUE(torch::equal(batch.inputs, expected));
  EXPECT_TRUE(torch::equal(batch.targets, expected.narrow(1, 8, 4)));
  // Each target is the sum a + b, least significant digit first.
  for (size_t i = 0; i < problems.size(); ++i) {
    const auto [a, b] = task.operands(problems[i]);
    EXPECT_EQ(task.decode_answer(row(batch.targets[static_cast<int64_t>(i)])), a + b);
  }

  const auto model = experiment->model_config(training::experiment_config(config));
  EXPECT_EQ(model.vocab, 13);
  EXPECT_EQ(model.seq_len, 12);
  EXPECT_EQ(model.readout, Readout::kCausalLm);
  const auto layout = experiment->layout();
  ASSERT_EQ(layout.spans.size(), 5u);
  EXPECT_EQ(layout.spans.back().name, "c");
  EXPECT_EQ(layout.spans.back().length, 4);

  // The probe is the same batch every time.
  EXPECT_TRUE(torch::equal(experiment->probe_inputs(32), experiment->probe_inputs(32)));
  EXPECT_EQ(experiment->probe_inputs(32).sizes(), (std::vector<int64_t>{32, 12}));
}

TEST(ArithmeticExperiment, RejectsASplitWithoutTestProblems) {
  TrainConfig config = tiny_config("multiplication", "vanilla");
  config.train_fraction = 1.0;
  try {
    make_arithmetic_experiment(training::experiment_config(config));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no test problem left"), std::string::npos) << e.what();
  }
}

TEST(AnswerLoss, ReadsOnlyTheRowsThatPredictAnswers) {
  const int64_t n = 12, offset = 8, vocab = 13;
  auto answers = torch::tensor({{9, 7, 5, 0}}, torch::kLong);
  auto logits = torch::randn({1, n, vocab}) * 50;  // garbage on rows that predict no answer
  auto rows = logits.narrow(1, offset - 1, 4);
  rows.zero_();
  EXPECT_NEAR(answer_loss(logits, answers, offset).item<double>(), std::log(13.0), 1e-5);
  for (int j = 0; j < 4; ++j) rows[0][j][answers[0][j].item<int64_t>()] = 100;
  EXPECT_LT(answer_loss(logits, answers, offset).item<double>(), 1e-6);
}

/// A hand-written causal "model": row r predicts (sum of tokens 0..r) mod 10.
torch::Tensor running_sum_logits(const torch::Tensor& ids) {
  auto sums = ids.cumsum(1).remainder(10);
  return torch::one_hot(sums, 13).to(torch::kFloat);
}

TEST(GreedyDecode, FeedsEachArgmaxBack) {
  auto ids = torch::tensor({{1, 2, 3, 10, 4, 5, 6, 12, 7, 7, 7, 7},  // answer slots: ignored
                            {0, 0, 0, 10, 0, 0, 1, 12, 0, 0, 0, 0}},
                           torch::kLong);
  int calls = 0;
  const LogitsFn forward = [&](const torch::Tensor& t) {
    ++calls;
    return running_sum_logits(t);
  };
  auto decoded = greedy_decode(forward, ids, /*answer_offset=*/8, /*answer_digits=*/4);
  EXPECT_EQ(calls, 4);
  // Row 0: prompt sum 1+2+3+10+4+5+6+12 = 43 → 3; then 43+3 = 46 → 6; 52 → 2; 54 → 4.
  EXPECT_EQ(row(decoded[0]), (std::vector<int64_t>{3, 6, 2, 4}));
  // Row 1: 23 → 3; 26 → 6; 32 → 2; 34 → 4.
  EXPECT_EQ(row(decoded[1]), (std::vector<int64_t>{3, 6, 2, 4}));
  // The input is not modified.
  EXPECT_EQ(ids[0][8].item<int64_t>(), 7);
}

/// An oracle that reads a and b from the prompt and predicts the sum's digits, with digit
/// `wrong_digit` (if ≥ 0) shifted by one.
LogitsFn addition_oracle(int wrong_digit) {
  return [wrong_digit](const torch::Tensor& ids) {
    auto a = ids.select(1, 0) * 100 + ids.select(1, 1) * 10 + ids.select(1, 2);
    auto b = ids.select(1, 4) * 100 + ids.select(1, 5) * 10 + ids.select(1, 6);
    auto sum = a + b;
    auto logits = torch::zeros({ids.size(0), ids.size(1), 13});
    for (int64_t j = 0, place = 1; j < 4; ++j, place *= 10) {
      auto digit = sum.div(place, "floor").remainder(10);
      if (j == wrong_digit) digit = (digit + 1).remainder(10);
      logits.select(1, 7 + j).copy_(torch::one_hot(digit, 13).to(torch::kFloat) * 20);
    }
    return logits;
  };
}

TEST(ArithmeticMetrics, CountsSequencesAndDigits) {
  const auto task = tasks::make_arithmetic_task("addition");
  std::vector<int64_t> problems;
  for (int64_t p = 0; p < 5000; p += 7) problems.push_back(p * 191 % 1000000);
  const auto ids = arithmetic_ids(task, problems);  // > one evaluation chunk
  const auto perfect = arithmetic_metrics(addition_oracle(-1), ids, 8, 4);
  EXPECT_DOUBLE_EQ(perfect["sequence_accuracy"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(perfect["digit_accuracy"].get<double>(), 1.0);
  EXPECT_LT(perfect["test_loss"].get<double>(), 1e-6);
  const auto one_off = arithmetic_metrics(addition_oracle(2), ids, 8, 4);
  EXPECT_DOUBLE_EQ(one_off["sequence_accuracy"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(one_off["digit_accuracy"].get<double>(), 0.75);
  EXPECT_GT(one_off["test_loss"].get<double>(), 4.0);  // one digit of four at ≈ −20 logit margin
}

TEST(GreedyDecode, ReproducesProblemsATinyModelMemorised) {
  torch::set_num_threads(1);  // a tiny model: a second thread only waits on a busy machine
  torch::manual_seed(0);
  const auto task = tasks::make_arithmetic_task("addition");
  const auto ids = arithmetic_ids(task, {123456, 999999, 500500, 1001, 777888, 42, 310290, 9001});
  ModelConfig config;
  config.vocab = 13;
  config.seq_len = 12;
  config.dim = 64;
  config.depth = 2;
  config.heads = 2;
  config.head_dim = 32;
  config.mlp = 128;
  config.readout = Readout::kCausalLm;
  MaskedTransformer model(config);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(3e-3));
  const auto answers = ids.narrow(1, 8, 4);
  double loss_value = 0;
  for (int step = 0; step < 400; ++step) {
    auto loss = answer_loss(model->forward(ids), answers, 8);
    adam.zero_grad();
    loss.backward();
    adam.step();
    loss_value = loss.item<double>();
    if (loss_value < 1e-3) break;
  }
  ASSERT_LT(loss_value, 1e-2) << "the tiny model did not memorise its 8 problems";
  model->eval();
  const auto decoded =
      greedy_decode([&](const torch::Tensor& t) { return model->forward(t); }, ids, 8, 4);
  EXPECT_TRUE(torch::equal(decoded, answers)) << decoded << answers;
}

TEST(ArithmeticPresets, QuickAndPaperResolve) {
  const auto paper = resolve_config("multiplication", kPresetPaper, json::object());
  EXPECT_EQ(paper.depth, 6);
  EXPECT_EQ(paper.heads, 4);
  EXPECT_EQ(paper.dim, 256);
  EXPECT_EQ(paper.optimizer, "adamw");
  EXPECT_EQ(paper.schedule, "cosine");
  EXPECT_EQ(paper.epochs, 50);
  EXPECT_DOUBLE_EQ(paper.train_fraction, 0.03);
  const auto quick = resolve_config("addition", kPresetQuick, {{"train_fraction", 0.01}});
  EXPECT_DOUBLE_EQ(quick.train_fraction, 0.01);  // flags override the preset
  EXPECT_EQ(resolve_config("addition", kPresetQuick, json::object()).train_fraction, 0.004);
  EXPECT_THROW(training::task_preset("addition", "huge"), InputError);
  EXPECT_THROW(training::task_preset("subtraction", kPresetQuick), InputError);
}

TEST(ArithmeticTraining, ShortRunBeatsChanceOnDigits) {
  TrainConfig config = tiny_config("addition", "vanilla");
  config.train_fraction = 0.004;
  config.test_size = 1000;
  config.dim = 64;
  config.heads = 4;
  config.mlp = 128;
  config.epochs = 6;
  config.batch_size = 64;
  config.lr = 2e-3;
  config.eval_every = 1000;  // only at the end
  const auto summary = train(config);
  // Chance is 10% per digit; the leading digit of a sum alone (0 or 1) lifts a fitted model well
  // above that.
  EXPECT_GT(summary["digit_accuracy"].get<double>(), 0.3) << summary.dump(2);
  EXPECT_LT(summary["test_loss"].get<double>(), std::log(10.0)) << summary.dump(2);
}

class EveryInit : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(EveryInit, TrainsAndReports) {
  const auto& [task, init] = GetParam();
  const auto summary = train(tiny_config(task, init));
  for (const char* key : {"sequence_accuracy", "digit_accuracy", "accuracy"}) {
    ASSERT_TRUE(summary.contains(key)) << key;
    EXPECT_GE(summary[key].get<double>(), 0.0);
    EXPECT_LE(summary[key].get<double>(), 1.0);
  }
  EXPECT_TRUE(std::isfinite(summary["test_loss"].get<double>()));
  EXPECT_GT(summary["steps"].get<int64_t>(), 0);
  const auto method = parse_init_method(init);
  EXPECT_EQ(summary.contains("mask_drift"), init_uses_mask(method)) << summary.dump(2);
  if (init_requires_spec(method)) {
    EXPECT_TRUE(summary.contains("prior_mass")) << summary.dump(2);
  }
}

INSTANTIATE_TEST_SUITE_P(BothTasks, EveryInit,
                         ::testing::Combine(::testing::Values("addition", "multiplication"),
                                            ::testing::ValuesIn(init_method_names())),
                         [](const auto& info) {
                           auto name = std::get<0>(info.param) + "_" + std::get<1>(info.param);
                           for (auto& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace maskprior::runtime
