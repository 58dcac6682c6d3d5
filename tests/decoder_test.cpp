// Tests of the causal decoder (runtime/decoder.h) on arithmetic problems: the answer loss,
// greedy decoding (against a hand-written causal model and a model trained to memorise problems),
// the teacher-forced path and the key/value-cached completion against plain K-pass greedy
// decoding, one cached step of the model (forward_position), and the metrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/arithmetic_experiment.h"
#include "runtime/decoder.h"
#include "runtime/model.h"
#include "tasks/arithmetic_task.h"
#include "tests/test_util.h"

namespace maskprior::runtime {
namespace {

using maskprior::testing::input_error;
using nlohmann::json;

std::vector<int64_t> row(const torch::Tensor& t) {
  auto c = t.to(torch::kCPU).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
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

/// Mean over the given (sequence, row) cells of −log softmax(logits[b, r])[target]: cross-entropy
/// by hand, one cell at a time, where row r of `ids` predicts token r + 1.
double hand_cross_entropy(const torch::Tensor& logits, const torch::Tensor& ids, int64_t first_row,
                          int64_t rows) {
  double sum = 0;
  for (int64_t b = 0; b < ids.size(0); ++b) {
    for (int64_t r = first_row; r < first_row + rows; ++r) {
      const auto target = ids[b][r + 1].item<int64_t>();
      const auto row_logits = logits[b][r].to(torch::kDouble);
      const double log_z = std::log(row_logits.exp().sum().item<double>());
      sum += log_z - row_logits[target].item<double>();
    }
  }
  return sum / static_cast<double>(ids.size(0) * rows);
}

// loss_rows all: every row but the last predicts the next token; the last row's logits are unread.
TEST(NextTokenLoss, IsTheCrossEntropyOfEveryNextToken) {
  torch::manual_seed(0);
  const auto ids = torch::tensor({{1, 2, 3, 4}, {4, 0, 2, 2}}, torch::kLong);
  auto logits = torch::randn({2, 4, 5}) * 3;
  const double want = hand_cross_entropy(logits, ids, 0, 3);
  EXPECT_NEAR(next_token_loss(logits, ids).item<double>(), want, 1e-5);
  logits.select(1, 3).normal_(0, 100);  // garbage on the row that predicts nothing
  EXPECT_NEAR(next_token_loss(logits, ids).item<double>(), want, 1e-5);
  EXPECT_GT(std::abs(answer_loss(logits, ids.narrow(1, 2, 2), 2).item<double>() - want), 1e-3);
}

/// An arithmetic experiment of a tiny decoder with loss rows `loss_rows`.
std::unique_ptr<Experiment> tiny_arithmetic(const std::string& loss_rows,
                                            ExperimentConfig& config) {
  config.task = "addition";
  config.train_fraction = 0.0005;
  config.test_size = 64;
  config.dim = 16;
  config.depth = 1;
  config.heads = 2;
  config.head_dim = 8;
  config.mlp = 16;
  config.loss_rows = loss_rows;
  return make_arithmetic_experiment(config);
}

// The decoder's training loss under each loss_rows, against cross-entropy by hand on a tiny model;
// the metrics (test_loss too) read the answer rows either way.
TEST(DecoderExperimentLoss, LossRowsChooseTheRowsTrainedOn) {
  torch::set_num_threads(1);
  ExperimentConfig config;
  const auto answer = tiny_arithmetic("answer", config);
  const auto all = tiny_arithmetic("all", config);
  torch::manual_seed(0);
  MaskedTransformer model(answer->model_config(config));
  const auto batch = all->train_batch(torch::arange(5, torch::kLong));
  ASSERT_TRUE(
      torch::equal(batch.inputs, answer->train_batch(torch::arange(5, torch::kLong)).inputs));
  const auto logits = model->forward(batch.inputs).detach();
  const double every_row = hand_cross_entropy(logits, batch.inputs, 0, 11);
  const double answer_rows = hand_cross_entropy(logits, batch.inputs, 7, 4);  // rows 7..10
  EXPECT_NEAR(all->train_loss(model, batch).item<double>(), every_row, 1e-4);
  EXPECT_NEAR(all->loss(logits, batch).item<double>(), every_row, 1e-4);
  EXPECT_NEAR(answer->train_loss(model, batch).item<double>(), answer_rows, 1e-4);
  EXPECT_GT(std::abs(every_row - answer_rows), 1e-3);
  const auto answer_metrics = answer->evaluate(model);
  const auto all_metrics = all->evaluate(model);
  for (const char* key : {"test_loss", "sequence_accuracy", "digit_accuracy"}) {
    EXPECT_EQ(all_metrics[key], answer_metrics[key]) << key;
  }
  const std::string message = input_error([&] { tiny_arithmetic("every", config); });
  EXPECT_NE(message.find("loss_rows must be answer or all"), std::string::npos) << message;
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

TEST(AnswerMetrics, CountsSequencesAndTokens) {
  const auto task = tasks::make_arithmetic_task("addition");
  std::vector<int64_t> problems;
  for (int64_t p = 0; p < 5000; p += 7) problems.push_back(p * 191 % 1000000);
  const auto ids = arithmetic_ids(task, problems);  // > one evaluation chunk
  const auto perfect = answer_metrics(Decoder{addition_oracle(-1)}, ids, 8, 4);
  EXPECT_DOUBLE_EQ(perfect["sequence_accuracy"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(perfect["token_accuracy"].get<double>(), 1.0);
  EXPECT_LT(perfect["test_loss"].get<double>(), 1e-6);
  const auto one_off = answer_metrics(Decoder{addition_oracle(2)}, ids, 8, 4);
  EXPECT_DOUBLE_EQ(one_off["sequence_accuracy"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(one_off["token_accuracy"].get<double>(), 0.75);
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

/// The plain metrics: greedy_decode's K full passes and a separate teacher-forced pass.
json plain_metrics(const LogitsFn& forward, const torch::Tensor& ids, int64_t offset, int64_t k) {
  torch::NoGradGuard no_grad;
  const auto answers = ids.narrow(1, offset, k);
  const auto right = greedy_decode(forward, ids, offset, k) == answers;
  const auto rows = static_cast<double>(ids.size(0));
  return {{"sequence_accuracy", right.all(1).sum().item<double>() / rows},
          {"token_accuracy", right.sum().item<double>() / (rows * static_cast<double>(k))},
          {"test_loss", answer_loss(forward(ids), answers, offset).item<double>()}};
}

/// `got` has the metrics `expected` has (plain_metrics of the same rows).
void expect_same_metrics(const json& got, const json& expected) {
  EXPECT_DOUBLE_EQ(got["sequence_accuracy"].get<double>(),
                   expected["sequence_accuracy"].get<double>());
  EXPECT_DOUBLE_EQ(got["token_accuracy"].get<double>(), expected["token_accuracy"].get<double>());
  EXPECT_NEAR(got["test_loss"].get<double>(), expected["test_loss"].get<double>(), 1e-5);
}

/// A random causal decoder (learnable prior, some hard-excluded keys) on multiplication
/// problems (K = 6) whose "true" answers agree with the model's own greedy answer on the first
/// r mod (K + 1) digits of row r and differ after: every first wrong digit 0..K−1, and right rows.
class FastGreedyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::set_num_threads(1);
    torch::manual_seed(7);
    ModelConfig config;
    config.vocab = tasks::kArithmeticVocab;
    config.seq_len = task.sequence_length();
    config.dim = 32;
    config.depth = 2;
    config.heads = 2;
    config.head_dim = 16;
    config.mlp = 64;
    config.readout = Readout::kCausalLm;
    model = MaskedTransformer(config);
    model->set_mask(torch::randn({1, 2, config.seq_len, config.seq_len}), /*learnable=*/true);
    auto hard = torch::rand({config.seq_len, config.seq_len}) < 0.2;
    hard.fill_diagonal_(false);
    model->set_hard_mask(hard);
    model->eval();
    std::vector<int64_t> problems;
    for (int64_t p = 0; p < 300; ++p) problems.push_back(p * 3331 % task.problems());
    ids = agreeing(arithmetic_ids(task, problems), greedy);
    calls = 0;
  }

  /// `problems` with answers that agree with the model's greedy ones (set in `decoded`) on the
  /// first r mod (K + 1) digits of row r and differ after.
  torch::Tensor agreeing(torch::Tensor problems, torch::Tensor& decoded) {
    decoded = greedy_decode(forward, problems, offset, k);
    for (int64_t r = 0; r < problems.size(0); ++r) {
      const int64_t agree = r % (k + 1);
      for (int64_t j = 0; j < k; ++j) {
        const auto g = decoded[r][j].item<int64_t>();
        problems[r][offset + j] = j < agree ? g : (g + 1 + r % 9) % 10;
      }
    }
    return problems;
  }

  const tasks::ArithmeticTask task = tasks::make_arithmetic_task("multiplication");
  const int64_t offset = task.answer_offset(), k = task.answer_digits;
  MaskedTransformer model{nullptr};
  int calls = 0;
  const LogitsFn forward = [this](const torch::Tensor& t) {
    ++calls;
    return model->forward(t);
  };
  torch::Tensor ids, greedy;
};

TEST_F(FastGreedyTest, TeacherForcedPathEqualsPlainGreedy) {
  const auto fast = greedy_decode_teacher_forced(Decoder{forward}, ids, offset, k);
  EXPECT_TRUE(torch::equal(fast, greedy)) << fast << greedy;
  EXPECT_LE(calls, k);  // one teacher-forced pass, then passes over the wrong rows only
  const auto expected = plain_metrics(forward, ids, offset, k);
  const auto got = answer_metrics(Decoder{forward}, ids, offset, k);
  expect_same_metrics(got, expected);
  EXPECT_NEAR(got["sequence_accuracy"].get<double>(), 1.0 / static_cast<double>(k + 1), 0.01);
  // All rows right: the teacher-forced pass alone.
  ids.narrow(1, offset, k).copy_(greedy);
  calls = 0;
  EXPECT_TRUE(torch::equal(greedy_decode_teacher_forced(Decoder{forward}, ids, offset, k), greedy));
  EXPECT_EQ(calls, 1);
}

// Training computes the last layer at the K answer rows only: same loss, same gradients.
TEST_F(FastGreedyTest, AnswerRowsLossEqualsTheFullPassInValueAndGradient) {
  const auto answers = ids.narrow(1, offset, k);
  const auto params = model->parameters();
  const auto full = answer_loss(model->forward(ids), answers, offset);
  const auto rows = answer_rows_loss(model, ids, answers, offset);
  EXPECT_NEAR(rows.item<double>(), full.item<double>(), 1e-5);
  const auto want = torch::autograd::grad({full}, params);
  const auto got = torch::autograd::grad({rows}, params);
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-4, 1e-6)) << "parameter " << i;
  }
  EXPECT_GT(got.back().abs().sum().item<double>(), 0.0);  // the mask's gradient too
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::allclose(model->forward(ids, {3, 5}), model->forward(ids).narrow(1, 3, 5),
                              1e-5, 1e-5));
  const int64_t n = task.sequence_length();
  for (auto bad : {MaskedTransformerImpl::Rows{-1, 2}, {n - 1, 2}, {0, 0}}) {
    EXPECT_THROW(model->forward(ids, bad), InputError);
  }
}

TEST_F(FastGreedyTest, KeyValueCachedCompletionEqualsPlainGreedy) {
  // Without a cache: one full pass, then one position at a time.
  const auto nothing_kept = torch::full({ids.size(0)}, offset - 1, torch::kLong);
  EXPECT_TRUE(torch::equal(
      greedy_complete(model, ids, nothing_kept, offset + k - 1).narrow(1, offset, k), greedy));
  // From the cache of a pass over the true answers: positions before `keep` agree with it.
  KeyValueCache cache;
  EXPECT_TRUE(torch::allclose(model->forward_cached(ids, cache), model->forward(ids), 1e-5, 1e-5));
  auto prompt_only = ids.clone();
  prompt_only.narrow(1, offset, k).fill_(0);
  EXPECT_TRUE(torch::equal(greedy_complete(model, prompt_only, nothing_kept, offset + k - 1, &cache)
                               .narrow(1, offset, k),
                           greedy));
  // Completion from the teacher-forced pass's cache, the wrong rows' part of it (a full pass
  // here; cached_decoder's runs the answer rows only).
  const LogitsFn caching = [&](const torch::Tensor& t) {
    ++calls;
    return model->forward_cached(t, cache);
  };
  const CompleteFn from_cache = [&](const torch::Tensor& t, const torch::Tensor& rows,
                                    const torch::Tensor& keep, int64_t last) {
    KeyValueCache picked;
    for (size_t l = 0; l < cache.keys.size(); ++l) {
      picked.keys.push_back(cache.keys[l].index_select(0, rows));
      picked.values.push_back(cache.values[l].index_select(0, rows));
    }
    return greedy_complete(model, t, keep, last, &picked);
  };
  calls = 0;
  const Decoder decoder{caching, /*first=*/0, from_cache};
  EXPECT_TRUE(torch::equal(greedy_decode_teacher_forced(decoder, ids, offset, k), greedy));
  EXPECT_EQ(calls, 1);
  const auto expected = plain_metrics(forward, ids, offset, k);
  const auto cached = answer_metrics(decoder, ids, offset, k);
  expect_same_metrics(cached, expected);
  // The experiments' decoder: the answer rows' pass, the wrong rows completed from its cache.
  EXPECT_TRUE(torch::equal(
      greedy_decode_teacher_forced(cached_decoder(model, offset, k), ids, offset, k), greedy));
  // Passes of one row each (a budget below one row's attention), their caches put together:
  // the same answers and metrics.
  const auto one_row = cached_decoder(model, offset, k, /*pass_bytes=*/1.0);
  EXPECT_TRUE(torch::equal(greedy_decode_teacher_forced(one_row, ids, offset, k), greedy));
  expect_same_metrics(answer_metrics(one_row, ids, offset, k), expected);
}

// Every row keeps its tokens up to keep[b] and is completed after it, up to `last` only: what full
// passes give, one position at a time.
TEST_F(FastGreedyTest, CompletionKeepsEachRowsPrefixAndStopsAtLast) {
  torch::NoGradGuard no_grad;
  const auto keep = torch::arange(ids.size(0), torch::kLong).remainder(k) + (offset - 1);
  const int64_t last = offset + k - 2;  // the last answer token is left as it is
  auto want = ids.clone();
  for (int64_t p = offset - 1; p < last; ++p) {
    const auto next = model->forward(want).select(1, p).argmax(-1);
    auto column = want.select(1, p + 1);
    column.copy_(torch::where(keep.le(p), next, column));
  }
  const auto got = greedy_complete(model, ids, keep, last);
  EXPECT_TRUE(torch::equal(got, want));
  EXPECT_TRUE(torch::equal(got.narrow(1, 0, offset), ids.narrow(1, 0, offset)));
  EXPECT_TRUE(torch::equal(got.select(1, last + 1), ids.select(1, last + 1)));
  EXPECT_FALSE(torch::equal(got, ids));  // the wrong answers were decoded again
  const int64_t n = task.sequence_length();
  EXPECT_THROW(greedy_complete(model, ids, keep.narrow(0, 0, 3), last), InputError);
  EXPECT_THROW(greedy_complete(model, ids, keep, /*last=*/n), InputError);
  EXPECT_THROW(greedy_complete(model, ids.narrow(1, 0, n - 1), keep, last), InputError);
}

// One cached step of the model: position p's logits from the cache of positions [0, p) equal the
// full pass's, also after another token at p (whose keys and values the step writes into the
// cache, which the next position then reads).
TEST_F(FastGreedyTest, ForwardPositionIsOneStepOfTheFullPass) {
  torch::NoGradGuard no_grad;
  const int64_t p = offset, n = task.sequence_length();
  KeyValueCache cache;
  const auto full = model->forward_cached(ids, cache);
  EXPECT_TRUE(torch::allclose(model->forward_position(ids.select(1, p), p, cache),
                              full.select(1, p), 1e-5, 1e-5));
  auto changed = ids.clone();
  changed.select(1, p).add_(1).remainder_(10);
  const auto want = model->forward(changed);
  EXPECT_FALSE(torch::allclose(want.select(1, p + 1), full.select(1, p + 1), 1e-3, 1e-3));
  EXPECT_TRUE(torch::allclose(model->forward_position(changed.select(1, p), p, cache),
                              want.select(1, p), 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(model->forward_position(changed.select(1, p + 1), p + 1, cache),
                              want.select(1, p + 1), 1e-5, 1e-5));
  EXPECT_THROW(model->forward_position(ids.select(1, p), /*position=*/n, cache), InputError);
  EXPECT_THROW(model->forward_position(ids.narrow(0, 0, 3).select(1, p), p, cache), InputError);
  KeyValueCache empty;
  EXPECT_THROW(model->forward_position(ids.select(1, p), p, empty), InputError);
}

// Evaluation batches are sorted problems: many rows share `a op`, which the pass over the answer
// rows computes once per distinct prefix. Logits and cache equal the full pass's.
TEST_F(FastGreedyTest, AnswerRowsPassSharesPrefixesAndEqualsTheFullPass) {
  std::vector<int64_t> problems;
  for (int64_t a = 0; a < 12; ++a) {
    for (int64_t b = 0; b < 25; ++b) problems.push_back((a * 83 + 17) * 1000 + b * 37 % 1000);
  }
  std::sort(problems.begin(), problems.end());
  torch::Tensor sorted_greedy;
  const auto sorted = agreeing(arithmetic_ids(task, problems), sorted_greedy);
  const int64_t end = offset - 1 + k;  // positions the answer rows need
  const auto shared = shared_prefix(sorted.narrow(1, 0, end), offset - 1);
  ASSERT_EQ(shared.length, 4);  // a[3] and the operator: 12 distinct of 300 rows
  ASSERT_EQ(shared.representatives.size(0), 12);
  EXPECT_TRUE(torch::equal(
      sorted.index_select(0, shared.representatives.index_select(0, shared.group)).narrow(1, 0, 4),
      sorted.narrow(1, 0, 4)));
  EXPECT_EQ(shared_prefix(sorted.narrow(1, 0, end), 2).length, 2);  // no longer than the limit
  EXPECT_EQ(shared_prefix(torch::arange(10, torch::kLong).view({10, 1}).repeat({1, 5}), 4).length,
            0);  // every first token differs
  EXPECT_THROW(shared_prefix(torch::zeros({3, 4}), 2), InputError);

  torch::NoGradGuard no_grad;
  for (const auto& batch : {sorted, ids}) {
    KeyValueCache full, rows_only;
    const auto logits = model->forward_cached(batch, full);
    for (auto rows : {MaskedTransformerImpl::Rows{offset - 1, k}, {3, 5}}) {
      const auto got = model->forward_cached(batch, rows_only, rows);
      EXPECT_TRUE(torch::allclose(got, logits.narrow(1, rows.first, rows.count), 1e-5, 1e-5));
      ASSERT_EQ(rows_only.keys.size(), full.keys.size());
      for (size_t l = 0; l < full.keys.size(); ++l) {
        const int64_t e = rows.first + rows.count;
        EXPECT_TRUE(torch::allclose(rows_only.keys[l], full.keys[l].narrow(2, 0, e), 1e-5, 1e-5));
        EXPECT_TRUE(
            torch::allclose(rows_only.values[l], full.values[l].narrow(2, 0, e), 1e-5, 1e-5));
      }
    }
  }
  KeyValueCache short_cache;
  EXPECT_THROW(model->forward_cached(sorted, short_cache, {offset, k + 1}), InputError);
  model->forward_cached(sorted, short_cache, {3, 5});  // positions [0, 8): too few to complete
  const auto keep = torch::full({sorted.size(0)}, offset - 1, torch::kLong);
  EXPECT_THROW(greedy_complete(model, sorted, keep, offset + k - 1, &short_cache), InputError);

  // The experiment's evaluation: the same numbers as K plain greedy passes.
  const auto got = decoder_metrics(model, sorted, ids, offset, k);
  const auto expected = plain_metrics(forward, sorted, offset, k);
  expect_same_metrics(got, expected);
  EXPECT_NEAR(got["sequence_accuracy"].get<double>(), 1.0 / static_cast<double>(k + 1), 0.01);
  EXPECT_DOUBLE_EQ(got["train_sequence_accuracy"].get<double>(),
                   plain_metrics(forward, ids, offset, k)["sequence_accuracy"].get<double>());
}

}  // namespace
}  // namespace maskprior::runtime
