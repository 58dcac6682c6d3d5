#include "runtime/model.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "core/error.h"

namespace maskprior::runtime {

namespace {

namespace F = torch::nn::functional;

torch::nn::Linear linear(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

std::string shape_text(const torch::Tensor& t) {
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) text += (d ? ", " : "") + std::to_string(t.size(d));
  return text + "]";
}

}  // namespace

BlockImpl::BlockImpl(const ModelConfig& config) : heads(config.heads), head_dim(config.head_dim) {
  const int64_t inner = config.heads * config.head_dim;
  ln_attention = register_module("ln_attention",
                                 torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim})));
  wq = register_module("wq", linear(config.dim, inner, /*bias=*/false));
  wk = register_module("wk", linear(config.dim, inner, /*bias=*/false));
  wv = register_module("wv", linear(config.dim, inner, /*bias=*/false));
  wo = register_module("wo", linear(inner, config.dim, /*bias=*/true));
  ln_mlp =
      register_module("ln_mlp", torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim})));
  fc_in = register_module("fc_in", linear(config.dim, config.mlp, /*bias=*/true));
  fc_out = register_module("fc_out", linear(config.mlp, config.dim, /*bias=*/true));
}

MaskedTransformerImpl::MaskedTransformerImpl(const ModelConfig& config) : config_(config) {
  const bool patches = config.patch_features > 0;
  for (auto [value, name] : {std::pair{patches ? config.patch_features : config.vocab,
                                       patches ? "patch_features" : "vocab"},
                             {config.seq_len, "seq_len"},
                             {config.dim, "dim"},
                             {config.depth, "depth"},
                             {config.heads, "heads"},
                             {config.head_dim, "head_dim"},
                             {config.mlp, "mlp"}}) {
    if (value <= 0) {
      throw InputError(fmt::format("[model] {} must be positive, got {}", name, value));
    }
  }
  if (config.readout == Readout::kClsClassify && config.classes <= 0) {
    throw InputError(fmt::format("[model] classes must be positive, got {}", config.classes));
  }
  if (patches) {
    patch_embedding_ = register_module("patch_embedding",
                                       linear(config.patch_features, config.dim, /*bias=*/true));
    cls_embedding_ = register_parameter("cls_embedding", torch::randn({config.dim}));
  } else {
    token_embedding_ =
        register_module("token_embedding", torch::nn::Embedding(config.vocab, config.dim));
  }
  position_embedding_ =
      register_parameter("position_embedding", torch::randn({config.seq_len, config.dim}));
  for (int64_t l = 0; l < config.depth; ++l) {
    blocks_.push_back(register_module("block" + std::to_string(l), Block(config)));
  }
  ln_final_ =
      register_module("ln_final", torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim})));
  const int64_t outputs = config.readout == Readout::kClsRegression ? 1
                          : config.readout == Readout::kClsClassify ? config.classes
                                                                    : config.vocab;
  head_ = register_module("head", linear(config.dim, outputs, /*bias=*/true));
  if (config.readout == Readout::kCausalLm) {
    causal_ = register_buffer(
        "causal", torch::ones({config.seq_len, config.seq_len}, torch::kBool).triu(/*diagonal=*/1));
  }
}

torch::Tensor MaskedTransformerImpl::embed(const torch::Tensor& ids) {
  if (config_.patch_features > 0) {
    if (ids.dim() != 3 || ids.size(1) != config_.seq_len - 1 ||
        ids.size(2) != config_.patch_features || !ids.is_floating_point()) {
      throw InputError(fmt::format("[model] expected float patches [B, {}, {}], got {}",
                                   config_.seq_len - 1, config_.patch_features, shape_text(ids)));
    }
    auto cls = cls_embedding_.view({1, 1, config_.dim}).expand({ids.size(0), 1, config_.dim});
    return torch::cat({cls, patch_embedding_(ids)}, 1) + position_embedding_;
  }
  if (ids.dim() != 2 || ids.size(1) != config_.seq_len) {
    throw InputError(fmt::format("[model] expected token ids [B, {}], got {}", config_.seq_len,
                                 shape_text(ids)));
  }
  return token_embedding_(ids) + position_embedding_;
}

