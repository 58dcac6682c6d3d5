#include "train/data_order.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <utility>

#include "tasks/random.h"

namespace maskprior::training {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::vector<int64_t> epoch_order(uint64_t seed, int64_t epoch, int64_t rows) {
  std::vector<int64_t> order(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) order[static_cast<size_t>(i)] = i;
  std::mt19937_64 engine(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch))));
  tasks::shuffle_in_place(order, engine);  // a fixed mapping from draws to slots: portable
  return order;
}

int64_t batches_per_epoch(const std::vector<int64_t>& group_rows, int64_t batch) {
  int64_t batches = 0;
  for (int64_t rows : group_rows) batches += (rows + batch - 1) / batch;
  return batches;
}

EpochBatches epoch_batches(uint64_t seed, int64_t epoch, const std::vector<int64_t>& group_rows,
                           int64_t batch) {
  EpochBatches out;
  const auto cut = [&](int64_t first, int64_t rows, std::vector<std::pair<int64_t, int64_t>>& to) {
    for (int64_t b = 0; b < rows; b += batch) to.emplace_back(first + b, std::min(batch, rows - b));
  };
  if (group_rows.size() == 1) {
    out.order = epoch_order(seed, epoch, group_rows[0]);
    cut(0, group_rows[0], out.batches);
    return out;
  }
  int64_t first = 0;
  std::vector<std::pair<int64_t, int64_t>> batches;
  for (size_t g = 0; g < group_rows.size(); ++g) {
    // Each group its own stream, drawn from the epoch's: a group's order does not depend on the
    // others' sizes.
    auto rows = epoch_order(splitmix64(seed + g + 1), epoch, group_rows[g]);
    for (int64_t& row : rows) row += first;
    out.order.insert(out.order.end(), rows.begin(), rows.end());
    cut(first, group_rows[g], batches);
    first += group_rows[g];
  }
  std::mt19937_64 engine(splitmix64(~seed ^ splitmix64(static_cast<uint64_t>(epoch))));
  tasks::shuffle_in_place(batches, engine);
  out.batches = std::move(batches);
  return out;
}

double learning_rate(const TrainConfig& config, int64_t step, int64_t total_steps) {
  if (step < config.warmup) {
    return config.lr * static_cast<double>(step + 1) / static_cast<double>(config.warmup);
  }
  if (config.schedule == "cosine") {
    const double span = static_cast<double>(std::max<int64_t>(1, total_steps - config.warmup));
    const double progress = static_cast<double>(step - config.warmup) / span;
    return config.lr * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
  }
  return config.lr;
}

BatchOrder::BatchOrder(uint64_t seed, std::vector<int64_t> group_rows, int64_t batch)
    : seed_(seed),
      group_rows_(std::move(group_rows)),
      batch_(batch),
      steps_per_epoch_(batches_per_epoch(group_rows_, batch)) {}

std::vector<int64_t> BatchOrder::rows(int64_t step) {
  if (const int64_t epoch = step / steps_per_epoch_; epoch != epoch_) {
    batches_ = epoch_batches(seed_, epoch, group_rows_, batch_);
    epoch_ = epoch;
  }
  const auto [first, count] = batches_.batches[static_cast<size_t>(step % steps_per_epoch_)];
  const auto begin = batches_.order.begin() + first;
  return {begin, begin + count};
}

}  // namespace maskprior::training
