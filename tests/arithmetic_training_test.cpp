// Tests of the arithmetic experiments (docs/arithmetic.md): sequences and batches, presets, a short
// run that beats chance, and every init method on both tasks: what it puts in the model at step 0,
// that the model then learns, and what train() reports. The decoder they train and evaluate (answer
// loss, greedy decoding, metrics) is tested in tests/decoder_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "core/error.h"
#include "io/mask_file.h"
#include "runtime/arithmetic_experiment.h"
#include "runtime/experiment.h"
#include "runtime/init.h"
#include "runtime/metrics.h"
#include "runtime/model.h"
#include "tasks/arithmetic_task.h"
#include "tests/test_util.h"
#include "tests/train_fixture.h"
#include "train/presets.h"
#include "train/run_experiment.h"
#include "train/run_spec.h"
#include "train/train.h"
#include "validate/validate.h"

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

using maskprior::testing::input_error;
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
  TrainConfig config = maskprior::testing::tiny_train_config();
  config.task = task;
  config.init = init;
  config.spec = init == "vanilla" || init == "mimetic" || init == "mask-zero"
                    ? ""
                    : spec_path(task + ".mask");
  config.train_fraction = 0.0005;
  config.test_size = 200;
  config.optimizer = "adamw";
  config.lr = 1e-3;
  config.epochs = 1;
  config.batch_size = 128;
  config.qk_opt_steps = 20;
  return config;
}

/// Every init that a task without a grid can take (impulse needs a patch grid).
std::vector<std::string> sequence_inits() {
  std::vector<std::string> names;
  for (const auto& name : init_method_names()) {
    if (!init_requires_grid(parse_init_method(name))) names.push_back(name);
  }
  return names;
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

  // The probe is the same batch every time, of whole problems with their answers.
  const auto probe = experiment->probe_inputs(32);
  EXPECT_TRUE(torch::equal(probe, experiment->probe_inputs(32)));
  ASSERT_EQ(probe.sizes(), (std::vector<int64_t>{32, 12}));
  for (int64_t i = 0; i < probe.size(0); ++i) {
    const std::vector<int64_t> tokens = row(probe[i]);
    const int64_t a = tokens[0] * 100 + tokens[1] * 10 + tokens[2];
    const int64_t b = tokens[4] * 100 + tokens[5] * 10 + tokens[6];
    EXPECT_EQ(task.encode(a * 1000 + b), tokens) << "probe row " << i;
  }
  EXPECT_GT(std::get<0>(torch::_unique(probe.select(1, 0))).size(0), 1);  // not one problem
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

/// The text of a shipped arithmetic spec with its `digits` declarations of a and b set to
/// `operands` and of c to `answer` (lsb_first or msb_first), as a user would write them by hand.
std::string with_digits(const std::string& text, const std::string& operands,
                        const std::string& answer) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("digits a ")) line = "digits a " + operands;
    if (line.starts_with("digits b ")) line = "digits b " + operands;
    if (line.starts_with("digits c ")) line = "digits c " + answer;
    out += line + "\n";
  }
  return out;
}

