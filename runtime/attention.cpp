#include "runtime/attention.h"

#include <ATen/Parallel.h>

#include <utility>

#include "runtime/attention_kernels.h"

namespace maskprior::runtime {

namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

/// An autograd Function cannot take an undefined tensor: no bias travels as an empty one.
bool has_bias(const torch::Tensor& bias) {
  return bias.defined() && bias.numel() > 0;
}

/// The kernels' view of the inputs: q, k, v packed in one [B, N, 3, H, d] tensor (`kv` the same
/// tensor; the queries are positions [first, first + count) of it), or q [B, count, H, d] and k, v
/// packed in kv [B, N, 2, H, d].
struct Inputs {
  kernels::AttentionShape shape;
  float *q, *k, *v;
};
Inputs inputs_of(const torch::Tensor& q, const torch::Tensor& kv, int64_t first, int64_t count,
                 int64_t bias_heads) {
  const bool packed = kv.size(2) == 3;
  kernels::AttentionShape s;
  s.batch = kv.size(0);
  s.keys = kv.size(1);
  s.heads = kv.size(3);
  s.head_dim = kv.size(4);
  s.queries = count;
  s.bias_heads = bias_heads;
  const int64_t inner = s.heads * s.head_dim;
  s.kv_stride = kv.size(2) * inner;
  s.q_stride = packed ? s.kv_stride : inner;
  s.q_batch = packed ? s.keys * s.kv_stride : count * inner;
  float* base = kv.data_ptr<float>();
  float* k = packed ? base + inner : base;
  float* queries = packed ? base + first * s.kv_stride : q.data_ptr<float>();
  return {s, queries, k, k + inner};
}

/// Runs `kernel(first, last)` over the B · H (row, head) pairs on LibTorch's intra-op threads.
template <typename Kernel>
void over_pairs(const kernels::AttentionShape& s, Kernel kernel) {
  // A pair is ~N² · d multiply-adds; a grain of 16 keeps the split overhead small.
  at::parallel_for(0, s.batch * s.heads, 16, kernel);
}

/// Forward: the probabilities (which the backward pass needs) and the output.
std::pair<torch::Tensor, torch::Tensor> attend(const torch::Tensor& q, const torch::Tensor& kv,
                                               const torch::Tensor& bias, float scale,
                                               int64_t first, int64_t count) {
  const auto in = inputs_of(q, kv, first, count, has_bias(bias) ? bias.size(0) : 0);
  const auto& s = in.shape;
  auto scores = torch::empty({s.batch, s.heads, s.queries, s.keys}, kv.options());
  const float* bias_data = has_bias(bias) ? bias.data_ptr<float>() : nullptr;
  over_pairs(s, [&](int64_t from, int64_t to) {
    kernels::attention_scores(s, in.q, in.k, bias_data, scale, scores.data_ptr<float>(), from, to);
  });
  auto probs = torch::softmax(scores, -1);
  auto out = torch::empty({s.batch, s.queries, s.heads * s.head_dim}, kv.options());
  over_pairs(s, [&](int64_t from, int64_t to) {
    kernels::attention_mix(s, probs.data_ptr<float>(), in.v, out.data_ptr<float>(), from, to);
  });
  return {probs, out};
}

/// Inputs (q, kv, bias): q and kv as inputs_of takes them; packed, q is kv itself and gets the
/// whole gradient.
struct FusedAttention : torch::autograd::Function<FusedAttention> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& q,
                               const torch::Tensor& kv, const torch::Tensor& bias, double scale,
                               int64_t first, int64_t count) {
    auto [probs, out] = attend(q, kv, bias, static_cast<float>(scale), first, count);
    ctx->save_for_backward({q, kv, probs});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["first"] = first;
    ctx->saved_data["bias_heads"] = has_bias(bias) ? bias.size(0) : int64_t{0};
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &q = saved[0], &kv = saved[1], &probs = saved[2];
    const auto scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    const int64_t first = ctx->saved_data["first"].toInt();
    const int64_t bias_heads = ctx->saved_data["bias_heads"].toInt();
    const auto in = inputs_of(q, kv, first, probs.size(2), bias_heads);
    const auto& s = in.shape;
    const bool packed = kv.size(2) == 3;
    const auto grad_out = grads[0].contiguous();
    // Every cell of k's and v's gradient is written below, q's only for the queries taken.
    auto grad_kv = packed && s.queries < s.keys ? torch::zeros_like(kv) : torch::empty_like(kv);
    auto grad_q = packed ? grad_kv : torch::empty_like(q);
    const auto grad = inputs_of(grad_q, grad_kv, first, s.queries, bias_heads);
    auto grad_probs = torch::empty_like(probs);
    over_pairs(s, [&](int64_t from, int64_t to) {
      kernels::attention_mix_backward(s, probs.data_ptr<float>(), in.v, grad_out.data_ptr<float>(),
                                      grad_probs.data_ptr<float>(), grad.v, from, to);
    });
    // Softmax backward: dS = P ⊙ (dP − Σ_j P dP), in place over dP.
    auto grad_scores = grad_probs.sub_((grad_probs * probs).sum(-1, /*keepdim=*/true)).mul_(probs);
    over_pairs(s, [&](int64_t from, int64_t to) {
      kernels::attention_scores_backward(s, grad_scores.data_ptr<float>(), in.q, in.k, scale,
                                         grad.q, grad.k, from, to);
    });
    torch::Tensor grad_bias;
    if (bias_heads > 0 && ctx->needs_input_grad(2)) {
      grad_bias = grad_scores.sum(0);  // [H, count, N]
      if (bias_heads == 1) grad_bias = grad_bias.sum(0, /*keepdim=*/true);
    }
    return {packed ? grad_kv : grad_q,
            packed ? torch::Tensor() : grad_kv,
            grad_bias,
            torch::Tensor(),
            torch::Tensor(),
            torch::Tensor()};
  }
};

