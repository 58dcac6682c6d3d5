// The Boolean GOTU tasks' experiment (tasks/boolean_task.h): the cube's points as token ids
// after a CLS token, a real readout at CLS, MSE on the seen points, the GOTU metrics over the cube.
#include "runtime/boolean_experiment.h"

#include <vector>

#include "runtime/regression_experiment.h"
#include "tasks/boolean_task.h"
#include "tasks/random.h"

namespace maskprior::runtime {

namespace {

inline constexpr int64_t kClsToken = 2;  // bits are (x+1)/2 ∈ {0, 1}

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
    auto train = tasks::training_set(task_, config.seed, config.train_domain == "all");
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

std::unique_ptr<Experiment> make_boolean_experiment(const ExperimentConfig& config) {
  return std::make_unique<BooleanExperiment>(config);
}

}  // namespace maskprior::runtime