// The compiler's digit-order override (what a run passes for --operand-order, --answer-order) is
// hand-writing the declarations: every cell, its provenance, the hard mask and the layout agree,
// for every shipped arithmetic spec and every pair of orders; and each non-default order moves
// cells (the shapes follow digit places).
TEST(ArithDigitOrders, OverrideEqualsHandWrittenDeclarations) {
  for (const std::string name : {"addition", "addition_nocarry", "multiplication",
                                 "multiplication_nocarry", "multiplication_heads"}) {
    std::ifstream file(spec_path(name + ".mask"));
    const std::string text((std::istreambuf_iterator<char>(file)), {});
    ASSERT_NE(text.find("digits c lsb_first"), std::string::npos) << name;
    const CompiledMask shipped = compile_file(spec_path(name + ".mask"));
    for (const auto operands : {DigitOrder::kMsbFirst, DigitOrder::kLsbFirst}) {
      for (const auto answer : {DigitOrder::kLsbFirst, DigitOrder::kMsbFirst}) {
        CompileOptions options;
        options.digit_orders = {{"a", operands}, {"b", operands}, {"c", answer}};
        const CompiledMask overridden = compile_file(spec_path(name + ".mask"), options);
        const CompiledMask by_hand = compile_source(
            with_digits(text, digit_order_keyword(operands), digit_order_keyword(answer)),
            name + ".mask");
        const std::string what = fmt::format(
            "{} a, b {}, c {}", name, digit_order_keyword(operands), digit_order_keyword(answer));
        EXPECT_EQ(overridden.mask, by_hand.mask) << what;
        EXPECT_EQ(overridden.provenance, by_hand.provenance) << what;
        EXPECT_EQ(overridden.hard, by_hand.hard) << what;
        for (const std::string span : {"a", "b", "c"}) {
          EXPECT_EQ(overridden.layout.find(span)->digits, by_hand.layout.find(span)->digits)
              << what << " " << span;
        }
        EXPECT_EQ(overridden.layout.find("c")->digits, answer) << what;
        const bool defaults = operands == DigitOrder::kMsbFirst && answer == DigitOrder::kLsbFirst;
        EXPECT_EQ(overridden.mask == shipped.mask, defaults) << what;
      }
    }
  }
  CompileOptions unknown;
  unknown.digit_orders = {{"d", DigitOrder::kMsbFirst}};
  const std::string message =
      input_error([&] { compile_file(spec_path("addition.mask"), unknown); });
  EXPECT_NE(message.find("unknown span 'd'"), std::string::npos) << message;
  EXPECT_NE(message.find("a[3], plus, b[3], eq, c[4]"), std::string::npos) << message;
}

// The shipped specs describe the data in every order once their digits follow it: `maskc validate`
// (which reads the data's orders from the spec's `digits`) finds every answer digit's inputs
// reachable, and still finds the carries missing from addition_nocarry. A mask of one order
// checked against data of the other is not enough: the cells really move with the order.
TEST(ArithDigitOrders, ShippedSpecsValidateUnderEveryOrder) {
  using Orders = std::pair<DigitOrder, DigitOrder>;                    // operands, answer
  const Orders msb_lsb{DigitOrder::kMsbFirst, DigitOrder::kLsbFirst};  // the defaults
  const Orders msb_msb{DigitOrder::kMsbFirst, DigitOrder::kMsbFirst};
  const Orders lsb_lsb{DigitOrder::kLsbFirst, DigitOrder::kLsbFirst};
  const Orders lsb_msb{DigitOrder::kLsbFirst, DigitOrder::kMsbFirst};
  // Every order for addition; the most different one for the others (multiplication's 10^6
  // products take a second each to check).
  const std::vector<std::pair<std::string, Orders>> cases = {
      {"addition", msb_lsb}, {"addition", msb_msb},         {"addition", lsb_lsb},
      {"addition", lsb_msb}, {"addition_nocarry", lsb_msb}, {"multiplication", lsb_msb}};
  for (const auto& [name, orders] : cases) {
    const std::string task = name == "multiplication" ? "multiplication" : "addition";
    CompileOptions options;
    options.provenance = false;
    options.digit_orders = {{"a", orders.first}, {"b", orders.first}, {"c", orders.second}};
    CompiledMask mask = compile_file(spec_path(name + ".mask"), options);
    const std::string what =
        fmt::format("{} a, b {}, c {}", name, digit_order_keyword(orders.first),
                    digit_order_keyword(orders.second));
    const auto report = validate::validate_target(mask, validate::task_target(mask, task));
    EXPECT_EQ(report.ok(), name != "addition_nocarry") << what;
    if (name != "addition" || orders.second == DigitOrder::kLsbFirst) continue;
    // The msb-answer mask against lsb-answer data: the carry rows are in the wrong places.
    for (auto& span : mask.layout.spans) {
      if (span.name == "c") span.digits = DigitOrder::kLsbFirst;
    }
    EXPECT_FALSE(validate::validate_target(mask, validate::task_target(mask, task)).ok())
        << what << " checked as lsb";
  }
  CompiledMask mixed = compile_file(spec_path("addition.mask"));
  mixed.layout.spans[0].digits = DigitOrder::kLsbFirst;  // a lsb_first, b msb_first
  EXPECT_NE(input_error([&] {
              validate::task_target(mixed, "addition");
            }).find("declares `digits a lsb_first` but `digits b msb_first`"),
            std::string::npos);
}

