#include "runtime/experiment.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <map>

#include "core/error.h"
#include "runtime/arithmetic_experiment.h"
#include "runtime/language_experiment.h"
#include "runtime/regression_experiment.h"
#include "runtime/sequence_experiment.h"
#include "runtime/vision_experiment.h"
#include "tasks/arithmetic_task.h"
#include "tasks/fashion_mnist.h"
#include "tasks/random.h"
#include "tasks/task_names.h"
#include "tasks/text_corpus.h"

namespace maskprior::runtime {

namespace {

inline constexpr int64_t kClsToken = 2;                     // bits are (x+1)/2 ∈ {0, 1}
inline constexpr uint64_t kProbeSeed = 0x5eed'0f'9b0beULL;  // fixed: every run probes alike

/// Token ids [rows, 1 + n]: CLS, then (x_i + 1) / 2.
torch::Tensor boolean_ids(const tasks::BooleanDataset& data) {
  const auto rows = static_cast<int64_t>(data.rows());
  const int64_t width = 1 + data.n;
  std::vector<int64_t> ids(static_cast<size_t>(rows * width));
  for (int64_t r = 0; r < rows; ++r) {
    ids[static_cast<size_t>(r * width)] = kClsToken;
    for (int64_t i = 0; i < data.n; ++i) {
      ids[static_cast<size_t>(r * width + 1 + i)] =
          (data.x[static_cast<size_t>(r * data.n + i)] + 1) / 2;
    }
  }
  return torch::tensor(ids, torch::kLong).view({rows, width});
}

class BooleanExperiment : public RegressionExperiment {
 public:
  explicit BooleanExperiment(const ExperimentConfig& config)
      : task_(tasks::make_boolean_task(config.task, config.n)) {
    auto train = tasks::training_set(task_, config.seed);
    train_ids_ = boolean_ids(train);
    train_y_ = torch::tensor(train.y, torch::kFloat);
    auto cube = tasks::full_cube(task_);
    rows_ids_ = boolean_ids(cube);
    rows_y_ = torch::tensor(cube.y, torch::kFloat);
    rows_seen_ =
        torch::tensor(std::vector<int64_t>(cube.seen.begin(), cube.seen.end()), torch::kLong)
            .to(torch::kBool);
    values_ = torch::tensor(task_.values, torch::kDouble).to(torch::kFloat);
    auto signs = torch::tensor(std::vector<int64_t>(cube.x.begin(), cube.x.end()), torch::kLong)
                     .view({static_cast<int64_t>(cube.rows()), cube.n})
                     .to(torch::kFloat);
    characters_ = fourier_characters(signs, variable_subsets(task_.variables));
  }

  Layout layout() const override { return task_.layout(); }

  ModelConfig model_config(const ExperimentConfig& config) const override {
    // Tokens 0, 1 = (x+1)/2 and 2 = CLS.
    return sized_model_config(config, /*vocab=*/3, /*seq_len=*/1 + task_.n,
                              Readout::kClsRegression);
  }

 private:
  tasks::BooleanTask task_;
};

}  // namespace

int64_t RegressionExperiment::train_size() const {
  return train_ids_.size(0);
}

Batch RegressionExperiment::train_batch(const torch::Tensor& rows) const {
  auto index = rows.to(train_ids_.device());
  return {train_ids_.index_select(0, index), train_y_.index_select(0, index)};
}

torch::Tensor RegressionExperiment::loss(const torch::Tensor& output, const Batch& batch) const {
  return torch::mse_loss(output, batch.targets);
}

nlohmann::json RegressionExperiment::evaluate(MaskedTransformer& model) const {
  auto pred = map_in_chunks(rows_ids_, kEvalRows, [&](const torch::Tensor& ids) {
                return model->forward(ids);
              }).to(torch::kCPU);
  return boolean_metrics(pred, rows_y_.to(torch::kCPU), rows_seen_.to(torch::kCPU),
                         values_.to(torch::kCPU), characters_);
}

torch::Tensor RegressionExperiment::probe_inputs(int64_t size) const {
  const auto order = tasks::shuffled_rows(rows_ids_.size(0), size, kProbeSeed);
  return rows_ids_.index_select(0, torch::tensor(order, torch::kLong).to(rows_ids_.device()))
      .to(torch::kCPU);
}

void RegressionExperiment::to(torch::Device device) {
  for (auto* t : {&train_ids_, &train_y_, &rows_ids_, &rows_y_, &rows_seen_, &values_}) {
    *t = t->to(device);
  }
}

torch::Tensor map_in_chunks(const torch::Tensor& inputs, int64_t chunk,
                            const std::function<torch::Tensor(const torch::Tensor&)>& fn) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t start = 0; start < inputs.size(0); start += chunk) {
    parts.push_back(fn(inputs.narrow(0, start, std::min(chunk, inputs.size(0) - start))));
  }
  return torch::cat(parts, 0);
}

