// The data order and the learning-rate schedule: pure functions of the config and the step, so a
// resumed run sees the same batches at the same rates as an uninterrupted one.
#pragma once

#include <cstdint>
#include <vector>

#include "train/config.h"

namespace maskprior::training {

/// A permutation of [0, rows) for `epoch`, a pure function of (seed, epoch): splitmix64 seeds a
/// mt19937_64 that drives a Fisher–Yates shuffle with a fixed mapping (the same on every platform).
std::vector<int64_t> epoch_order(uint64_t seed, int64_t epoch, int64_t rows);

/// Learning rate at `step`: linear warm-up to `lr` over `warmup` steps, then constant or cosine
/// decay to 0 at `total_steps`.
double learning_rate(const TrainConfig& config, int64_t step, int64_t total_steps);

}  // namespace maskprior::training
