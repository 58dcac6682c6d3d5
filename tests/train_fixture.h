// The tiny model and quiet CPU settings the training tests share.
#pragma once

#include <cstdint>

#include "train/config.h"

namespace maskprior::testing {

/// A run of a tiny model (2 layers 32 wide, 2 heads of 16, an MLP `mlp` wide) on one CPU thread,
/// without a progress line, probing attention on 64 examples. Each test sets the task, data,
/// optimiser and whatever else it checks.
inline training::TrainConfig tiny_train_config(int64_t mlp = 64) {
  training::TrainConfig c;
  c.dim = 32;
  c.depth = 2;
  c.heads = 2;
  c.head_dim = 16;
  c.mlp = mlp;
  c.probe_size = 64;
  c.progress = false;
  c.threads = 1;  // tiny models: a second thread only waits on a busy machine
  c.device = "cpu";
  return c;
}

}  // namespace maskprior::testing
