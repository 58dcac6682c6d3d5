// What the readout-regression experiments share: the built-in Boolean GOTU tasks
// (runtime/boolean_experiment.cpp) and truth tables (runtime/truth_table_experiment.cpp). The
// readout token gives one real number, the loss is MSE on the training rows, and evaluation is
// boolean_metrics over every row (the whole cube for the GOTU tasks).
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/experiment.h"

namespace maskprior::runtime {

/// Per point, the signed distance of the prediction `pred` from the edge of its target's rounding
/// cell (the predictions that round to y among `values`, the values the target takes): positive
/// when it rounds right (how far from flipping), negative when wrong (how far from being right).
/// Double, same shape as pred.
torch::Tensor rounding_margin(const torch::Tensor& pred, const torch::Tensor& y,
                              const torch::Tensor& values);

/// A Fourier character χ_T(x) = Π_{i∈T} x_i over a set of rows, named like "{0,1}".
using FourierCharacter = std::pair<std::string, torch::Tensor>;
/// Every subset of `variables` in order of size, then lexicographic: {}, {0}, {1}, {0,1}, ...
std::vector<std::vector<int>> variable_subsets(const std::vector<int>& variables);
/// The characters of the index sets `sets` on ±1 inputs `signs` [rows, n] (float): each [rows].
std::vector<FourierCharacter> fourier_characters(const torch::Tensor& signs,
                                                 const std::vector<std::vector<int>>& sets);
/// The GOTU metrics (docs/paper.md, "Training data and metrics") of real predictions `pred` [R]
/// against targets `y` [R] with seen flags `seen` [R] (bool): accuracy (pred rounded to the nearest
/// of `values`, exact match) over every row, seen_accuracy, unseen_accuracy, seen_mse, unseen_mse
/// (null where no row is such), and `fourier`: mean(pred · χ_T) per character (the learned
/// function's coefficient f̂(T) when the rows are the whole cube). Tensors on the CPU.
nlohmann::json boolean_metrics(const torch::Tensor& pred, const torch::Tensor& y,
                               const torch::Tensor& seen, const torch::Tensor& values,
                               const std::vector<FourierCharacter>& characters);

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
  /// Every row: inputs, targets and seen (seen_mse and unseen_mse are the "mse" over each part).
  TestRows test_rows() const override;
  void to(torch::Device device) override;

 protected:
  torch::Tensor train_ids_, train_y_;  // training rows: token ids [T, N] int64, targets [T] float
  torch::Tensor rows_ids_, rows_y_, rows_seen_;  // every row: [R, N], [R] float, [R] bool
  torch::Tensor values_;                         // the values the target takes, float
  std::vector<FourierCharacter> characters_;     // χ_T over every row, kept on the CPU
};

}  // namespace maskprior::runtime