// --answer-order, --operand-order: the experiment's sequences follow them, the loss's targets are
// the answer tokens as written, and decode_answer reads them back.
TEST(ArithmeticExperiment, EncodesTheSettingsDigitOrders) {
  TrainConfig config = tiny_config("addition", "vanilla");
  config.operand_order = "lsb";
  config.answer_order = "msb";
  const auto settings = training::experiment_config(config);
  const auto task = arithmetic_task(settings);
  EXPECT_EQ(
      row(arithmetic_ids(task, {123 * 1000 + 456})),
      (std::vector<int64_t>{3, 2, 1, tasks::kTokenPlus, 6, 5, 4, tasks::kTokenEquals, 0, 5, 7, 9}));
  auto experiment = make_arithmetic_experiment(settings);
  const auto batch = experiment->train_batch(torch::arange(3, torch::kLong));
  const auto split = tasks::split_problems(task, config.train_fraction, config.test_size, 0);
  EXPECT_TRUE(torch::equal(batch.inputs,
                           arithmetic_ids(task, {split.train[0], split.train[1], split.train[2]})));
  for (int64_t i = 0; i < 3; ++i) {
    const auto [a, b] = task.operands(split.train[static_cast<size_t>(i)]);
    EXPECT_EQ(task.decode_answer(row(batch.targets[i])), a + b);
  }
  config.answer_order = "middle";
  EXPECT_THROW(make_arithmetic_experiment(training::experiment_config(config)), InputError);
}

// The settings are the arithmetic family's (loss_rows also sequence-data's): any other family
// refuses a value other than the default, naming the setting, the families and the run's family.
TEST(ArithDigitOrders, OtherFamiliesRefuseTheSettings) {
  const std::string order = input_error([] {
    resolve_config("parity2", "", {{"answer_order", "msb"}});
  });
  for (const char* part : {"answer_order", "--answer-order", "arithmetic family", "task parity2",
                           "boolean family", "\"lsb\""}) {
    EXPECT_NE(order.find(part), std::string::npos) << part << " in " << order;
  }
  const std::string rows = input_error([] {
    resolve_config("fortunes-char", "", {{"loss_rows", "all"}});
  });
  for (const char* part : {"loss_rows", "arithmetic, sequence-data families", "language family"}) {
    EXPECT_NE(rows.find(part), std::string::npos) << part << " in " << rows;
  }
  EXPECT_NO_THROW(resolve_config(
      "addition", "", {{"loss_rows", "all"}, {"operand_order", "lsb"}, {"answer_order", "msb"}}));
  EXPECT_NO_THROW(resolve_config(
      "", "", {{"data", "d.txt"}, {"predict", "y"}, {"spec", "s.mask"}, {"loss_rows", "all"}}));
  EXPECT_NE(
      input_error([] {
        resolve_config(
            "", "",
            {{"data", "d.txt"}, {"predict", "y"}, {"spec", "s.mask"}, {"operand_order", "lsb"}});
      }).find("sequence-data family"),
      std::string::npos);
  // The defaults are every family's.
  EXPECT_NO_THROW(
      resolve_config("parity2", "", {{"loss_rows", "answer"}, {"answer_order", "lsb"}}));
}

