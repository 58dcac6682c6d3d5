// Reachability: which tokens' information can arrive at a readout row through the attention graph
// a compiled mask allows.
//
// Layer l has an edge q → k (query q reads key k) when, in some head, the cell is open and not
// hard-excluded. A cell is open when it leans open (core/cells.h leans_open: M lies beyond the
// midpoint of close_value and open_value on the open side), the one definition every layer uses;
// in a row where no cell is open, softmax spreads evenly over the row's largest cells (those
// nearest the open value), so those count as read. Residual connections keep each token's own
// information: q → q always. Layers past a 1-layer spec repeat its only layer.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "core/compiled_mask.h"

namespace maskprior::validate {

/// A token whose value is produced by the model itself (an answer digit fed back in a decoder):
/// it carries whatever the row that predicted it could see.
struct GeneratedToken {
  int64_t token = 0;
  int64_t predicted_by = 0;
};

/// The largest depth a graph accepts. Depths past N (the tokens) add nothing: paths through a
/// 1-layer spec reach a fixed point within N steps (sources_of stops there), and a multi-layer
/// spec allows at most its layers.
constexpr int64_t kMaxDepth = 1'000'000;

/// The attention graph of a mask over `depth` layers.
class ReachabilityGraph {
 public:
  /// Throws InputError if depth < 1, depth > kMaxDepth or depth exceeds the layers of a
  /// multi-layer spec. `check_cancelled`, when set, is called for each layer and head while the
  /// graph is built and for each layer of sources_of; what it throws stops them.
  ReachabilityGraph(const CompiledMask& mask, int64_t depth,
                    std::function<void()> check_cancelled = {});

  int64_t depth() const { return depth_; }
  int64_t tokens() const { return mask_->n; }
  /// True if query q reads key k in layer `layer` (some head open, not hard, or q == k).
  bool has_edge(int64_t layer, int64_t q, int64_t k) const;
  /// Tokens from which a path of `depth` layers (earliest layer first) ends at `row`.
  std::vector<uint8_t> sources_of(int64_t row) const;

 private:
  const CompiledMask* mask_;
  int64_t depth_;
  double direction_;                   // +1 when open_value ≥ close_value, else −1
  std::vector<uint8_t> row_has_open_;  // [L, H, N]: 1 when a cell of the row that is not hard
                                       // leans open (core/cells.h leans_open)
  std::vector<double> row_largest_;    // [L, H, N]: the row's largest direction·M, not hard
  std::function<void()> check_cancelled_;

  int64_t spec_layer(int64_t layer) const { return mask_->layers == 1 ? 0 : layer; }
  size_t row_slot(int64_t layer, int64_t head, int64_t q) const {
    return static_cast<size_t>((layer * mask_->heads + head) * mask_->n + q);
  }
};

/// For each readout row, the tokens whose layer-0 information it can see after the graph's
/// depth; generated tokens pass on what their predicting row saw (a fixed point).
std::vector<std::vector<uint8_t>> visible_tokens(const ReachabilityGraph& graph,
                                                 const std::vector<int64_t>& readout_rows,
                                                 const std::vector<GeneratedToken>& generated);

}  // namespace maskprior::validate
