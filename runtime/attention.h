// softmax(q kᵀ · scale + bias) v on the CPU as one autograd operation over the packed
// projections [B, N, 3, H, d] (runtime/attention_kernels.h), for the masked Transformer's layers.
#pragma once

#include <torch/torch.h>

#include <cstdint>

namespace maskprior::runtime {

/// Whether the model's CPU paths apply to this tensor (its residual stream): float32 on the CPU.
/// fused_attention itself also takes bfloat16 projections (from autocast) and computes in
/// float32.
bool fused_attention_applies(const torch::Tensor& qkv);

/// softmax(q kᵀ · scale + bias) v with q, k, v = qkv[:, :, 0 / 1 / 2] ([B, N, 3, H, d]), for the
/// `count` queries at positions [first, first + count) and all N keys; bias [1 or H, count, N]
/// (or undefined; −∞ cells are excluded, every query row needs a finite one). Returns
/// [B, count, H · d]. Differentiable in qkv and bias. With `probs`, computes no gradient and also
/// sets `probs` to the probabilities [B, H, count, N].
torch::Tensor fused_attention(const torch::Tensor& qkv, const torch::Tensor& bias, double scale,
                              int64_t first, int64_t count, torch::Tensor* probs = nullptr);
/// The same with the queries computed apart: q [B, count, H, d] (the queries at some `count`
/// positions), k and v = kv[:, :, 0 / 1] ([B, N, 2, H, d]), bias [1 or H, count, N]: for a layer
/// whose output is needed at a few positions only, which then needs Q at those alone.
torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& kv,
                              const torch::Tensor& bias, double scale,
                              torch::Tensor* probs = nullptr);

}  // namespace maskprior::runtime