std::vector<std::vector<int>> variable_subsets(const std::vector<int>& variables) {
  std::vector<std::vector<int>> all;
  const size_t count = size_t{1} << variables.size();
  for (size_t bits = 0; bits < count; ++bits) {
    std::vector<int> subset;
    for (size_t i = 0; i < variables.size(); ++i) {
      if (bits >> i & 1) subset.push_back(variables[i]);
    }
    all.push_back(subset);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
  return all;
}

std::vector<FourierCharacter> fourier_characters(const torch::Tensor& signs,
                                                 const std::vector<std::vector<int>>& sets) {
  std::vector<FourierCharacter> characters;
  for (const auto& set : sets) {
    auto character = torch::ones({signs.size(0)}, torch::kFloat);
    for (int i : set) character = character * signs.select(1, i);
    characters.emplace_back(fmt::format("{{{}}}", fmt::join(set, ",")), character);
  }
  return characters;
}

nlohmann::json boolean_metrics(const torch::Tensor& pred, const torch::Tensor& y,
                               const torch::Tensor& seen, const torch::Tensor& values,
                               const std::vector<FourierCharacter>& characters) {
  auto nearest = values.index_select(0, (pred.unsqueeze(1) - values).abs().argmin(1));
  auto correct = ((nearest - y).abs() < 1e-5).to(torch::kDouble);
  auto squared = (pred - y).pow(2);
  auto unseen = seen.logical_not();
  auto mean_where = [](const torch::Tensor& v, const torch::Tensor& where) {
    return where.any().item<bool>() ? v.index({where}).to(torch::kDouble).mean().item<double>()
                                    : 0.0;
  };
  nlohmann::json fourier = nlohmann::json::object();
  for (const auto& [name, character] : characters) {
    fourier[name] = (pred * character.to(pred.device())).to(torch::kDouble).mean().item<double>();
  }
  // The largest character (all of f's variables for the GOTU tasks): the min-degree
  // interpolator leaves it out (parity2's x0·x1, maj3's x0·x1·x2), so its learned coefficient
  // shows whether training left the MDI.
  const std::string top = characters.empty() ? "" : characters.back().first;
  return {{"accuracy", correct.mean().item<double>()},
          {"seen_accuracy", mean_where(correct, seen)},
          {"unseen_accuracy", mean_where(correct, unseen)},
          {"seen_mse", mean_where(squared, seen)},
          {"unseen_mse", mean_where(squared, unseen)},
          {"unseen_margin", mean_where(rounding_margin(pred, y, values), unseen)},
          {"target_monomial", top},
          {"target_coefficient", top.empty() ? nlohmann::json() : fourier[top]},
          {"fourier", fourier}};
}

torch::Tensor rounding_margin(const torch::Tensor& pred, const torch::Tensor& y,
                              const torch::Tensor& values) {
  const double inf = std::numeric_limits<double>::infinity();
  auto sorted = std::get<0>(values.to(torch::kDouble).sort());
  auto target = y.to(torch::kDouble);
  auto index = (target.unsqueeze(1) - sorted).abs().argmin(1);
  auto padded = torch::cat(
      {torch::full({1}, -inf, torch::kDouble), sorted, torch::full({1}, inf, torch::kDouble)});
  auto lower = (padded.index_select(0, index) + target) / 2;
  auto upper = (padded.index_select(0, index + 2) + target) / 2;
  auto p = pred.to(torch::kDouble);
  return torch::min(p - lower, upper - p);
}

std::unique_ptr<Experiment> make_boolean_experiment(const ExperimentConfig& config) {
  return std::make_unique<BooleanExperiment>(config);
}

ModelConfig sized_model_config(const ExperimentConfig& config, int64_t vocab, int64_t seq_len,
                               Readout readout) {
  ModelConfig model;
  model.vocab = vocab;
  model.seq_len = seq_len;
  model.dim = config.dim;
  model.depth = config.depth;
  model.heads = config.heads;
  model.head_dim = config.head_dim;
  model.mlp = config.mlp;
  model.readout = readout;
  return model;
}

std::unique_ptr<Experiment> make_experiment(const ExperimentConfig& config) {
  if (tasks::is_boolean_task(config.task)) return make_boolean_experiment(config);
  if (tasks::is_arithmetic_task(config.task)) return make_arithmetic_experiment(config);
  if (!config.data.empty()) return make_sequence_experiment(config);
  if (tasks::is_vision_task(config.task)) return make_vision_experiment(config);
  if (tasks::is_language_task(config.task)) return make_language_experiment(config);
  throw tasks::unknown_task(config.task);
}

}  // namespace maskprior::runtime
