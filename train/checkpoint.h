// Checkpoints (checkpoint.pt of a run folder): model, optimizer and where the run stands, so a
// resumed run continues exactly where the checkpoint was written.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "runtime/model.h"

namespace maskprior::training {

/// Where a run stands, beyond the model and the optimizer.
struct RunState {
  int64_t step = 0;        // steps done
  double loss_sum = 0;     // train loss since the last evaluation
  int64_t loss_count = 0;  // steps in loss_sum
  double wall_before = 0;  // seconds spent in earlier sessions of this run
};

/// The name of the first parameter or buffer of `model` holding NaN or ±inf, "" if none.
std::string first_non_finite(runtime::MaskedTransformer& model);

/// Writes the checkpoint atomically (temporary file + rename: never a partial checkpoint; a
/// failed write, e.g. a full disk, keeps the previous one). A model whose parameters are not all
/// finite (the training diverged) is never saved: InputError saying so, the previous checkpoint
/// kept.
void save_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                     torch::optim::Optimizer& optimizer, const RunState& state);

/// The largest checkpoint.pt read (it is read whole, then loaded from memory).
inline constexpr uint64_t kMaxCheckpointBytes = uint64_t{16} << 30;

/// Loads model and optimizer state (onto `device`) and returns the run state. checkpoint.pt is
/// read as every input is (a regular file — a FIFO is refused, not waited on — of at most
/// kMaxCheckpointBytes); InputError naming the file if it cannot be read or loaded.
RunState load_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                         torch::optim::Optimizer& optimizer, torch::Device device);

}  // namespace maskprior::training