// A report's data column names the settings that differ from the defaults, and only those.
TEST(ArithDigitOrders, ReportsDescribeTheOrders) {
  const auto* family = tasks::find_family("arithmetic");
  ASSERT_NE(family, nullptr);
  EXPECT_EQ(family->describe_data({{"train_fraction", 0.004}}), "0.4% of problems");
  EXPECT_EQ(family->describe_data(to_json(resolve_config("addition", "", json::object()))),
            "0.4% of problems");
  EXPECT_EQ(family->describe_data({{"train_fraction", 0.004},
                                   {"operand_order", "lsb"},
                                   {"answer_order", "msb"},
                                   {"loss_rows", "all"}}),
            "0.4% of problems, operand_order lsb, answer_order msb, loss_rows all");
}

// A compiled mask file cannot be recompiled: a run whose digit orders differ from the file's
// refuses it, naming both; the .mask itself is compiled with the run's orders.
TEST(ArithDigitOrders, RunCompilesTheSpecWithItsOrders) {
  TrainConfig config = tiny_config("addition", "mask");
  config.answer_order = "msb";
  const CompiledMask spec = training::load_spec(config);
  EXPECT_EQ(spec.layout.find("c")->digits, DigitOrder::kMsbFirst);
  EXPECT_EQ(spec.layout.find("a")->digits, DigitOrder::kMsbFirst);
  CompileOptions msb;
  msb.digit_orders = {{"c", DigitOrder::kMsbFirst}};
  EXPECT_EQ(spec.mask, compile_file(spec_path("addition.mask"), msb).mask);

  const auto dir = maskprior::testing::unique_temp_dir("maskprior_arith_orders");
  config.spec = (dir / "addition.safetensors").string();
  write_mask_file(compile_file(spec_path("addition.mask")), config.spec);
  const std::string message = input_error([&] { training::load_spec(config); });
  std::filesystem::remove_all(dir);
  for (const char* part : {"addition.safetensors", "`digits c lsb_first`", "answer_order msb",
                           "--digits c=msb_first"}) {
    EXPECT_NE(message.find(part), std::string::npos) << part << " in " << message;
  }
}

TEST(ArithmeticPresets, QuickAndPaperResolve) {
  const auto paper = resolve_config("multiplication", kPresetPaper, json::object());
  EXPECT_EQ(paper.depth, 6);
  EXPECT_EQ(paper.heads, 4);
  EXPECT_EQ(paper.dim, 256);
  EXPECT_EQ(paper.optimizer, "adamw");
  EXPECT_EQ(paper.schedule, "cosine");
  EXPECT_EQ(paper.epochs, 50);
  const auto quick = resolve_config("addition", kPresetQuick, {{"train_fraction", 0.01}});
  EXPECT_DOUBLE_EQ(quick.train_fraction, 0.01);  // flags override the preset
  // Both presets train on the paper's share of problems for the task.
  EXPECT_DOUBLE_EQ(tasks::paper_train_fraction("addition"), 0.004);
  EXPECT_DOUBLE_EQ(tasks::paper_train_fraction("multiplication"), 0.03);
  for (const std::string task : {"addition", "multiplication"}) {
    for (const std::string preset : {kPresetQuick, kPresetPaper}) {
      EXPECT_EQ(resolve_config(task, preset, json::object()).train_fraction,
                tasks::paper_train_fraction(task))
          << task << " " << preset;
    }
  }
  EXPECT_THROW(tasks::paper_train_fraction("subtraction"), InputError);
  EXPECT_THROW(training::task_preset("addition", "huge"), InputError);
  EXPECT_THROW(training::task_preset("subtraction", kPresetQuick), InputError);
}

/// A short addition run: a 64-wide model, 6 epochs over 0.4% of the problems, evaluated at the end.
TrainConfig short_addition_config() {
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
  return config;
}

