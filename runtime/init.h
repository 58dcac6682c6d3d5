// Initialisation methods (--init): where a spec's attention pattern is put before training.
//   vanilla     no prior; default PyTorch initialisation
//   mask        M from the spec, learnable
//   mask-fixed  M from the spec, a buffer (never trained)
//   mask-zero   M = 0 (neutral, log σ(0) shifts every logit equally), learnable, spec's shape
//   qk-svd      the spec's pattern put into every layer's Wq/Wk in closed form (PAPER.md), no mask
//   qk-opt      the same pattern fitted into Wq/Wk by Adam, no mask
//   mimetic     Wq Wkᵀ ≈ 0.7 Z + 0.7 I, Wv Wo ≈ 0.4 Z − 0.4 I per head (Trockman & Kolter)
//
// QK methods fit what layer 0's attention really sees, X = LayerNorm(token + position), not the
// raw positions P. qk-svd takes the distinct (position, token) rows X' of the probe batch (CLS + 2
// bit values per position for Boolean tasks) and solves X' Wq Wkᵀ X'ᵀ ≈ A with
// A = √d_head · qk_contrast · open (so the scaled logits are qk_contrast on open cells, 0 on
// closed ones, whatever token sits at a position) by PAPER.md's closed form; qk-opt fits
// softmax(X Wq Wkᵀ Xᵀ / √d_head) to softmax(qk_contrast · open) on the probe sequences by Adam.
// Both write the same factors into every layer (deeper layers see a slightly different X). The
// hard mask of a spec is installed only by the mask methods.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "core/compiled_mask.h"
#include "runtime/init_method.h"
#include "runtime/model.h"

namespace maskprior::runtime {

struct InitOptions {
  uint64_t seed = 0;            // for mimetic's Z and anything else random
  double qk_contrast = 10.0;    // qk-*: target logit gap between open and closed cells
  int64_t qk_opt_steps = 1000;  // qk-opt: Adam steps
  double qk_opt_lr = 1e-2;      // qk-opt: Adam learning rate
  torch::Tensor probe_ids;      // qk-*: token ids [B, N] whose layer-0 inputs the fit targets
};

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
