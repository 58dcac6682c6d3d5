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

}  // namespace maskprior::training
