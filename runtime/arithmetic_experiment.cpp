#include "runtime/arithmetic_experiment.h"

#include <fmt/format.h>

#include <random>

#include "core/error.h"
#include "runtime/decoder.h"
#include "tasks/random.h"

namespace maskprior::runtime {

namespace {

inline constexpr uint64_t kProbeSeed = 0xa7'1d'5eedULL;  // fixed: every run probes alike

class ArithmeticExperiment : public DecoderExperiment {
 public:
  explicit ArithmeticExperiment(const ExperimentConfig& config)
      : DecoderExperiment(config), task_(arithmetic_task(config)) {
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
    return sized_model_config(config, tasks::kArithmeticVocab, task_.sequence_length(),
                              Readout::kCausalLm);
  }

  torch::Tensor probe_inputs(int64_t size) const override {
    std::mt19937_64 engine(kProbeSeed);
    std::vector<int64_t> problems(static_cast<size_t>(size));
    for (auto& p : problems) {
      p = static_cast<int64_t>(
          tasks::uniform_below(engine, static_cast<uint64_t>(task_.problems())));
    }
    return arithmetic_ids(task_, problems);
  }

 private:
  tasks::ArithmeticTask task_;
};

}  // namespace

tasks::ArithmeticTask arithmetic_task(const ExperimentSettings& settings) {
  auto task = tasks::make_arithmetic_task(settings.task);
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
