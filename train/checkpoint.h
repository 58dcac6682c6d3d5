// Checkpoints (checkpoint.pt of a run folder): model, optimizer and where the run stands, so a
// resumed run continues exactly where the checkpoint was written. Next to it, checkpoint.json
// holds the SHA-256 of each checkpoint written and the evaluation steps metrics.jsonl held at
// that moment, so a damaged or foreign checkpoint, or lost history, is found before resuming.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/model.h"

namespace maskprior::training {

/// The largest checkpoint.pt read (it is read whole: its SHA-256 is checked before it is loaded).
inline constexpr uint64_t kMaxCheckpointBytes = uint64_t{16} << 30;

/// Where a run stands, beyond the model and the optimizer.
struct RunState {
  int64_t step = 0;        // steps done
  double loss_sum = 0;     // train loss since the last evaluation
  int64_t loss_count = 0;  // steps in loss_sum
  double wall_before = 0;  // seconds spent in earlier sessions of this run
};

/// A checkpoint as loaded.
struct LoadedCheckpoint {
  RunState state;
  /// The evaluation steps metrics.jsonl held when the checkpoint was written; nullopt for a
  /// checkpoint of a maskc that did not record them (no checkpoint.json).
  std::optional<std::vector<int64_t>> evaluations;
  std::string sha256;  // of checkpoint.pt as read
};

/// The path of the checkpoint.json that goes with the checkpoint at `checkpoint_path`.
std::string checkpoint_sums_path(const std::string& checkpoint_path);

/// The name of the first parameter or buffer of `model` holding NaN or ±inf, "" if none.
std::string first_non_finite(runtime::MaskedTransformer& model);

/// Writes the checkpoint atomically (temporary file + rename: never a partial checkpoint; a
/// failed write, e.g. a full disk, keeps the previous one). A model whose parameters are not all
/// finite (the training diverged) is never saved: InputError saying so, the previous checkpoint
/// kept. Before the checkpoint, checkpoint.json is written (atomically) with its SHA-256 and
/// `evaluations` (the steps metrics.jsonl holds), keeping the entry of `current_sha256` (the
/// checkpoint now at `path`, "" if none), so a process killed or a write failing between the two
/// writes leaves a pair that still matches. Returns the new checkpoint's SHA-256.
std::string save_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                            torch::optim::Optimizer& optimizer, const RunState& state,
                            const std::vector<int64_t>& evaluations,
                            const std::string& current_sha256);

/// Loads model and optimizer state (onto `device`) and returns the run state. checkpoint.pt is
/// read as every input is (a regular file — a FIFO is refused, not waited on — of at most
/// kMaxCheckpointBytes). InputError naming the file when it cannot be read, when its SHA-256 is
/// none that checkpoint.json lists or it holds non-finite values ("corrupt checkpoint"), and when
/// its tensors do not fit `model` (naming the parameter and both shapes: another architecture).
LoadedCheckpoint load_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                                 torch::optim::Optimizer& optimizer, torch::Device device);

/// The checkpoints of one run: saves them (save_checkpoint), loads the one to resume from
/// (load_checkpoint), and knows which is in the folder, its step and SHA-256.
class Checkpointer {
 public:
  /// `run_dir`: the run folder (every rank of a data-parallel run reads its checkpoint, so the
  /// folder is shared); `writes`: false for a run without --out and for the ranks other than 0,
  /// which save nothing.
  Checkpointer(const std::string& run_dir, bool writes);
  /// Loads the run's checkpoint.pt into `model` and `optimizer` (load_checkpoint).
  LoadedCheckpoint load(runtime::MaskedTransformer& model, torch::optim::Optimizer& optimizer,
                        torch::Device device);
  /// Saves `state` with the model and optimizer, and the evaluation steps metrics.jsonl holds.
  void save(runtime::MaskedTransformer& model, torch::optim::Optimizer& optimizer,
            const RunState& state, const std::vector<int64_t>& evaluations);
  /// What a run that stops without saving (it diverged) has kept, in words.
  std::string kept() const;

 private:
  std::string run_dir_, path_;
  bool writes_;
  int64_t step_ = -1;   // of the checkpoint last written or loaded (-1: none)
  std::string sha256_;  // of the checkpoint now in the folder ("" if none)
};

}  // namespace maskprior::training
