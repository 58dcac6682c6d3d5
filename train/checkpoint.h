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

/// Writes the checkpoint atomically (temporary file + rename: never a partial checkpoint).
void save_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                     torch::optim::Optimizer& optimizer, const RunState& state);

/// Loads model and optimizer state (onto `device`) and returns the run state; InputError naming
/// the file if it cannot be read.
RunState load_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                         torch::optim::Optimizer& optimizer, torch::Device device);

}  // namespace maskprior::training