TEST(ArithmeticTraining, ShortRunBeatsChanceOnDigits) {
  const auto summary = train(short_addition_config());
  // Chance is 10% per digit; the leading digit of a sum alone (0 or 1) lifts a fitted model well
  // above that.
  EXPECT_GT(summary["digit_accuracy"].get<double>(), 0.3) << summary.dump(2);
  EXPECT_LT(summary["test_loss"].get<double>(), std::log(10.0)) << summary.dump(2);
}

// --precision bf16: the same short run learns as well under bfloat16 autocast.
TEST(ArithmeticTraining, ShortBfloat16RunBeatsChanceOnDigits) {
  TrainConfig config = short_addition_config();
  config.precision = "bf16";
  const auto summary = train(config);
  EXPECT_GT(summary["digit_accuracy"].get<double>(), 0.3) << summary.dump(2);
  EXPECT_LT(summary["test_loss"].get<double>(), std::log(10.0)) << summary.dump(2);
}

/// A model of `config` initialised as train() does it (same seed, probe and init options), on CPU.
struct Initialised {
  std::unique_ptr<Experiment> experiment;
  std::optional<CompiledMask> spec;
  MaskedTransformer model{nullptr};
  torch::Tensor probe;
};

Initialised initialise(const TrainConfig& config) {
  torch::set_num_threads(config.threads);
  Initialised run;
  run.experiment = training::make_run_experiment(config, std::nullopt);
  if (!config.spec.empty()) run.spec = compile_file(config.spec);
  torch::manual_seed(config.seed);
  run.model = MaskedTransformer(run.experiment->model_config(training::experiment_config(config)));
  run.probe = run.experiment->probe_inputs(config.probe_size);
  InitOptions options;
  options.seed = config.seed;
  options.qk_contrast = config.qk_contrast;
  options.qk_opt_steps = config.qk_opt_steps;
  options.qk_opt_lr = config.qk_opt_lr;
  options.probe_ids = run.probe;
  apply_init(run.model, parse_init_method(config.init), run.spec ? &*run.spec : nullptr, options);
  return run;
}

/// Layer 0's attention mass on the spec's open cells over the probe batch.
double prior_mass_at_layer0(Initialised& run, const CompiledMask& spec) {
  const auto metrics = persistence_metrics(run.model, run.probe, open_cells(spec));
  return metrics["prior_mass"][0].get<double>();
}

/// Cosine similarity of left · rightᵀ ([dim, dim]; left, right [r, dim]) with the identity.
double identity_cosine(const torch::Tensor& left, const torch::Tensor& right) {
  const auto product = left.t().matmul(right).to(torch::kDouble);
  const auto eye = torch::eye(product.size(0), torch::kDouble);
  return ((product * eye).sum() / (product.norm() * eye.norm())).item<double>();
}

/// Head 0 of block 0: Wq Wkᵀ and Wv Wo as cosines with the identity (mimetic's targets).
std::pair<double, double> head0_identity_cosines(MaskedTransformer& model) {
  auto& block = model->blocks()[0];
  const int64_t r = model->config().head_dim;
  return {
      identity_cosine(block->wq->weight.narrow(0, 0, r), block->wk->weight.narrow(0, 0, r)),
      identity_cosine(block->wv->weight.narrow(0, 0, r), block->wo->weight.narrow(1, 0, r).t())};
}

bool same_weight(const torch::nn::Linear& a, const torch::nn::Linear& b) {
  return torch::equal(a->weight, b->weight);
}

class EveryInit : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

