// Attention over few positions on the CPU, as plain loops over (row, head) pairs: the pieces of
// softmax(q kᵀ · scale + bias) v and of its backward pass, for runtime/attention.cpp's fused
// operation. LibTorch 1.13 runs a batched matmul on the CPU as one GEMM call per (row, head);
// with N ≈ 12–50 positions those calls cost more than their arithmetic, and splitting the heads
// out of [B, N, H·d] and back costs two copies. These loops read and write [B, N, H, d] directly.
// No LibTorch here (a torch-free translation unit compiles in a second).
#pragma once

#include <cstdint>

namespace maskprior::runtime::kernels {

/// Layouts (float32), each head's d values contiguous: k, v and their gradients [B, Nk, H, d]
/// with one position `kv_stride` values after the last and one batch row Nk · kv_stride after
/// the last (kv_stride = 3 · H · d for q, k, v packed as [B, Nk, 3, H, d]); q and its gradient
/// [B, Nq, H, d] with positions `q_stride` and batch rows `q_batch` apart (in the packed tensor:
/// 3 · H · d and Nk · 3 · H · d); out and its gradient [B, Nq, H, d], contiguous; scores and
/// probabilities [B, H, Nq, Nk]; bias [bias_heads, Nq, Nk] with bias_heads ∈ {1, H}, or none
/// (bias_heads = 0).
struct AttentionShape {
  int64_t batch = 0, heads = 0, queries = 0, keys = 0, head_dim = 0, bias_heads = 0;
  int64_t kv_stride = 0, q_stride = 0, q_batch = 0;
};

// Each function works on the (row, head) pairs p = b · H + h in [first, last), so that callers
// can split the pairs over threads; each pair writes only its own cells.

/// scores[b, h, i, j] = scale · q[b, i, h] · k[b, j, h] + bias[h or 0, i, j].
void attention_scores(const AttentionShape& s, const float* q, const float* k, const float* bias,
                      float scale, float* scores, int64_t first, int64_t last);
/// out[b, i, h] = Σ_j probs[b, h, i, j] · v[b, j, h].
void attention_mix(const AttentionShape& s, const float* probs, const float* v, float* out,
                   int64_t first, int64_t last);
/// grad_probs[b, h, i, j] = grad_out[b, i, h] · v[b, j, h];
/// grad_v[b, j, h] = Σ_i probs[b, h, i, j] · grad_out[b, i, h].
void attention_mix_backward(const AttentionShape& s, const float* probs, const float* v,
                            const float* grad_out, float* grad_probs, float* grad_v, int64_t first,
                            int64_t last);
/// grad_q[b, i, h] = scale · Σ_j grad_scores[b, h, i, j] · k[b, j, h];
/// grad_k[b, j, h] = scale · Σ_i grad_scores[b, h, i, j] · q[b, i, h].
void attention_scores_backward(const AttentionShape& s, const float* grad_scores, const float* q,
                               const float* k, float scale, float* grad_q, float* grad_k,
                               int64_t first, int64_t last);

}  // namespace maskprior::runtime::kernels