torch::Tensor MaskedTransformerImpl::attention_bias(int64_t layer) const {
  torch::Tensor bias;
  if (mask_.defined()) {
    const int64_t l = mask_.size(0) == 1 ? 0 : layer;
    bias = F::logsigmoid(mask_.select(0, l));  // [H', N, N]
  }
  torch::Tensor excluded;
  if (hard_.defined()) excluded = hard_;
  if (causal_.defined()) excluded = excluded.defined() ? (excluded | causal_) : causal_;
  if (excluded.defined()) {
    auto neg = torch::zeros(excluded.sizes(), position_embedding_.options())
                   .masked_fill(excluded, -std::numeric_limits<float>::infinity());
    bias = bias.defined() ? bias + neg : neg;
  }
  return bias;
}

torch::Tensor MaskedTransformerImpl::run(const torch::Tensor& ids,
                                         std::vector<torch::Tensor>* attention) {
  auto x = embed(ids);
  const int64_t batch = x.size(0), n = x.size(1);
  const double scale = 1.0 / std::sqrt(static_cast<double>(config_.head_dim));
  for (int64_t l = 0; l < config_.depth; ++l) {
    auto& block = blocks_[static_cast<size_t>(l)];
    auto h = block->ln_attention(x);
    auto split = [&](torch::nn::Linear& w) {
      return w(h).view({batch, n, config_.heads, config_.head_dim}).transpose(1, 2);
    };
    auto q = split(block->wq), k = split(block->wk), v = split(block->wv);
    auto scores = torch::matmul(q, k.transpose(-2, -1)) * scale;  // [B, H, N, N]
    if (auto bias = attention_bias(l); bias.defined()) scores = scores + bias;
    auto probs = torch::softmax(scores, -1);
    if (attention) attention->push_back(probs.detach());
    auto mixed = torch::matmul(probs, v).transpose(1, 2).reshape({batch, n, -1});
    x = x + block->wo(mixed);
    x = x + block->fc_out(F::gelu(block->fc_in(block->ln_mlp(x))));
  }
  if (config_.readout == Readout::kClsRegression) {
    return head_(ln_final_(x.select(1, 0))).squeeze(-1);
  }
  if (config_.readout == Readout::kClsClassify) return head_(ln_final_(x.select(1, 0)));
  return head_(ln_final_(x));
}

torch::Tensor MaskedTransformerImpl::forward(const torch::Tensor& ids) {
  return run(ids, nullptr);
}

std::vector<torch::Tensor> MaskedTransformerImpl::attention_maps(const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> maps;
  run(ids, &maps);
  return maps;
}

torch::Tensor MaskedTransformerImpl::attention_input(const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  return blocks_.front()->ln_attention(embed(ids));
}

void MaskedTransformerImpl::set_mask(const torch::Tensor& mask, bool learnable) {
  const bool shape_ok = mask.dim() == 4 && (mask.size(0) == 1 || mask.size(0) == config_.depth) &&
                        (mask.size(1) == 1 || mask.size(1) == config_.heads) &&
                        mask.size(2) == config_.seq_len && mask.size(3) == config_.seq_len;
  if (!shape_ok) {
    throw InputError(fmt::format(
        "[set_mask] mask of shape {} does not fit a model with depth {}, {} heads and N = {} "
        "(expected [1 or {}, 1 or {}, {}, {}])",
        shape_text(mask), config_.depth, config_.heads, config_.seq_len, config_.depth,
        config_.heads, config_.seq_len, config_.seq_len));
  }
  internal_check(!mask_.defined(), "set_mask called twice");
  auto value = mask.detach().to(position_embedding_.options()).clone();
  mask_learnable_ = learnable;
  mask_ = learnable ? register_parameter("mask", value) : register_buffer("mask", value);
  mask_init_ = register_buffer("mask_init", value.clone());
}

void MaskedTransformerImpl::set_hard_mask(const torch::Tensor& hard) {
  const int64_t n = config_.seq_len;
  if (hard.dim() != 2 || hard.size(0) != n || hard.size(1) != n) {
    throw InputError(fmt::format("[set_hard_mask] hard mask of shape {} does not fit N = {}",
                                 shape_text(hard), n));
  }
  auto value = hard.to(torch::kBool).to(position_embedding_.device());
  auto excluded = causal_.defined() ? (value | causal_) : value;
  auto all_out = excluded.all(/*dim=*/1).nonzero();
  if (all_out.size(0) > 0) {
    throw InputError(fmt::format(
        "[set_hard_mask] the hard mask{} excludes every key of query row {}; softmax of nothing",
        causal_.defined() ? " together with causal masking" : "", all_out[0][0].item<int64_t>()));
  }
  internal_check(!hard_.defined(), "set_hard_mask called twice");
  hard_ = register_buffer("hard", value);
}

int64_t parameter_count(MaskedTransformer& model) {
  int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  return count;
}

}  // namespace maskprior::runtime