// At step 0 the model holds what its init promises: the spec's M and hard mask (mask inits), the
// spec's pattern in the attention (qk inits), mimetic's identity-like products, and otherwise the
// default weights of the seed.
TEST_P(EveryInit, StartsFromItsPrior) {
  const auto& [task, init] = GetParam();
  const TrainConfig config = tiny_config(task, init);
  const auto method = parse_init_method(init);
  Initialised run = initialise(config);
  Initialised vanilla = initialise(tiny_config(task, "vanilla"));
  const CompiledMask spec = compile_file(spec_path(task + ".mask"));

  ASSERT_EQ(run.model->has_mask(), init_uses_mask(method));
  if (method == InitMethod::kMask || method == InitMethod::kMaskFixed) {
    EXPECT_TRUE(torch::equal(run.model->mask(), mask_tensor(spec)));
    EXPECT_EQ(run.model->mask_learnable(), method == InitMethod::kMask);
    ASSERT_TRUE(run.model->hard_mask().defined());  // the arithmetic specs are `hard causal`
    EXPECT_TRUE(torch::equal(run.model->hard_mask(), hard_tensor(spec)));
  } else if (method == InitMethod::kMaskZero) {  // no spec here: one [1, 1, N, N] zero M
    const int64_t n = run.model->config().seq_len;
    EXPECT_EQ(run.model->mask().sizes(), (std::vector<int64_t>{1, 1, n, n}));
    EXPECT_EQ(run.model->mask().abs().max().item<float>(), 0.0f);
    EXPECT_TRUE(run.model->mask_learnable());
  } else {
    EXPECT_FALSE(run.model->hard_mask().defined());  // only mask inits install a hard mask
  }

  const double mass = prior_mass_at_layer0(run, spec);
  const double vanilla_mass = prior_mass_at_layer0(vanilla, spec);
  if (init_requires_spec(method)) {  // mask, mask-fixed, qk-svd, qk-opt: the prior is in place
    EXPECT_GT(mass, 0.9);
    EXPECT_GT(mass, vanilla_mass + 0.3);
  } else if (method != InitMethod::kMimetic) {  // vanilla, mask-zero: log σ(0) shifts evenly
    EXPECT_NEAR(mass, vanilla_mass, 1e-6);
  }

  auto& block = run.model->blocks()[0];
  auto& vanilla_block = vanilla.model->blocks()[0];
  const bool qk = method == InitMethod::kQkSvd || method == InitMethod::kQkOpt;
  const bool mimetic = method == InitMethod::kMimetic;
  EXPECT_EQ(same_weight(block->wq, vanilla_block->wq), !qk && !mimetic);
  EXPECT_EQ(same_weight(block->wk, vanilla_block->wk), !qk && !mimetic);
  EXPECT_EQ(same_weight(block->wv, vanilla_block->wv), !mimetic);
  EXPECT_EQ(same_weight(block->wo, vanilla_block->wo), !mimetic);
  if (mimetic) {  // Wq Wkᵀ ≈ 0.7 Z + 0.7 I, Wv Wo ≈ 0.4 Z − 0.4 I (rank head_dim of dim)
    const auto [qk_cosine, vo_cosine] = head0_identity_cosines(run.model);
    const auto [vanilla_qk, vanilla_vo] = head0_identity_cosines(vanilla.model);
    EXPECT_GT(qk_cosine, 0.4);
    EXPECT_LT(vo_cosine, -0.4);
    EXPECT_LT(std::abs(vanilla_qk), 0.2);
    EXPECT_LT(std::abs(vanilla_vo), 0.2);
  }
}

// Every init leaves a model that learns: the loss on a fixed batch falls well below its start.
TEST_P(EveryInit, TrainingLossFalls) {
  const auto& [task, init] = GetParam();
  Initialised run = initialise(tiny_config(task, init));
  const Batch batch = run.experiment->train_batch(torch::arange(64, torch::kLong));
  torch::optim::Adam adam(run.model->parameters(), torch::optim::AdamOptions(3e-3));
  run.model->train();
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    auto loss = run.experiment->loss(run.model->forward(batch.inputs), batch);
    adam.zero_grad();
    loss.backward();
    adam.step();
    last = loss.item<double>();
    if (step == 0) first = last;
  }
  // From about ln 13 ≈ 2.6 to 0.2–0.7 in 60 steps for every init.
  EXPECT_GT(first, 2.0);
  EXPECT_LT(last, 0.4 * first) << "first " << first;
}

