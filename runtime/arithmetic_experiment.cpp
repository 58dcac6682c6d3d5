#include "runtime/arithmetic_experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>

#include "core/error.h"
#include "runtime/decoder.h"
#include "tasks/random.h"

namespace maskprior::runtime {

namespace {

inline constexpr uint64_t kProbeSeed = 0xa7'1d'5eedULL;  // fixed: every run probes alike

/// Token ids [P, N] of problems given by their digits.
torch::Tensor digit_ids(const tasks::ArithmeticTask& task,
                        const std::vector<tasks::DigitProblem>& problems) {
  const int64_t n = task.sequence_length();
  std::vector<int64_t> tokens;
  tokens.reserve(problems.size() * static_cast<size_t>(n));
  for (const auto& p : problems) {
    const auto sequence = tasks::encode_digits(task, p);
    tokens.insert(tokens.end(), sequence.begin(), sequence.end());
  }
  return torch::tensor(tokens, torch::kLong).view({static_cast<int64_t>(problems.size()), n});
}

class ArithmeticExperiment : public DecoderExperiment {
 public:
  explicit ArithmeticExperiment(const ExperimentConfig& config)
      : DecoderExperiment(config),
        sizes_(tasks::parse_digit_sizes(config.digits, config.test_digits)),
        task_(arithmetic_task(config, sizes_.train.back())) {
    const int64_t per_size =
        config.train_size > 0 ? config.train_size : tasks::kDefaultProblemsPerSize;
    if (sizes_.several()) {
      std::vector<SizedData> data;
      std::vector<int> all = sizes_.train;
      all.insert(all.end(), sizes_.test.begin(), sizes_.test.end());
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
      for (int digits : all) {
        const auto task = arithmetic_task(config, digits);
        const bool trained = std::count(sizes_.train.begin(), sizes_.train.end(), digits) > 0;
        const bool tested = std::count(sizes_.test.begin(), sizes_.test.end(), digits) > 0;
        const auto split = tasks::sample_digit_problems(task, trained ? per_size : 0,
                                                        tested ? config.test_size : 0, config.seed);
        SizedData size;
        size.group.size = digits;
        size.group.layout = task.layout();
        if (!split.train.empty()) size.train_ids = digit_ids(task, split.train);
        if (!split.test.empty()) size.test_ids = digit_ids(task, split.test);
        size.answer_offset = task.answer_offset();
        size.answer_length = task.answer_digits;
        data.push_back(std::move(size));
        longest_ = std::max<int64_t>(longest_, task.sequence_length());
      }
      set_sized_data(std::move(data), "digit_accuracy");
      return;
    }
    longest_ = task_.sequence_length();
    if (task_.operand_digits > 3) {  // 10^8 problems or more: drawn, per_size of them
      const auto split =
          tasks::sample_digit_problems(task_, per_size, config.test_size, config.seed);
      set_data(digit_ids(task_, split.train), digit_ids(task_, split.test), task_.answer_offset(),
               task_.answer_digits, "digit_accuracy");
      return;
    }
    const auto split =
        tasks::split_problems(task_, config.train_fraction, config.test_size, config.seed);
    if (split.test.empty()) {
      throw InputError(fmt::format(
          "{}: no test problem left (train fraction {}, test size {}); lower --train-fraction or "
          "raise --test-size",
          config.task, config.train_fraction, config.test_size));
    }
    set_data(arithmetic_ids(task_, split.train), arithmetic_ids(task_, split.test),
             task_.answer_offset(), task_.answer_digits, "digit_accuracy");
  }

  Layout layout() const override { return task_.layout(); }

  ModelConfig model_config(const ExperimentConfig& config) const override {
    return sized_model_config(config, tasks::kArithmeticVocab, longest_, Readout::kCausalLm);
  }

  nlohmann::json data_info() const override {
    if (!sizes_.several() && task_.operand_digits == 3) return nlohmann::json::object();
    return {{"digits", sizes_.train}, {"test_digits", sizes_.test}};
  }

  int64_t length_value() const override {
    return !sizes_.several() && task_.operand_digits != 3 ? task_.operand_digits : 0;
  }

  /// Problems of the longest trained size (a run over several sizes measures its prior there).
  torch::Tensor probe_inputs(int64_t size) const override {
    std::mt19937_64 engine(kProbeSeed);
    if (task_.operand_digits > 3) {
      std::vector<tasks::DigitProblem> problems(static_cast<size_t>(size));
      for (auto& p : problems) {
        for (auto* operand : {&p.a, &p.b}) {
          operand->resize(static_cast<size_t>(task_.operand_digits));
          for (auto& d : *operand) d = static_cast<int8_t>(tasks::uniform_below(engine, 10));
        }
      }
      return digit_ids(task_, problems);
    }
    std::vector<int64_t> problems(static_cast<size_t>(size));
    for (auto& p : problems) {
      p = static_cast<int64_t>(
          tasks::uniform_below(engine, static_cast<uint64_t>(task_.problems())));
    }
    return arithmetic_ids(task_, problems);
  }

 private:
  tasks::DigitSizes sizes_;
  tasks::ArithmeticTask task_;  // at the longest trained size
  int64_t longest_ = 0;         // tokens of the longest sequence, trained or tested
};

}  // namespace

tasks::ArithmeticTask arithmetic_task(const ExperimentSettings& settings, int digits) {
  auto task = tasks::make_arithmetic_task(settings.task, digits);
  task.operand_order = tasks::digit_order_setting(settings.operand_order, "operand_order");
  task.answer_order = tasks::digit_order_setting(settings.answer_order, "answer_order");
  return task;
}

torch::Tensor arithmetic_ids(const tasks::ArithmeticTask& task,
                             const std::vector<int64_t>& problems) {
  const int64_t n = task.sequence_length();
  std::vector<int64_t> tokens;
  tokens.reserve(problems.size() * static_cast<size_t>(n));
  for (int64_t p : problems) {
    if (p < 0 || p >= task.problems()) {
      throw InputError(
          fmt::format("[arithmetic_ids] problem {} is outside [0, {})", p, task.problems()));
    }
    const auto sequence = task.encode(p);
    tokens.insert(tokens.end(), sequence.begin(), sequence.end());
  }
  return torch::tensor(tokens, torch::kLong).view({static_cast<int64_t>(problems.size()), n});
}

std::unique_ptr<Experiment> make_arithmetic_experiment(const ExperimentConfig& config) {
  return std::make_unique<ArithmeticExperiment>(config);
}

}  // namespace maskprior::runtime
