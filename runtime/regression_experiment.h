// What the readout-regression experiments share: the built-in Boolean GOTU tasks
// (runtime/experiment.cpp) and truth tables (runtime/truth_table_experiment.cpp). The readout
// token gives one real number, the loss is MSE on the training rows, and evaluation is
// boolean_metrics over every row (the whole cube for the GOTU tasks).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "runtime/experiment.h"

namespace maskprior::runtime {

/// A subclass fills the tensors below in its constructor and adds layout, model_config and what
/// else it has to say.
class RegressionExperiment : public Experiment {
 public:
  int64_t train_size() const override;
  Batch train_batch(const torch::Tensor& rows) const override;
  torch::Tensor loss(const torch::Tensor& output, const Batch& batch) const override;
  /// boolean_metrics of the predictions on every row.
  nlohmann::json evaluate(MaskedTransformer& model) const override;
  /// `size` of the rows (all if fewer) in a fixed shuffled order, the same for every run: a
  /// truth table of a built-in task probes the task's rows.
  torch::Tensor probe_inputs(int64_t size) const override;
  void to(torch::Device device) override;

 protected:
  torch::Tensor train_ids_, train_y_;  // training rows: token ids [T, N] int64, targets [T] float
  torch::Tensor rows_ids_, rows_y_, rows_seen_;  // every row: [R, N], [R] float, [R] bool
  torch::Tensor values_;                         // the values the target takes, float
  std::vector<FourierCharacter> characters_;     // χ_T over every row, kept on the CPU
};

}  // namespace maskprior::runtime