// train() runs every init end to end and reports what it did.
TEST_P(EveryInit, TrainsAndReports) {
  const auto& [task, init] = GetParam();
  const auto summary = train(tiny_config(task, init));
  for (const char* key : {"sequence_accuracy", "digit_accuracy"}) {
    ASSERT_TRUE(summary.contains(key)) << key;
    EXPECT_GE(summary[key].get<double>(), 0.0);
    EXPECT_LE(summary[key].get<double>(), 1.0);
  }
  EXPECT_TRUE(std::isfinite(summary["test_loss"].get<double>()));
  EXPECT_EQ(summary["steps"].get<int64_t>(), 4);  // 500 problems in batches of 128, one epoch
  EXPECT_EQ(summary["train_size"].get<int64_t>(), 500);
  EXPECT_EQ(summary["test_size"].get<int64_t>(), 200);
  // Where the run started: each of the family's metrics at step 0, and no alias of the headline.
  for (const char* key : {"sequence_accuracy_init", "digit_accuracy_init", "test_loss_init"}) {
    EXPECT_TRUE(summary.contains(key)) << key << " in " << summary.dump(2);
  }
  EXPECT_LT(summary["sequence_accuracy_init"].get<double>(), 0.05) << summary.dump(2);
  EXPECT_FALSE(summary.contains("accuracy")) << summary.dump(2);
  const auto method = parse_init_method(init);
  ASSERT_EQ(summary.contains("mask_drift"), init_uses_mask(method)) << summary.dump(2);
  if (init_uses_mask(method)) {
    const double drift = summary["mask_drift"][0].get<double>();
    if (method == InitMethod::kMaskFixed) {
      EXPECT_EQ(drift, 0.0);  // a buffer never moves
    } else {
      EXPECT_GT(drift, 0.0);  // a learnable M moves from the first step
    }
  }
  ASSERT_EQ(summary.contains("prior_mass_init"), init_requires_spec(method)) << summary.dump(2);
  if (init_requires_spec(method)) {
    EXPECT_TRUE(summary.contains("prior_mass")) << summary.dump(2);
    EXPECT_GT(summary["prior_mass_init"][0].get<double>(), 0.9) << summary.dump(2);
  }
  const auto& info = summary["init_info"];
  if (method == InitMethod::kQkSvd) {
    EXPECT_GT(info["rank"].get<int64_t>(), 0) << info;
    EXPECT_LT(info["relative_residual"].get<double>(), 0.5) << info;
  } else if (method == InitMethod::kQkOpt) {
    EXPECT_LT(info["final_loss"].get<double>(), info["first_loss"].get<double>()) << info;
  }
  // Every init that writes Wq, Wk (qk-svd, qk-opt, mimetic here) records their scale.
  const bool writes_query_key = method == InitMethod::kQkSvd || method == InitMethod::kQkOpt ||
                                method == InitMethod::kMimetic;
  ASSERT_EQ(info.contains("wq_norm"), writes_query_key) << info;
  if (info.contains("wq_norm")) {  // one norm per layer, and the fit replaced the default weights
    for (const auto* key : {"wq_norm", "wk_norm", "wq_norm_default", "wk_norm_default"}) {
      ASSERT_EQ(info[key].size(), 2u) << key << ": " << info;  // the test's 2 layers
    }
    for (size_t l = 0; l < 2; ++l) {
      EXPECT_GT(info["wq_norm"][l].get<double>(), 0.0) << info;
      EXPECT_NE(info["wq_norm"][l].get<double>(), info["wq_norm_default"][l].get<double>()) << info;
      EXPECT_NE(info["wk_norm"][l].get<double>(), info["wk_norm_default"][l].get<double>()) << info;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BothTasks, EveryInit,
                         ::testing::Combine(::testing::Values("addition", "multiplication"),
                                            ::testing::ValuesIn(sequence_inits())),
                         [](const auto& test) {
                           auto name = std::get<0>(test.param) + "_" + std::get<1>(test.param);
                           for (auto& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace maskprior::runtime
