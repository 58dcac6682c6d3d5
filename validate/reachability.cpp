#include "validate/reachability.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "core/cells.h"

namespace maskprior::validate {

ReachabilityGraph::ReachabilityGraph(const CompiledMask& mask, int64_t depth,
                                     std::function<void()> check_cancelled)
    : mask_(&mask), depth_(depth), check_cancelled_(std::move(check_cancelled)) {
  if (depth < 1) throw InputError(fmt::format("depth {} must be at least 1", depth));
  if (depth > kMaxDepth) {
    throw InputError(
        fmt::format("depth {} is above the limit of {} (a 1-layer spec repeats "
                    "its layer, and after N layers, N the number of tokens, the "
                    "reachable tokens no longer change)",
                    depth, kMaxDepth));
  }
  if (mask.layers > 1 && depth > mask.layers) {
    throw InputError(
        fmt::format("depth {} exceeds the {} layers of spec '{}'", depth, mask.layers, mask.name));
  }
  check_invariants(mask);
  direction_ = mask.open_value >= mask.close_value ? 1.0 : -1.0;
  const int64_t n = mask.n;
  row_has_open_.resize(static_cast<size_t>(mask.layers * mask.heads * n));
  row_largest_.resize(row_has_open_.size());
  for (int64_t l = 0; l < mask.layers; ++l) {
    for (int64_t h = 0; h < mask.heads; ++h) {
      if (check_cancelled_) check_cancelled_();
      for (int64_t q = 0; q < n; ++q) {
        bool has_open = false;
        double largest = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < n; ++k) {
          if (mask.is_hard(q, k)) continue;
          has_open = has_open || leans_open(mask, mask.at(l, h, q, k));
          largest = std::max(largest, direction_ * mask.at(l, h, q, k));
        }
        const size_t slot = row_slot(l, h, q);
        row_has_open_[slot] = has_open ? 1 : 0;
        row_largest_[slot] = largest;
      }
    }
  }
}

bool ReachabilityGraph::has_edge(int64_t layer, int64_t q, int64_t k) const {
  if (q == k) return true;
  if (mask_->is_hard(q, k)) return false;
  const int64_t l = spec_layer(layer);
  for (int64_t h = 0; h < mask_->heads; ++h) {
    const size_t slot = row_slot(l, h, q);
    const float value = mask_->at(l, h, q, k);
    // A row with nothing open attends evenly to its largest cells (nearest the open value).
    const bool attended =
        row_has_open_[slot] ? leans_open(*mask_, value) : direction_ * value == row_largest_[slot];
    if (attended) return true;
  }
  return false;
}

std::vector<uint8_t> ReachabilityGraph::sources_of(int64_t row) const {
  const int64_t n = mask_->n;
  std::vector<uint8_t> frontier(static_cast<size_t>(n), 0);
  frontier[static_cast<size_t>(row)] = 1;
  // Walk back from the last layer: after step l, frontier = tokens feeding `row` from layer l on.
  for (int64_t layer = depth_ - 1; layer >= 0; --layer) {
    if (check_cancelled_) check_cancelled_();
    std::vector<uint8_t> previous(static_cast<size_t>(n), 0);
    for (int64_t q = 0; q < n; ++q) {
      if (!frontier[static_cast<size_t>(q)]) continue;
      for (int64_t k = 0; k < n; ++k) {
        if (!previous[static_cast<size_t>(k)] && has_edge(layer, q, k)) {
          previous[static_cast<size_t>(k)] = 1;
        }
      }
    }
    // a 1-layer spec repeats its layer: once a step adds nothing, no later step does
    const bool fixed_point = mask_->layers == 1 && previous == frontier;
    frontier = std::move(previous);
    if (fixed_point) break;
  }
  return frontier;
}

std::vector<std::vector<uint8_t>> visible_tokens(const ReachabilityGraph& graph,
                                                 const std::vector<int64_t>& readout_rows,
                                                 const std::vector<GeneratedToken>& generated) {
  std::vector<std::vector<uint8_t>> visible;
  if (generated.empty()) {
    for (int64_t row : readout_rows) visible.push_back(graph.sources_of(row));
    return visible;
  }
  const size_t n = static_cast<size_t>(graph.tokens());
  // origin[t]: the tokens whose information token t holds at layer 0.
  std::vector<std::vector<uint8_t>> origin(n, std::vector<uint8_t>(n, 0));
  for (size_t t = 0; t < n; ++t) origin[t][t] = 1;
  auto see = [&](int64_t row) {
    std::vector<uint8_t> seen(n, 0);
    const std::vector<uint8_t> sources = graph.sources_of(row);
    for (size_t k = 0; k < n; ++k) {
      if (!sources[k]) continue;
      for (size_t t = 0; t < n; ++t) seen[t] |= origin[k][t];
    }
    return seen;
  };
  // Monotone growth of the origin sets: at most n rounds until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (const GeneratedToken& g : generated) {
      const std::vector<uint8_t> seen = see(g.predicted_by);
      auto& target = origin[static_cast<size_t>(g.token)];
      for (size_t t = 0; t < n; ++t) {
        if (seen[t] && !target[t]) {
          target[t] = 1;
          changed = true;
        }
      }
    }
  }
  for (int64_t row : readout_rows) visible.push_back(see(row));
  return visible;
}

}  // namespace maskprior::validate
