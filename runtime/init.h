// Initialisation methods (--init): where a spec's attention pattern is put before training.
//   vanilla     no prior; default PyTorch initialisation
//   mask        M from the spec, learnable
//   mask-fixed  M from the spec, a buffer (never trained)
//   mask-zero   M = 0 (neutral, log σ(0) shifts every logit equally), learnable, spec's shape
//   qk-svd      the spec's pattern put into every layer's Wq/Wk in closed form (docs/paper.md,
//   "Baselines"), no mask qk-opt      the same pattern fitted into Wq/Wk by Adam, no mask mimetic
//   Wq Wkᵀ ≈ 0.7 Z + 0.7 I, Wv Wo ≈ 0.4 Z − 0.4 I per head (Trockman & Kolter) impulse     vision:
//   one 2-D shift per head on the task's patch grid (impulse_pattern) put into
//               every layer's Wq/Wk by qk-svd's closed form, no mask, no spec needed
//
// QK methods fit what layer 0's attention really sees, X = LayerNorm(token + position), not the
// raw positions P. qk-svd takes the distinct (position, token) rows X' of the probe batch (CLS + 2
// bit values per position for Boolean tasks) and solves X' Wq Wkᵀ X'ᵀ ≈ A with
// A = √d_head · qk_contrast · open (so the scaled logits are qk_contrast on open cells, 0 on
// closed ones, whatever token sits at a position) by the closed form of docs/paper.md, "Baselines";
// qk-opt fits softmax(X Wq Wkᵀ Xᵀ / √d_head) to softmax(qk_contrast · open) on the probe sequences
// by Adam. Both write the same factors into every layer (deeper layers see a slightly different X).
// The hard mask of a spec is installed only by the mask methods. For patch inputs (float [B, N − 1,
// F]) no two rows are alike; the rows qk-svd and impulse fit are then the mean of X over the probe
// batch at each position, the positional part of what layer 0 sees (N rows), so q_i·k_j is large
// where the pattern opens j for i, whatever the image.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/compiled_mask.h"
#include "core/layout.h"
#include "runtime/init_method.h"
#include "runtime/model.h"

namespace maskprior::runtime {

/// How many M the mask methods learn: the spec's own (one for every layer and head, unless the
/// spec gives one per layer or per head), one per layer, or one per layer and head; each starts
/// from the spec's M for that layer and head.
enum class MaskSharing { kSpec, kLayer, kHead };
/// kSpec for "spec", kLayer for "layer", kHead for "head"; InputError otherwise.
MaskSharing parse_mask_sharing(const std::string& name);
/// M of shape [L', H', N, N] spread to `sharing`'s shape for a model of `depth` and `heads`
/// ([depth, H', N, N] for kLayer, [depth, heads, N, N] for kHead; unchanged for kSpec).
torch::Tensor shared_mask(const torch::Tensor& m, MaskSharing sharing, int64_t depth,
                          int64_t heads);

struct InitOptions {
  uint64_t seed = 0;              // for mimetic's Z and anything else random
  double qk_contrast = 10.0;      // qk-*: target logit gap between open and closed cells
  int64_t qk_opt_steps = 1000;    // qk-opt: Adam steps
  double qk_opt_lr = 1e-2;        // qk-opt: Adam learning rate
  int64_t qk_opt_sequences = 64;  // qk-opt: the first this many probe inputs are fitted
  torch::Tensor probe_ids;        // qk-*, impulse: inputs whose layer-0 rows the fit targets
  Layout layout;                  // impulse: the task's layout (its grid span)
  MaskSharing mask_sharing = MaskSharing::kSpec;  // mask methods: how many M
};

/// The 2-D shifts of the impulse init, (dy, dx) per head in this order (cycled when there are
/// more heads): right, left, below, above neighbour (the heads of specs/vision/local7x7.mask),
/// then the four diagonals and the patch itself.
const std::vector<std::pair<int64_t, int64_t>>& impulse_shifts();

/// The impulse pattern, bool [1, heads, N, N]: in head h, patch (p, q) of the layout's first grid
/// span opens patch (p + dy, q + dx) for head h's shift, cells off the grid skipped (as
/// `open shift G by (dy, dx)`); no other cell is open. InputError if the layout has no grid span.
torch::Tensor impulse_pattern(const Layout& layout, int64_t heads);

/// The spec's logits M as a float tensor [L, H, N, N].
torch::Tensor mask_tensor(const CompiledMask& spec);
/// The spec's hard mask as bool [N, N] (true = excluded), or an undefined tensor.
torch::Tensor hard_tensor(const CompiledMask& spec);
/// The spec's open pattern (core/cells.h open_pattern) as bool [L, H, N, N].
torch::Tensor open_cells(const CompiledMask& spec);

/// Applies `method` to a freshly built model (spec may be null where not required; InputError
/// otherwise). Returns facts about the fit (e.g. qk-svd residual, qk-opt final loss) as JSON.
nlohmann::json apply_init(MaskedTransformer& model, InitMethod method, const CompiledMask* spec,
                          const InitOptions& options);

}  // namespace maskprior::runtime