/// Both entry points: checks, then the probabilities alone (no graph) or the autograd operation.
torch::Tensor run_attention(const torch::Tensor& q, const torch::Tensor& kv,
                            const torch::Tensor& bias, double scale, int64_t first, int64_t count,
                            torch::Tensor* probs) {
  TORCH_CHECK(
      !bias.defined() || (bias.dim() == 3 && (bias.size(0) == 1 || bias.size(0) == kv.size(3)) &&
                          bias.size(1) == count && bias.size(2) == kv.size(1)),
      "fused_attention: bias [1 or H, count, N]");
  const auto b = bias.defined() ? bias.contiguous() : torch::empty({0}, kv.options());
  if (probs != nullptr) {
    torch::NoGradGuard no_grad;
    auto [p, out] = attend(q, kv, b, static_cast<float>(scale), first, count);
    *probs = p;
    return out;
  }
  return FusedAttention::apply(q, kv, b, scale, first, count);
}

}  // namespace

bool fused_attention_applies(const torch::Tensor& qkv) {
  return qkv.device().is_cpu() && qkv.scalar_type() == torch::kFloat;
}

namespace {

/// The kernels' float32 copy of a projection that bfloat16 autocast produced (differentiable:
/// its gradient goes back as bfloat16), or the tensor itself, contiguous.
torch::Tensor kernel_input(const torch::Tensor& t) {
  return t.scalar_type() == torch::kBFloat16 ? t.to(torch::kFloat).contiguous() : t.contiguous();
}

bool kernel_takes(const torch::Tensor& t) {
  return t.device().is_cpu() &&
         (t.scalar_type() == torch::kFloat || t.scalar_type() == torch::kBFloat16);
}

}  // namespace

torch::Tensor fused_attention(const torch::Tensor& qkv, const torch::Tensor& bias, double scale,
                              int64_t first, int64_t count, torch::Tensor* probs) {
  TORCH_CHECK(kernel_takes(qkv) && qkv.dim() == 5 && qkv.size(2) == 3,
              "fused_attention: qkv [B, N, 3, H, d], float32 or bfloat16 on the CPU");
  TORCH_CHECK(first >= 0 && count > 0 && first + count <= qkv.size(1),
              "fused_attention: queries [first, first + count) out of [0, N)");
  const auto packed = kernel_input(qkv);
  return run_attention(packed, packed, bias, scale, first, count, probs);
}

torch::Tensor fused_attention(const torch::Tensor& q, const torch::Tensor& kv,
                              const torch::Tensor& bias, double scale, torch::Tensor* probs) {
  TORCH_CHECK(kernel_takes(q) && kernel_takes(kv) && q.dim() == 4 && kv.dim() == 5 &&
                  kv.size(2) == 2 && q.size(0) == kv.size(0) && q.size(2) == kv.size(3) &&
                  q.size(3) == kv.size(4) && q.size(1) > 0,
              "fused_attention: q [B, count, H, d] and kv [B, N, 2, H, d], float32 or bfloat16 "
              "on the CPU");
  return run_attention(kernel_input(q), kernel_input(kv), bias, scale, 0, q.size(1), probs);
}

}  // namespace maskprior::runtime
