// What the trainer needs from a task family's experiment (one file per family: runtime/
// boolean_experiment.cpp, arithmetic_experiment.cpp, ...; each registered by its family's name in
// train/run_experiment.cpp): data, batches, loss, evaluation, layout.
// The trainer owns the model, optimiser, schedule, data order, checkpoints and persistence metrics.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/experiment_config.h"
#include "runtime/model.h"

namespace maskprior::runtime {

/// One mini-batch: model inputs (token ids [B, N], int64; float patches [B, N − 1, F] for a patch
/// model) and whatever targets `loss` needs.
struct Batch {
  torch::Tensor inputs;
  torch::Tensor targets;
};

/// The rows an experiment's test metrics are computed on, for `maskc train --save-test-rows`
/// (test_rows.safetensors, read by maskprior.load_run in Python): named CPU tensors ("inputs",
/// and "targets", "seen" where the family has them) and `info`, what the metric does with them:
/// {"loss": "mse" | "cross_entropy" | "next_token" | "answer", plus "answer_offset" and
/// "answer_length" for "answer"}.
struct TestRows {
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  nlohmann::json info = nlohmann::json::object();
};

/// Rows per evaluation pass: a training batch's worth, so that each pass's activations stay below
/// the 32 MiB that prepare_host (runtime/host.h) lets glibc reuse. Passes of 512–4,096 rows took
/// fresh pages from the kernel for every tensor; the paper presets' step-0 evaluations took 102 s
/// (parity2), 105 s (fashion-mnist) and 92 s (fortunes-char) against 63, 78 and 68 s in passes
/// of 256 (docs/performance.md).
inline constexpr int64_t kEvalRows = 256;

/// One sequence length of a run over several sizes (length generalisation, docs/settings.md,
/// "Sizes"): the spec's length parameter there, the token layout it has, and how many training
/// and test rows have that length. Training rows are ordered by size: the rows of size group g
/// follow those of groups 0..g−1, and a batch holds rows of one group.
struct SizeGroup {
  int64_t size = 0;        // the length parameter's value (arithmetic: operand digits)
  Layout layout;           // the task's tokens at this size
  int64_t train_rows = 0;  // 0: a size only tested
  int64_t test_rows = 0;
};

class Experiment {
 public:
  virtual ~Experiment() = default;

  /// The task's token layout (span names and lengths, in order); a spec must match it.
  virtual Layout layout() const = 0;
  /// vocab, seq_len and readout for the task; sizes (dim, depth, ...) from `config`.
  virtual ModelConfig model_config(const ExperimentConfig& config) const = 0;
  /// Rows of the training set.
  virtual int64_t train_size() const = 0;
  /// The training rows `rows` (int64 indices into [0, train_size())), on the current device.
  virtual Batch train_batch(const torch::Tensor& rows) const = 0;
  /// Scalar training loss of `output` (the model's forward) against `batch.targets`.
  virtual torch::Tensor loss(const torch::Tensor& output, const Batch& batch) const = 0;
  /// The training loss of `batch`: loss(model->forward(batch.inputs), batch), which an
  /// experiment whose loss reads only some outputs may compute from those alone.
  virtual torch::Tensor train_loss(MaskedTransformer& model, const Batch& batch) const {
    return loss(model->forward(batch.inputs), batch);
  }
  /// Evaluates the model (no gradients) and returns the task's metrics as a JSON object, e.g.
  /// Boolean: accuracy, unseen_accuracy, seen_accuracy, seen_mse, unseen_mse, fourier.
  virtual nlohmann::json evaluate(MaskedTransformer& model) const = 0;
  /// A fixed batch of inputs (same for every call, as Batch::inputs, on the CPU) for attention
  /// metrics and QK fitting.
  virtual torch::Tensor probe_inputs(int64_t size) const = 0;
  /// What data the run uses, as JSON (sizes, subsets, files); `note`, when present, is one line
  /// for the progress output. Recorded in init.json and summary.json as `data`.
  virtual nlohmann::json data_info() const { return nlohmann::json::object(); }
  /// Moves the data to `device` (called once before training).
  virtual void to(torch::Device device) = 0;
  /// The vocabulary of a run on sequence data (token id = index, and where the data came from),
  /// which the run folder keeps (runfolder/run_files.h kVocabularyFile); null for other tasks. A
  /// resumed run must read the same.
  virtual nlohmann::json vocabulary() const { return nullptr; }
  /// The test rows evaluate() reads, on the CPU (see TestRows).
  virtual TestRows test_rows() const = 0;
  /// What the run trains on, in a line for the progress output ("" = nothing to say).
  virtual std::string description() const { return {}; }
  /// The sizes of a run whose sequences have several lengths, ascending; empty for a run of one
  /// length (layout() and model_config().seq_len say it).
  virtual std::vector<SizeGroup> size_groups() const { return {}; }
  /// A run of one size that is not its spec's default: the value of the spec's length parameter
  /// there (arithmetic: operand digits other than 3), which the spec is compiled with; 0: none.
  virtual int64_t length_value() const { return 0; }
};

/// A model config with the task's vocab, length and readout and the sizes of `config`.
ModelConfig sized_model_config(const ExperimentConfig& config, int64_t vocab, int64_t seq_len,
                               Readout readout);

/// Evaluates `fn(batch)` over `inputs` in chunks of `chunk` rows without gradients, concatenating
/// the outputs along dim 0 (helper for experiments' evaluate).
torch::Tensor map_in_chunks(const torch::Tensor& inputs, int64_t chunk,
                            const std::function<torch::Tensor(const torch::Tensor&)>& fn);

}  // namespace maskprior::runtime
