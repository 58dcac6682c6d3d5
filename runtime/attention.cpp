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

kernels::AttentionShape shape_of(const torch::Tensor& qkv, int64_t count, int64_t bias_heads) {
  kernels::AttentionShape s;
  s.batch = qkv.size(0);
  s.keys = qkv.size(1);
  s.heads = qkv.size(3);
  s.head_dim = qkv.size(4);
  s.queries = count;
  s.bias_heads = bias_heads;
  s.stride = 3 * s.heads * s.head_dim;
  return s;
}

/// q, k, v inside the packed [B, N, 3, H, d] data: q from position `first` on.
struct Parts {
  float *q, *k, *v;
};
Parts parts_of(const torch::Tensor& packed, const kernels::AttentionShape& s, int64_t first) {
  float* base = packed.data_ptr<float>();
  const int64_t inner = s.heads * s.head_dim;
  return {base + first * s.stride, base + inner, base + 2 * inner};
}

/// Runs `kernel(first, last)` over the B · H (row, head) pairs on LibTorch's intra-op threads.
template <typename Kernel>
void over_pairs(const kernels::AttentionShape& s, Kernel kernel) {
  // A pair is ~N² · d multiply-adds; a grain of 16 keeps the split overhead small.
  at::parallel_for(0, s.batch * s.heads, 16, kernel);
}

/// Forward: the probabilities (which the backward pass needs) and the output.
std::pair<torch::Tensor, torch::Tensor> attend(const torch::Tensor& qkv, const torch::Tensor& bias,
                                               float scale, int64_t first, int64_t count) {
  const auto s = shape_of(qkv, count, has_bias(bias) ? bias.size(0) : 0);
  const auto in = parts_of(qkv, s, first);
  auto scores = torch::empty({s.batch, s.heads, s.queries, s.keys}, qkv.options());
  const float* bias_data = has_bias(bias) ? bias.data_ptr<float>() : nullptr;
  over_pairs(s, [&](int64_t from, int64_t to) {
    kernels::attention_scores(s, in.q, in.k, bias_data, scale, scores.data_ptr<float>(), from, to);
  });
  auto probs = torch::softmax(scores, -1);
  auto out = torch::empty({s.batch, s.queries, s.heads * s.head_dim}, qkv.options());
  over_pairs(s, [&](int64_t from, int64_t to) {
    kernels::attention_mix(s, probs.data_ptr<float>(), in.v, out.data_ptr<float>(), from, to);
  });
  return {probs, out};
}

struct FusedAttention : torch::autograd::Function<FusedAttention> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& qkv,
                               const torch::Tensor& bias, double scale, int64_t first,
                               int64_t count) {
    auto [probs, out] = attend(qkv, bias, static_cast<float>(scale), first, count);
    ctx->save_for_backward({qkv, probs});
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["first"] = first;
    ctx->saved_data["bias_heads"] = has_bias(bias) ? bias.size(0) : int64_t{0};
    return out;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &qkv = saved[0], &probs = saved[1];
    const auto scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    const int64_t first = ctx->saved_data["first"].toInt();
    const int64_t bias_heads = ctx->saved_data["bias_heads"].toInt();
    const auto s = shape_of(qkv, probs.size(2), bias_heads);
    const auto grad_out = grads[0].contiguous();
    // Every cell of k's and v's gradient is written below, q's only for the queries taken.
    auto grad_qkv = s.queries == s.keys ? torch::empty_like(qkv) : torch::zeros_like(qkv);
    const auto in = parts_of(qkv, s, first);
    const auto grad = parts_of(grad_qkv, s, first);
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
    if (bias_heads > 0 && ctx->needs_input_grad(1)) {
      grad_bias = grad_scores.sum(0);  // [H, count, N]
      if (bias_heads == 1) grad_bias = grad_bias.sum(0, /*keepdim=*/true);
    }
    return {grad_qkv, grad_bias, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

bool fused_attention_applies(const torch::Tensor& qkv) {
  return qkv.device().is_cpu() && qkv.scalar_type() == torch::kFloat;
}

torch::Tensor fused_attention(const torch::Tensor& qkv, const torch::Tensor& bias, double scale,
                              int64_t first, int64_t count, torch::Tensor* probs) {
  TORCH_CHECK(fused_attention_applies(qkv) && qkv.dim() == 5 && qkv.size(2) == 3,
              "fused_attention: qkv [B, N, 3, H, d], float32 on the CPU");
  TORCH_CHECK(first >= 0 && count > 0 && first + count <= qkv.size(1),
              "fused_attention: queries [first, first + count) out of [0, N)");
  TORCH_CHECK(
      !bias.defined() || (bias.dim() == 3 && (bias.size(0) == 1 || bias.size(0) == qkv.size(3)) &&
                          bias.size(1) == count && bias.size(2) == qkv.size(1)),
      "fused_attention: bias [1 or H, count, N]");
  const auto packed = qkv.contiguous();
  const auto b = bias.defined() ? bias.contiguous() : torch::empty({0}, qkv.options());
  if (probs != nullptr) {
    torch::NoGradGuard no_grad;
    auto [p, out] = attend(packed, b, static_cast<float>(scale), first, count);
    *probs = p;
    return out;
  }
  return FusedAttention::apply(packed, b, scale, first, count);
}

}  // namespace maskprior::runtime
