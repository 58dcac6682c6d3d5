// The data order and the learning-rate schedule: pure functions of the config and the step, so a
// resumed run sees the same batches at the same rates as an uninterrupted one.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "train/config.h"

namespace maskprior::training {

/// A permutation of [0, rows) for `epoch`, a pure function of (seed, epoch): splitmix64 seeds a
/// mt19937_64 that drives a Fisher–Yates shuffle with a fixed mapping (the same on every platform).
std::vector<int64_t> epoch_order(uint64_t seed, int64_t epoch, int64_t rows);

/// The batches of an epoch over training rows grouped by size (runtime::SizeGroup): group g holds
/// rows [first_g, first_g + rows_g), in order. `order` lists every row once; batch b is
/// order[batches[b].first, + batches[b].second). One group: epoch_order cut into batches of
/// `batch` rows (the last may be smaller), as a run of one size has always done. Several: each
/// group's rows shuffled and cut alike, so a batch holds rows of one size, and the batches in a
/// shuffled order. A pure function of its arguments.
struct EpochBatches {
  std::vector<int64_t> order;
  std::vector<std::pair<int64_t, int64_t>> batches;  // (first, count) into order
};
EpochBatches epoch_batches(uint64_t seed, int64_t epoch, const std::vector<int64_t>& group_rows,
                           int64_t batch);
/// How many batches epoch_batches makes: the sum over groups of ⌈rows_g / batch⌉.
int64_t batches_per_epoch(const std::vector<int64_t>& group_rows, int64_t batch);

/// The rows of each step's batch, epoch after epoch: epoch_batches of the step's epoch (the
/// current epoch's kept).
class BatchOrder {
 public:
  BatchOrder(uint64_t seed, std::vector<int64_t> group_rows, int64_t batch);
  /// Steps in an epoch (batches_per_epoch).
  int64_t steps_per_epoch() const { return steps_per_epoch_; }
  /// The rows of the batch of step `step` (the steps done before it).
  std::vector<int64_t> rows(int64_t step);

 private:
  uint64_t seed_;
  std::vector<int64_t> group_rows_;
  int64_t batch_, steps_per_epoch_;
  int64_t epoch_ = -1;  // the epoch `batches_` holds
  EpochBatches batches_;
};

/// Learning rate at `step`: linear warm-up to `lr` over `warmup` steps, then constant or cosine
/// decay to 0 at `total_steps`.
double learning_rate(const TrainConfig& config, int64_t step, int64_t total_steps);

}  // namespace maskprior::training
