// Tests of runs over several sizes (docs/settings.md, "Sizes"): arithmetic at any operand length,
// the sizes a run trains and tests, batches of one size, and training that reports accuracy per
// size with a prior compiled at each (fixed, or learnable and tied to the spec's rules).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "compiler/compile.h"
#include "core/error.h"
#include "io/json_file.h"
#include "runtime/arithmetic_experiment.h"
#include "tasks/arithmetic_task.h"
#include "tasks/sequence_file.h"
#include "tests/test_util.h"
#include "tests/train_fixture.h"
#include "train/config.h"
#include "train/data_order.h"
#include "train/distill.h"
#include "train/run_experiment.h"
#include "train/train.h"

namespace maskprior {
namespace {

using maskprior::testing::input_error;
using nlohmann::json;
using tasks::DigitProblem;

TEST(DigitSizes, ReadsOneSizeRangesAndLists) {
  auto sizes = tasks::parse_digit_sizes("3", "");
  EXPECT_EQ(sizes.train, std::vector<int>{3});
  EXPECT_EQ(sizes.test, std::vector<int>{3});
  EXPECT_FALSE(sizes.several());
  sizes = tasks::parse_digit_sizes("1..4", "20, 6,8..9,6");
  EXPECT_EQ(sizes.train, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(sizes.test, (std::vector<int>{6, 8, 9, 20}));
  EXPECT_TRUE(sizes.several());
  EXPECT_TRUE(tasks::parse_digit_sizes("5", "7").several());
  for (const char* bad : {"0", "x", "5..2", "1..", "3001", "2,,3", "-1"}) {
    EXPECT_NE(input_error([&] { tasks::parse_digit_sizes(bad, ""); }).find("--digits"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(input_error([&] { tasks::parse_digit_sizes("3", "4..2"); }).find("--test-digits"),
            std::string::npos);
}

TEST(DigitProblems, EncodeAsProblemIndicesDoAtThreeDigits) {
  for (const char* name : {"addition", "multiplication"}) {
    for (auto order : {DigitOrder::kLsbFirst, DigitOrder::kMsbFirst}) {
      auto task = tasks::make_arithmetic_task(name);
      task.operand_order = order;
      task.answer_order =
          order == DigitOrder::kLsbFirst ? DigitOrder::kMsbFirst : DigitOrder::kLsbFirst;
      for (int64_t p : {0LL, 999'999LL, 123'456LL, 500'001LL, 98'765LL}) {
        const auto [a, b] = task.operands(p);
        DigitProblem problem;
        for (int i = 0; i < 3; ++i) {
          problem.a.push_back(static_cast<int8_t>(a / static_cast<int64_t>(std::pow(10, i)) % 10));
          problem.b.push_back(static_cast<int8_t>(b / static_cast<int64_t>(std::pow(10, i)) % 10));
        }
        EXPECT_EQ(tasks::encode_digits(task, problem), task.encode(p)) << name << " " << p;
      }
    }
  }
}

TEST(DigitProblems, LongSumsAndProductsCarry) {
  // (10^n − 1) + 1 = 10^n and (10^n − 1)² = 10^2n − 2·10^n + 1, at n = 25.
  const int n = 25;
  DigitProblem nines{std::vector<int8_t>(n, 9), std::vector<int8_t>(n, 0)};
  nines.b[0] = 1;
  auto add = tasks::make_arithmetic_task("addition", n);
  add.operand_order = DigitOrder::kLsbFirst;  // answer lsb first (the default)
  const auto sum = tasks::encode_digits(add, nines);
  ASSERT_EQ(sum.size(), static_cast<size_t>(3 * n + 3));
  std::vector<int64_t> expected(n + 1, 0);
  expected[n] = 1;
  EXPECT_EQ(std::vector<int64_t>(sum.end() - (n + 1), sum.end()), expected);

  auto mul = tasks::make_arithmetic_task("multiplication", n);
  const DigitProblem square{std::vector<int8_t>(n, 9), std::vector<int8_t>(n, 9)};
  const auto product = tasks::encode_digits(mul, square);
  ASSERT_EQ(product.size(), static_cast<size_t>(4 * n + 2));
  std::vector<int64_t> digits(2 * n, 0);  // lsb first: 1, 0 × (n − 1), 8, 9 × (n − 1)
  digits[0] = 1;
  digits[n] = 8;
  for (int i = n + 1; i < 2 * n; ++i) digits[i] = 9;
  EXPECT_EQ(std::vector<int64_t>(product.end() - 2 * n, product.end()), digits);
  EXPECT_NE(input_error([] { tasks::make_arithmetic_task("addition", 0); }).find("digits"),
            std::string::npos);
}

TEST(DigitProblems, SplitsAreDisjointSeededAndCapped) {
  for (int digits : {2, 6}) {
    const auto task = tasks::make_arithmetic_task("addition", digits);
    const auto split = tasks::sample_digit_problems(task, 300, 200, 7);
    ASSERT_EQ(split.train.size(), 300u);
    ASSERT_EQ(split.test.size(), 200u);
    std::set<std::vector<int8_t>> train;
    for (const auto& p : split.train) {
      auto key = p.a;
      key.insert(key.end(), p.b.begin(), p.b.end());
      EXPECT_TRUE(train.insert(key).second);  // no repeats
    }
    for (const auto& p : split.test) {
      auto key = p.a;
      key.insert(key.end(), p.b.begin(), p.b.end());
      EXPECT_FALSE(train.contains(key));
    }
    const auto again = tasks::sample_digit_problems(task, 300, 200, 7);
    EXPECT_EQ(again.test.back().a, split.test.back().a);
  }
  // One digit: 100 problems in all; training takes 80, the test set the 20 left.
  const auto one =
      tasks::sample_digit_problems(tasks::make_arithmetic_task("addition", 1), 80, 1000, 0);
  EXPECT_EQ(one.train.size(), 80u);
  EXPECT_EQ(one.test.size(), 20u);
}

training::TrainConfig sized_config(const std::string& init) {
  training::TrainConfig config = testing::tiny_train_config();
  config.task = "addition";
  config.init = init;
  config.digits = "1..3";
  config.test_digits = "2..5";
  config.train_size = 300;
  config.test_size = 40;
  config.operand_order = "lsb";
  config.spec =
      init == "vanilla" ? "" : std::string(MASKPRIOR_SOURCE_DIR) + "/specs/arith/addition.mask";
  config.mask_param = "rules";
  config.pos_embedding = "sinusoidal";
  config.optimizer = "adamw";
  config.lr = 1e-3;
  config.epochs = 2;
  config.batch_size = 64;
  config.probe_size = 16;
  return config;
}

TEST(SizedExperiment, GroupsRowsBySize) {
  const auto experiment =
      runtime::make_arithmetic_experiment(training::experiment_config(sized_config("vanilla")));
  const auto groups = experiment->size_groups();
  ASSERT_EQ(groups.size(), 5u);  // 1..5 digits
  std::vector<int64_t> train_rows, test_rows, tokens;
  for (const auto& g : groups) {
    train_rows.push_back(g.train_rows);
    test_rows.push_back(g.test_rows);
    tokens.push_back(g.layout.size());
  }
  // 1 digit: 100 problems, all trained (nothing left to test); 2 digits: 300 of 10,000.
  EXPECT_EQ(train_rows, (std::vector<int64_t>{100, 300, 300, 0, 0}));
  EXPECT_EQ(test_rows, (std::vector<int64_t>{0, 40, 40, 40, 40}));
  EXPECT_EQ(tokens, (std::vector<int64_t>{6, 9, 12, 15, 18}));
  EXPECT_EQ(experiment->train_size(), 700);
  EXPECT_EQ(experiment->layout().size(), 12);  // the longest trained size
  EXPECT_EQ(experiment->model_config(training::experiment_config(sized_config("vanilla"))).seq_len,
            18);
  const auto batch = experiment->train_batch(torch::tensor(std::vector<int64_t>{100, 399, 250}));
  EXPECT_EQ(batch.inputs.sizes(), (std::vector<int64_t>{3, 9}));
  EXPECT_EQ(batch.targets.sizes(), (std::vector<int64_t>{3, 3}));
  EXPECT_THROW(experiment->train_batch(torch::tensor(std::vector<int64_t>{99, 100})),
               InternalError);
}

TEST(EpochBatches, OneGroupIsTheEpochOrderAndGroupsStayApart) {
  const auto one = training::epoch_batches(5, 2, {10}, 4);
  EXPECT_EQ(one.order, training::epoch_order(5, 2, 10));
  EXPECT_EQ(one.batches, (std::vector<std::pair<int64_t, int64_t>>{{0, 4}, {4, 4}, {8, 2}}));
  const std::vector<int64_t> groups = {5, 0, 9};
  const auto several = training::epoch_batches(5, 2, groups, 4);
  EXPECT_EQ(training::batches_per_epoch(groups, 4), 5);
  ASSERT_EQ(several.batches.size(), 5u);
  std::multiset<int64_t> seen;
  for (const auto& [first, count] : several.batches) {
    const auto begin = several.order.begin() + first;
    const bool low = *begin < 5;
    for (auto it = begin; it != begin + count; ++it) {
      EXPECT_EQ(*it < 5, low);  // one size per batch
      seen.insert(*it);
    }
  }
  EXPECT_EQ(seen.size(), 14u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 14u);
  EXPECT_EQ(training::epoch_batches(5, 2, groups, 4).batches, several.batches);
  EXPECT_NE(training::epoch_batches(5, 3, groups, 4).order, several.order);
}

TEST(SizedTraining, ReportsAccuracyPerSizeWithAPriorAtEach) {
  for (const char* init : {"vanilla", "mask-fixed", "mask"}) {
    auto config = sized_config(init);
    const std::filesystem::path out =
        std::filesystem::path(::testing::TempDir()) / (std::string("sized-") + init);
    std::filesystem::remove_all(out);
    config.out = out.string();
    const json summary = training::train(config);
    ASSERT_TRUE(summary.contains("by_length")) << init;
    const json& by_length = summary["by_length"];
    for (const char* size : {"2", "3", "4", "5"}) {
      ASSERT_TRUE(by_length.contains(size)) << init << " " << size;
      const double accuracy = by_length[size]["sequence_accuracy"].get<double>();
      EXPECT_TRUE(accuracy >= 0 && accuracy <= 1);
      EXPECT_EQ(by_length[size]["test_size"], 40);
    }
    EXPECT_FALSE(by_length.contains("1"));  // nothing left to test at one digit
    EXPECT_EQ(by_length["5"]["tokens"], 18);
    EXPECT_EQ(summary["test_size"], 160);
    if (std::string(init) == "mask") {
      // One learned value per rule (and layer and head): the rules of specs/arith/addition.mask.
      const json& rules = summary["learned_rules"];
      ASSERT_GE(rules.size(), 4u);
      bool moved = false;
      for (const json& rule : rules) {
        ASSERT_EQ(rule["learned"].size(), 1u);  // the spec has one layer and one head
        const double learned = rule["learned"][0][0].get<double>();
        moved = moved || std::abs(learned - rule["written"].get<double>()) > 1e-6;
      }
      EXPECT_TRUE(moved);
      EXPECT_TRUE(summary.contains("mask_drift"));
    } else {
      EXPECT_FALSE(summary.contains("learned_rules"));
    }
  }
}

TEST(SizedTraining, RefusesWhatCannotRunAtSeveralSizes) {
  auto cells = sized_config("mask");
  cells.mask_param = "cells";
  EXPECT_NE(input_error([&] { training::train(cells); }).find("--mask-param rules"),
            std::string::npos);
  auto learned = sized_config("vanilla");
  learned.pos_embedding = "learned";
  EXPECT_NE(input_error([&] { training::train(learned); }).find("no trained row for positions"),
            std::string::npos);
  learned.test_digits = "1..3";  // tested only where trained: learned positions serve
  learned.epochs = 0;
  EXPECT_NO_THROW(training::train(learned));
  auto qk = sized_config("qk-svd");
  EXPECT_NE(input_error([&] { training::train(qk); }).find("one sequence length"),
            std::string::npos);
  auto fixed = sized_config("mask-fixed");
  fixed.defines["n"] = "3";
  EXPECT_NE(input_error([&] { training::train(fixed); }).find("-D n=3"), std::string::npos);
}

TEST(SizedTraining, OneLongSizeCompilesTheSpecAtIt) {
  auto config = sized_config("mask-fixed");
  config.digits = "6";
  config.test_digits = "";
  config.epochs = 0;
  const json summary = training::train(config);
  EXPECT_FALSE(summary.contains("by_length"));
  EXPECT_EQ(summary["data_info"]["digits"], json::array({6}));
}

/// A folder with a reversal data set: TRAIN lines `x[n] | y[n]` (y = x reversed) of 1..5
/// digits, TEST lines of 4 (trained), 8 and 12 (never trained) digits, and the spec
/// `param n = 3; tokens x[n], sep, y[n]` whose prior opens, for the row that predicts y[i], x's
/// token n - 1 - i.
std::filesystem::path reversal_folder() {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "reversal";
  std::filesystem::create_directories(dir);
  std::mt19937_64 engine(7);
  auto line = [&](int n) {
    std::vector<std::string> x;
    for (int i = 0; i < n; ++i) x.push_back(std::to_string(engine() % 10));
    std::string text;
    for (const auto& d : x) text += d + " ";
    text += "|";
    for (auto d = x.rbegin(); d != x.rend(); ++d) text += " " + *d;
    return text + "\n";
  };
  std::ofstream train(dir / "train.txt"), test(dir / "test.txt");
  for (int k = 0; k < 600; ++k) train << line(1 + k % 5);
  for (int n : {4, 8, 12}) {
    for (int k = 0; k < 40; ++k) test << line(n);
  }
  std::ofstream(dir / "reversal.mask") << "mask reversal\nparam n = 3\ntokens x[n], sep, y[n]\n"
                                          "scale open = 5, close = -5\ndefault close\n"
                                          "hard causal\nopen diagonal\n"
                                          "for i in 0..n { open before y[i] -> x[n - 1 - i] }\n";
  return dir;
}

training::TrainConfig reversal_config(const std::filesystem::path& dir, const std::string& init) {
  auto config = sized_config(init);
  const training::TrainConfig defaults;
  config.task = "";
  config.digits = defaults.digits;
  config.test_digits = defaults.test_digits;
  config.train_size = defaults.train_size;
  config.test_size = defaults.test_size;
  config.operand_order = defaults.operand_order;
  config.data = (dir / "train.txt").string();
  config.test_data = (dir / "test.txt").string();
  config.predict = "y";
  config.spec = (dir / "reversal.mask").string();
  config.pos_embedding = "none";
  config.steps = 300;
  config.epochs = 0;
  config.batch_size = 32;
  return config;
}

// maskc distill of a run over several sizes: --from mask writes each rule back as open or close
// by its learned value, a spec that still compiles at every size; a fixed prior's spec is the
// run's own; --from attention reads the model with its priors at the longest trained size.
TEST(SizedTraining, DistillWritesTheRulesBackAsAProgram) {
  auto config = sized_config("mask");
  config.spec = std::string(MASKPRIOR_SOURCE_DIR) + "/specs/arith/addition_local.mask";
  config.heads = 4;
  const auto out = std::filesystem::path(::testing::TempDir()) / "sized-distill";
  std::filesystem::remove_all(out);
  config.out = out.string();
  training::train(config);
  training::DistillOptions options;
  options.from = "mask";
  const std::string spec = training::distill_run(out.string(), options).spec;
  EXPECT_NE(spec.find("--from mask`"), std::string::npos) << spec;
  EXPECT_NE(spec.find("at n = 3"), std::string::npos) << spec;  // the longest trained size
  EXPECT_NE(spec.find("head 1 { open align a, b -> before c lag 1 }  # learned"), std::string::npos)
      << spec;
  EXPECT_NE(spec.find("default close  # learned"), std::string::npos) << spec;
  for (const char* n : {"3", "12"}) {
    CompileOptions at;
    at.defines["n"] = n;
    EXPECT_NO_THROW(compile_source(spec, "distilled", at)) << n;
  }
  options.from = "attention";
  const auto attention = training::distill_run(out.string(), options);
  EXPECT_NE(attention.spec.find("tokens a[3], plus, b[3], eq, c[4]"), std::string::npos)
      << attention.spec;
  auto fixed = sized_config("mask-fixed");
  const auto fixed_out = std::filesystem::path(::testing::TempDir()) / "sized-distill-fixed";
  std::filesystem::remove_all(fixed_out);
  fixed.out = fixed_out.string();
  fixed.epochs = 0;
  training::train(fixed);
  options.from = "mask";
  EXPECT_NE(input_error([&] {
              training::distill_run(fixed_out.string(), options);
            }).find("spec.mask is that spec"),
            std::string::npos);
}

TEST(SizedData, LengthsAndLinesOfOneLength) {
  const auto dir = reversal_folder();
  const auto lengths = tasks::sequence_lengths((dir / "test.txt").string());
  ASSERT_EQ(lengths.size(), 3u);
  EXPECT_EQ(lengths.begin()->first, 9);  // 4 + 1 + 4 symbols, first on line 1
  EXPECT_EQ(lengths.begin()->second, 1);
  EXPECT_EQ(lengths.rbegin()->first, 25);
  EXPECT_EQ(lengths.rbegin()->second, 81);
  Layout layout;
  for (const auto& [name, offset, length] : {std::tuple{"x", 0, 8}, {"sep", 8, 1}, {"y", 9, 8}}) {
    Span span;
    span.name = name;
    span.offset = offset;
    span.length = length;
    layout.spans.push_back(span);
  }
  const auto eight = tasks::read_sequence_file((dir / "test.txt").string(), layout,
                                               tasks::kMaxSequenceFileBytes, true);
  EXPECT_EQ(eight.examples(), 40);
  EXPECT_EQ(eight.lines.front(), 41);
  EXPECT_THROW(tasks::read_sequence_file((dir / "test.txt").string(), layout), SpecError);
}

// A data file of several lengths, a spec with `param n`: each length is a size, tested at lengths
// never trained, and the learnable prior tied to the spec's rules carries reversal to them.
TEST(SizedData, TrainsOnSeveralLengthsAndTestsLongerOnes) {
  const auto dir = reversal_folder();
  auto config = reversal_config(dir, "mask");
  config.out = (dir / "run").string();
  std::filesystem::remove_all(config.out);
  const json summary = training::train(config);
  const json& by_length = summary.at("by_length");
  ASSERT_EQ(by_length.size(), 3u) << by_length.dump();
  EXPECT_GT(by_length["4"]["train_size"].get<int>(), 0);
  for (const char* n : {"8", "12"}) {
    EXPECT_EQ(by_length[n]["train_size"], 0) << n;
    EXPECT_EQ(by_length[n]["test_size"], 40) << n;
    EXPECT_GE(by_length[n]["sequence_accuracy"].get<double>(), 0.9) << by_length.dump();
  }
  EXPECT_EQ(by_length["12"]["tokens"], 25);
  const json vocab = read_json_file((std::filesystem::path(config.out) / "vocab.json").string());
  EXPECT_EQ(vocab["sizes"].size(), 7u);  // 1..5 trained, 8 and 12 tested (4 both)
}

TEST(SizedData, RefusesLinesNoSizeFits) {
  const auto dir = reversal_folder();
  auto config = reversal_config(dir, "mask");
  std::ofstream(dir / "even.txt") << "1 2 | 2 1\n3 4 | 4 3 9\n";
  config.test_data = (dir / "even.txt").string();
  EXPECT_NE(input_error([&] { training::train(config); }).find("no value of `param n`"),
            std::string::npos);
  config.test_data = (dir / "test.txt").string();
  config.pos_embedding = "learned";
  EXPECT_NE(input_error([&] { training::train(config); }).find("no trained row"),
            std::string::npos);
  std::ofstream(dir / "fixed.mask") << "mask fixed\ntokens x[3], sep, y[3]\ndefault close\n";
  config.pos_embedding = "none";
  config.spec = (dir / "fixed.mask").string();
  try {  // the data file's reader points at the first line of another length
    training::train(config);
    ADD_FAILURE() << "trained with lines the spec has no size for";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("found 3 symbols; expected 7"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("`param n`"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace maskprior
