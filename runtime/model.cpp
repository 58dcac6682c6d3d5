#include "runtime/model.h"

#include <torch/version.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.h"
#include "runtime/attention.h"
#include "runtime/model_parts.h"

namespace maskprior::runtime {

namespace {

namespace F = torch::nn::functional;

torch::nn::Linear linear(int64_t in, int64_t out, bool bias) {
  return torch::nn::Linear(torch::nn::LinearOptions(in, out).bias(bias));
}

/// The cache key of a source tensor: its storage and version counter (an in-place change, such as
/// an optimizer step or a checkpoint load, bumps the version; moving it changes the storage).
std::pair<const void*, int64_t> source_key(const torch::Tensor& t) {
  if (!t.defined()) return {nullptr, -1};
  return {t.data_ptr(), static_cast<int64_t>(t._version())};
}

/// t with dropout p applied when `training` (and p > 0); t itself otherwise.
torch::Tensor dropped(const torch::Tensor& t, double p, bool training) {
  return training && p > 0 ? F::dropout(t, F::DropoutFuncOptions().p(p).training(true)) : t;
}

/// softmax(q kᵀ · scale + bias) v for q, k, v [B, H, N, d_head] and bias [H' or 1, N, N] (or
/// undefined). With `attention`, also appends the probabilities [B, H, N, N] (detached).
torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                     const torch::Tensor& bias, double scale, double dropout,
                     std::vector<torch::Tensor>* attention) {
#if TORCH_VERSION_MAJOR >= 2
  // The fused kernel (its default scale is 1/√d_head); a float additive mask keeps M's gradient.
  if (attention == nullptr) {
    return bias.defined() ? torch::scaled_dot_product_attention(q, k, v, bias, dropout)
                          : torch::scaled_dot_product_attention(q, k, v, {}, dropout);
  }
#endif
  if (q.size(2) == 1 && attention == nullptr && dropout == 0) {
    // One query per row (cached decoding): products and sums, not one tiny GEMM per (row, head),
    // which is how LibTorch 1.13 runs a batched matmul on the CPU.
    auto scores = (q * k).sum(-1).unsqueeze(2).mul_(scale);  // [B, H, 1, P]
    if (bias.defined()) scores.add_(bias);
    auto probs = torch::softmax(scores, -1);
    return (probs.transpose(-2, -1) * v).sum(2, /*keepdim=*/true);  // [B, H, 1, d_head]
  }
  auto scores = torch::matmul(q, k.transpose(-2, -1));  // [B, H, N, N], fresh: safe in place
  scores.mul_(scale);
  if (bias.defined()) scores.add_(bias);
  auto probs = torch::softmax(scores, -1);
  if (attention) attention->push_back(probs.detach());
  probs = dropped(probs, dropout, /*training=*/true);  // dropout is 0 outside training
  return torch::matmul(probs, v);
}

/// Layer `layer`'s part of the whole [L' or 1, H' or 1, N, N] attention bias (or undefined) for
/// queries [first, first + n) and keys [0, keys): [H' or 1, n, keys].
torch::Tensor bias_block(const torch::Tensor& bias, int64_t layer, int64_t first, int64_t n,
                         int64_t keys) {
  if (!bias.defined()) return bias;
  auto these = bias.select(0, bias.size(0) == 1 ? 0 : layer);
  if (first == 0 && n == these.size(1) && keys == these.size(2)) return these;
  return these.narrow(1, first, n).narrow(2, 0, keys).contiguous();
}

/// The same for queries [first, first + n) and keys [0, first + n): [H' or 1, n, first + n].
torch::Tensor layer_bias(const torch::Tensor& bias, int64_t layer, int64_t first, int64_t n) {
  return bias_block(bias, layer, first, n, first + n);
}

/// The sinusoidal position embedding [n, dim]: PE(p, 2i) = sin(p / 10000^(2i/dim)),
/// PE(p, 2i + 1) = cos(p / 10000^(2i/dim)).
torch::Tensor sinusoids(int64_t n, int64_t dim) {
  const auto position = torch::arange(n, torch::kDouble).unsqueeze(1);
  const auto even = torch::arange(0, dim, 2, torch::kDouble);
  const auto angle = position * torch::pow(10000.0, -even / static_cast<double>(dim));
  auto table = torch::zeros({n, dim}, torch::kDouble);
  table.index_put_({torch::indexing::Slice(), torch::indexing::Slice(0, dim, 2)},
                   torch::sin(angle));
  table.index_put_({torch::indexing::Slice(), torch::indexing::Slice(1, dim, 2)},
                   torch::cos(angle).narrow(1, 0, dim / 2));
  return table.to(torch::kFloat);
}

/// Rotary positions (RoPE, Su et al. 2021), on queries or keys x whose dimension `seq_dim` (≥ 0)
/// runs over positions [first, first + S) and whose last is d_head (even): with θ_i =
/// 10000^(−2i/d_head), i < d_head/2, the pair (x_i, x_{i + d_head/2}) at position p turns by the
/// angle p·θ_i. A query at p and a key at j then score by their offset p − j alone.
torch::Tensor rotate(const torch::Tensor& x, int64_t first, int64_t seq_dim) {
  const int64_t s = x.size(seq_dim), d = x.size(-1), half = d / 2;
  const auto options = torch::TensorOptions().dtype(torch::kDouble).device(x.device());
  const auto inverse =
      torch::pow(10000.0, torch::arange(half, options) * (-2.0 / static_cast<double>(d)));
  const auto angle = torch::arange(first, first + s, options).unsqueeze(1) * inverse;  // [S, d/2]
  std::vector<int64_t> shape(static_cast<size_t>(x.dim() - seq_dim), 1);
  shape.front() = s;
  shape.back() = d;
  const auto cos = torch::cat({angle.cos(), angle.cos()}, 1).to(x.scalar_type()).view(shape);
  const auto sin = torch::cat({angle.sin(), angle.sin()}, 1).to(x.scalar_type()).view(shape);
  return x * cos + torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1) * sin;
}

/// ALiBi's slopes (Press et al. 2022): m_h = 2^(−8h/H) for heads h = 1..H, [H].
torch::Tensor alibi_slopes(int64_t heads) {
  return torch::pow(
      2.0, torch::arange(1, heads + 1, torch::kDouble) * (-8.0 / static_cast<double>(heads)));
}

/// InputError unless `prior` fits size `length` of a model of `config` (set_sized_priors). With
/// learnable values, `shape` gets their [L', H'] at the first size and must equal it at others.
void check_sized_prior(const ModelConfig& config, int64_t length, const SizedPrior& prior,
                       int64_t rule_count, bool learnable, std::vector<int64_t>& shape) {
  const auto fail = [&](const std::string& why) {
    throw InputError(fmt::format("[set_sized_priors] size {}: {}", length, why));
  };
  const int64_t n = config.seq_len;
  if (length < 1 || length > n || (config.patch_features > 0 && length != n)) {
    fail(config.patch_features > 0 ? fmt::format("a patch model has one length, {}", n)
                                   : fmt::format("the model runs lengths 1 to {}", n));
  }
  const auto& v = prior.values;
  if (v.defined() &&
      !(v.dim() == 4 && v.is_floating_point() && (v.size(0) == 1 || v.size(0) == config.depth) &&
        (v.size(1) == 1 || v.size(1) == config.heads) && v.size(2) == length &&
        v.size(3) == length)) {
    fail(fmt::format(
        "values {} do not fit a model with depth {} and {} heads (expected float "
        "[1 or {}, 1 or {}, {}, {}])",
        shape_text(v), config.depth, config.heads, config.depth, config.heads, length, length));
  }
  if (v.defined() && learnable) {
    const auto& r = prior.rules;
    if (!r.defined() || r.scalar_type() != torch::kLong || r.sizes() != v.sizes()) {
      fail(fmt::format("a learnable prior needs rules int64 {} like its values, got {}",
                       shape_text(v), r.defined() ? shape_text(r) : "none"));
    }
    if (rule_count < 1 || r.min().item<int64_t>() < 0 || r.max().item<int64_t>() >= rule_count) {
      fail(fmt::format("rules must lie in [0, rule_count = {}), got [{}, {}]", rule_count,
                       r.min().item<int64_t>(), r.max().item<int64_t>()));
    }
    if (shape.empty()) shape = {v.size(0), v.size(1)};
    if (shape[0] != v.size(0) || shape[1] != v.size(1)) {
      fail(
          fmt::format("values {} have other layers or heads than another size's [{}, {}, T, T]; "
                      "learnable rule offsets are shared by every size",
                      shape_text(v), shape[0], shape[1]));
    }
  }
  const auto& h = prior.hard;
  if (!h.defined()) return;
  if (h.dim() != 2 || h.size(0) != length || h.size(1) != length) {
    fail(fmt::format("hard mask {} is not [{}, {}]", shape_text(h), length, length));
  }
  auto excluded = h.to(torch::kBool).cpu();
  if (config.readout == Readout::kCausalLm) {
    excluded = excluded | torch::ones({length, length}, torch::kBool).triu(/*diagonal=*/1);
  }
  const auto all_out = excluded.all(/*dim=*/1).nonzero();
  if (all_out.size(0) > 0) {
    fail(fmt::format("the hard mask excludes every key of query row {}; softmax of nothing",
                     all_out[0][0].item<int64_t>()));
  }
}

}  // namespace

PositionEmbedding parse_position_embedding(const std::string& name) {
  if (name == "learned") return PositionEmbedding::kLearned;
  if (name == "sinusoidal") return PositionEmbedding::kSinusoidal;
  if (name == "none") return PositionEmbedding::kNone;
  if (name == "rope") return PositionEmbedding::kRope;
  if (name == "alibi") return PositionEmbedding::kAlibi;
  throw InputError(fmt::format(
      "pos_embedding must be one of learned, sinusoidal, none, rope, alibi, got '{}'", name));
}

Activation parse_activation(const std::string& name) {
  if (name == "gelu") return Activation::kGelu;
  if (name == "relu") return Activation::kRelu;
  throw InputError(fmt::format("activation must be one of gelu, relu, got '{}'", name));
}

bool parse_post_norm(const std::string& name) {
  if (name == "pre" || name == "post") return name == "post";
  throw InputError(fmt::format("norm must be one of pre, post, got '{}'", name));
}

bool parse_qk_norm(const std::string& name) {
  if (name == "none" || name == "layer") return name == "layer";
  throw InputError(fmt::format("qk_norm must be one of none, layer, got '{}'", name));
}

bool parse_yes_no(const std::string& setting, const std::string& value) {
  if (value == "yes" || value == "no") return value == "yes";
  throw InputError(fmt::format("{} must be one of yes, no, got '{}'", setting, value));
}

AttentionInit parse_attn_init(const std::string& name) {
  if (name == "default") return AttentionInit::kDefault;
  if (name == "torch") return AttentionInit::kTorch;
  throw InputError(fmt::format("attn_init must be one of default, torch, got '{}'", name));
}

BlockImpl::BlockImpl(const ModelConfig& config)
    : heads(config.heads),
      head_dim(config.head_dim),
      post_norm(config.post_norm),
      attn_dropout(config.attn_dropout),
      resid_dropout(config.resid_dropout),
      mlp_dropout(config.mlp_dropout),
      activation(config.activation) {
  const int64_t inner = config.heads * config.head_dim;
  ln_attention = register_module("ln_attention",
                                 torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim})));
  wq = register_module("wq", linear(config.dim, inner, config.qkv_bias));
  wk = register_module("wk", linear(config.dim, inner, config.qkv_bias));
  wv = register_module("wv", linear(config.dim, inner, config.qkv_bias));
  wo = register_module("wo", linear(inner, config.dim, /*bias=*/true));
  if (config.attn_init == AttentionInit::kTorch) {  // nn.MultiheadAttention._reset_parameters
    torch::NoGradGuard no_grad;
    // xavier-uniform on the packed [3 · inner, dim] in-projection: fan in dim, fan out 3 · inner.
    const double bound = std::sqrt(6.0 / static_cast<double>(config.dim + 3 * inner));
    for (auto* w : {&wq, &wk, &wv}) {
      (*w)->weight.uniform_(-bound, bound);
      if ((*w)->bias.defined()) (*w)->bias.zero_();
    }
    wo->bias.zero_();
  }
  ln_mlp =
      register_module("ln_mlp", torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim})));
  fc_in = register_module("fc_in", linear(config.dim, config.mlp, /*bias=*/true));
  fc_out = register_module("fc_out", linear(config.mlp, config.dim, /*bias=*/true));
  if (config.qk_norm) {
    const auto over_head = torch::nn::LayerNormOptions({config.head_dim});
    q_norm = register_module("q_norm", torch::nn::LayerNorm(over_head));
    k_norm = register_module("k_norm", torch::nn::LayerNorm(over_head));
  }
}

torch::Tensor BlockImpl::normed_queries(const torch::Tensor& q) {
  return q_norm ? q_norm(q) : q;
}

torch::Tensor BlockImpl::normed_keys(const torch::Tensor& k) {
  return k_norm ? k_norm(k) : k;
}

torch::Tensor BlockImpl::attention_input(const torch::Tensor& x) {
  return post_norm ? x : ln_attention(x);
}

torch::Tensor BlockImpl::finish(const torch::Tensor& residual, const torch::Tensor& attended) {
  const bool training = is_training();
  auto mlp = [&](const torch::Tensor& h) {
    const auto inner = fc_in(h);
    const auto active = activation == Activation::kRelu ? torch::relu(inner) : F::gelu(inner);
    return dropped(fc_out(dropped(active, mlp_dropout, training)), resid_dropout, training);
  };
  if (post_norm) {
    const auto y = ln_attention(residual + dropped(wo(attended), resid_dropout, training));
    return ln_mlp(y + mlp(y));
  }
  const auto y = residual + dropped(wo(attended), resid_dropout, training);
  return y + mlp(ln_mlp(y));
}

ModelFootprint estimate_footprint(const ModelConfig& config, int64_t batch) {
  const auto d = static_cast<double>(config.dim), n = static_cast<double>(config.seq_len),
             heads = static_cast<double>(config.heads),
             inner = heads * static_cast<double>(config.head_dim),
             mlp = static_cast<double>(config.mlp), depth = static_cast<double>(config.depth);
  const double inputs = config.patch_features > 0 ? static_cast<double>(config.patch_features) + 2
                                                  : static_cast<double>(config.vocab);
  const double outputs = config.readout == Readout::kClsRegression ? 1
                         : config.readout == Readout::kClsClassify
                             ? static_cast<double>(config.classes)
                             : static_cast<double>(config.vocab);
  ModelFootprint f;
  const double qk_norm = config.qk_norm ? 4 * static_cast<double>(config.head_dim) : 0;
  const double qkv_bias = config.qkv_bias ? 3 * inner : 0;
  const double block =
      4 * d * inner + 2 * d * mlp + mlp + 5 * d + qk_norm + qkv_bias;  // Wq, Wk, Wv, Wo, MLP, LNs
  const double final_norm = config.final_norm ? 2 * d : 0;
  f.parameters = inputs * d + n * d + depth * block + final_norm + (d + 1) * outputs;
  f.mask_logits = depth * heads * n * n;
  // Kept per row and layer: the block's input and norms (3d), Q, K, V and the attended values
  // (4 × inner), scores, probabilities and a dropout mask (3 × heads × N per query), the MLP's
  // two hidden activations.
  const double kept = n * depth * (3 * d + 4 * inner + 3 * heads * n + 2 * mlp) + n * outputs;
  f.training_bytes = 4 * (4 * (f.parameters + f.mask_logits) + static_cast<double>(batch) * kept);
  return f;
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
  if (!std::isfinite(config.pos_init_std) || config.pos_init_std < 0) {
    throw InputError(fmt::format("[model] pos_init_std must be a finite number >= 0, got {}",
                                 config.pos_init_std));
  }
  for (auto [p, name] : {std::pair{config.attn_dropout, "attn_dropout"},
                         {config.resid_dropout, "resid_dropout"},
                         {config.mlp_dropout, "mlp_dropout"}}) {
    if (!(p >= 0 && p < 1)) {
      throw InputError(fmt::format("[model] {} must be in [0, 1), got {}", name, p));
    }
  }
  if (config.readout == Readout::kClsClassify && config.classes <= 0) {
    throw InputError(fmt::format("[model] classes must be positive, got {}", config.classes));
  }
  if (config.position == PositionEmbedding::kRope && config.head_dim % 2 != 0) {
    throw InputError(fmt::format(
        "[model] rope positions turn pairs of query/key coordinates: head_dim must be even, got {}",
        config.head_dim));
  }
  if (patches) {
    patch_embedding_ = register_module("patch_embedding",
                                       linear(config.patch_features, config.dim, /*bias=*/true));
    cls_embedding_ = register_parameter("cls_embedding", torch::randn({config.dim}));
  } else {
    token_embedding_ =
        register_module("token_embedding", torch::nn::Embedding(config.vocab, config.dim));
  }
  if (config.position == PositionEmbedding::kLearned) {
    position_embedding_ = register_parameter(
        "position_embedding", torch::randn({config.seq_len, config.dim}) * config.pos_init_std);
  } else {
    position_embedding_ =
        register_buffer("position_embedding", config.position == PositionEmbedding::kSinusoidal
                                                  ? sinusoids(config.seq_len, config.dim)
                                                  : torch::zeros({config.seq_len, config.dim}));
  }
  for (int64_t l = 0; l < config.depth; ++l) {
    blocks_.push_back(register_module("block" + std::to_string(l), Block(config)));
  }
  if (config.final_norm) {
    ln_final_ = register_module("ln_final",
                                torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.dim})));
  }
  const int64_t outputs = config.readout == Readout::kClsRegression ? 1
                          : config.readout == Readout::kClsClassify ? config.classes
                                                                    : config.vocab;
  head_ = register_module("head", linear(config.dim, outputs, /*bias=*/true));
  if (config.readout == Readout::kCausalLm) {
    causal_ = register_buffer(
        "causal", torch::ones({config.seq_len, config.seq_len}, torch::kBool).triu(/*diagonal=*/1));
  }
}

int64_t MaskedTransformerImpl::sequence_length(const torch::Tensor& ids) const {
  const int64_t n = config_.seq_len;
  if (config_.patch_features > 0) {
    if (ids.dim() != 3 || ids.size(1) != n - 1 || ids.size(2) != config_.patch_features ||
        !ids.is_floating_point()) {
      throw InputError(fmt::format("[model] expected float patches [B, {}, {}], got {}", n - 1,
                                   config_.patch_features, shape_text(ids)));
    }
    return n;
  }
  if (ids.dim() != 2 || ids.size(1) < 1 || ids.size(1) > n) {
    throw InputError(fmt::format("[model] expected token ids [B, T] with 1 <= T <= {}, got {}", n,
                                 shape_text(ids)));
  }
  const int64_t t = ids.size(1);
  if (t != n && (mask_.defined() || hard_.defined())) {
    throw InputError(fmt::format(
        "[model] a sequence of {} tokens, but the {} was set for {} tokens; a model that runs "
        "other lengths takes priors per size (set_sized_priors)",
        t, mask_.defined() ? "mask" : "hard mask", n));
  }
  if (!priors_.empty()) prior_of(t);  // InputError for a length without a prior
  return t;
}

torch::Tensor MaskedTransformerImpl::readout(const torch::Tensor& x) {
  return head_(ln_final_ ? ln_final_(x) : x);
}

torch::Tensor MaskedTransformerImpl::embed(const torch::Tensor& ids) {
  const int64_t t = sequence_length(ids);
  if (config_.patch_features > 0) {
    auto cls = cls_embedding_.view({1, 1, config_.dim}).expand({ids.size(0), 1, config_.dim});
    return torch::cat({cls, patch_embedding_(ids)}, 1) + position_embedding_;
  }
  return token_embedding_(ids) + position_embedding_.narrow(0, 0, t);
}

std::optional<MaskedTransformerImpl::Distinct> MaskedTransformerImpl::distinct_inputs(
    const torch::Tensor& ids, int64_t first) {
  if (config_.patch_features > 0 || ids.dim() != 2 || first < 0 ||
      first + ids.size(1) > config_.seq_len || ids.scalar_type() != torch::kLong ||
      !fused(position_embedding_) || !ids.device().is_cpu() || ids.size(0) < 2 * config_.vocab) {
    return std::nullopt;
  }
  if (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= config_.vocab) {
    return std::nullopt;  // embed() reports the token out of range
  }
  const int64_t n = ids.size(1);
  auto table =
      token_embedding_->weight.unsqueeze(1) + position_embedding_.narrow(0, first, n).unsqueeze(0);
  auto index = ids * n + torch::arange(n, ids.options());
  return Distinct{table.view({config_.vocab * n, config_.dim}), index.view({-1})};
}

torch::Tensor MaskedTransformerImpl::embed(const torch::Tensor& ids,
                                           const std::optional<Distinct>& distinct) {
  if (!distinct) return embed(ids);
  return distinct->embedded.index_select(0, distinct->index)
      .view({ids.size(0), ids.size(1), config_.dim});
}

bool MaskedTransformerImpl::fused(const torch::Tensor& x) const {
  return fused_attention_applies(x) && !(is_training() && config_.attn_dropout > 0);
}

torch::Tensor MaskedTransformerImpl::excluded_bias(int64_t length) {
  // A hard mask of N tokens (set_hard_mask), or the sized prior's of T.
  const auto& hard = priors_.empty() ? hard_ : prior_of(length).hard;
  if (!hard.defined() && !causal_.defined()) return {};
  const std::vector<std::pair<const void*, int64_t>> key = {
      source_key(hard),
      source_key(causal_),
      {nullptr, static_cast<int64_t>(position_embedding_.device().type())}};
  auto& cached = excluded_cache_[length];
  if (cached.key != key) {
    torch::NoGradGuard no_grad;
    // The causal mask of T tokens is the top-left T × T of N's.
    const auto causal =
        causal_.defined() ? causal_.narrow(0, 0, length).narrow(1, 0, length) : causal_;
    auto excluded = hard.defined() ? hard : causal;
    if (hard.defined() && causal.defined()) excluded = hard | causal;
    cached.value = torch::zeros(excluded.sizes(), position_embedding_.options())
                       .masked_fill(excluded, -std::numeric_limits<float>::infinity());
    cached.key = key;
  }
  return cached.value;
}

torch::Tensor MaskedTransformerImpl::attention_bias(int64_t length) {
  const auto bias = prior_bias(length);
  if (config_.position != PositionEmbedding::kAlibi) return bias;
  // ALiBi: −m_h · (i − j) for query i and key j (a decoder's later keys are excluded anyway),
  // −m_h · |i − j| in an encoder; [1, H, T, T], cached per T with its sum with a fixed bias.
  auto& cached = alibi_cache_[length];
  const std::vector<std::pair<const void*, int64_t>> key = {
      source_key(bias), {nullptr, static_cast<int64_t>(position_embedding_.device().type())}};
  const bool fixed = !(bias.defined() && bias.requires_grad());
  if (fixed && cached.key == key) return cached.value;
  torch::NoGradGuard no_grad;
  const auto position = torch::arange(length, torch::kDouble);
  const auto distance = (position.unsqueeze(1) - position.unsqueeze(0)).abs();
  const auto slopes = alibi_slopes(config_.heads).view({1, config_.heads, 1, 1});
  const auto distances =
      (-slopes * distance.view({1, 1, length, length})).to(position_embedding_.options());
  if (!fixed) {
    torch::AutoGradMode grad(true);
    return bias + distances;
  }
  cached.value = bias.defined() ? bias + distances : distances;
  cached.key = key;
  alibi_sources_[length] = bias;  // alive while its key is: no other tensor takes its storage
  return cached.value;
}

torch::Tensor MaskedTransformerImpl::prior_bias(int64_t length) {
  const auto excluded = excluded_bias(length);
  if (!priors_.empty()) return sized_bias(length, excluded);
  if (!mask_.defined()) {
    return excluded.defined() ? excluded.view({1, 1, length, length}) : excluded;
  }
  const bool fixed = !(mask_.requires_grad() && torch::GradMode::is_enabled());
  if (!fixed) {
    auto bias = F::logsigmoid(mask_);  // [L', H', N, N], with gradient to M
    return excluded.defined() ? bias + excluded : bias;
  }
  const std::vector<std::pair<const void*, int64_t>> key = {source_key(mask_),
                                                            source_key(excluded)};
  if (bias_cache_.key != key) {
    torch::NoGradGuard no_grad;
    auto bias = F::logsigmoid(mask_);
    bias_cache_.value = excluded.defined() ? bias + excluded : bias;
    bias_cache_.key = key;
  }
  return bias_cache_.value;
}

torch::Tensor MaskedTransformerImpl::sized_bias(int64_t length, const torch::Tensor& excluded) {
  if (!prior_of(length).values.defined()) {  // hard only
    return excluded.defined() ? excluded.view({1, 1, length, length}) : excluded;
  }
  const bool fixed =
      !(rule_offsets_.defined() && rule_offsets_.requires_grad() && torch::GradMode::is_enabled());
  if (!fixed) {
    auto bias = F::logsigmoid(prior_at(length));  // [L', H', T, T], with gradient to the offsets
    return excluded.defined() ? bias + excluded : bias;
  }
  const auto& prior = prior_of(length);
  const std::vector<std::pair<const void*, int64_t>> key = {
      source_key(prior.values), source_key(prior.rules), source_key(rule_offsets_),
      source_key(excluded)};
  auto& cached = prior_bias_cache_[length];
  if (cached.key != key) {
    torch::NoGradGuard no_grad;
    auto bias = F::logsigmoid(prior_at(length));
    cached.value = excluded.defined() ? bias + excluded : bias;
    cached.key = key;
  }
  return cached.value;
}

const SizedPrior& MaskedTransformerImpl::prior_of(int64_t length) const {
  const auto found = priors_.find(length);
  if (found == priors_.end()) {
    throw InputError(
        fmt::format("[model] no prior for sequences of {} tokens: the priors have sizes {}{}",
                    length, fmt::join(prior_sizes(), ", "),
                    priors_.empty() ? " (none: set_sized_priors was not called)" : ""));
  }
  return found->second;
}

torch::Tensor MaskedTransformerImpl::prior_at(int64_t T) {
  const auto& prior = prior_of(T);
  const auto& values = prior.values;
  if (!values.defined() || !rule_offsets_.defined()) return values;
  // M_T[l, h, i, j] = values_T[l, h, i, j] + rule_offsets[l, h, rules_T[l, h, i, j]].
  const auto offsets =
      rule_offsets_.gather(2, prior.rules.view({values.size(0), values.size(1), T * T}));
  return values + offsets.view(values.sizes());
}

std::vector<int64_t> MaskedTransformerImpl::prior_sizes() const {
  std::vector<int64_t> sizes;
  for (const auto& item : priors_) sizes.push_back(item.first);
  return sizes;
}

void MaskedTransformerImpl::set_sized_priors(std::map<int64_t, SizedPrior> priors,
                                             int64_t rule_count, bool learnable) {
  internal_check(!mask_.defined() && !hard_.defined(),
                 "set_sized_priors after set_mask or set_hard_mask");
  internal_check(priors_.empty(), "set_sized_priors called twice");
  if (priors.empty()) throw InputError("[set_sized_priors] no sizes given");
  std::vector<int64_t> shape;  // [L', H'] of learnable values
  for (const auto& [length, prior] : priors) {
    check_sized_prior(config_, length, prior, rule_count, learnable, shape);
  }
  const auto options = position_embedding_.options();
  for (const auto& [length, prior] : priors) {
    SizedPrior kept;
    const auto name = [&, t = length](const char* what) {
      return fmt::format("prior_{}_{}", what, t);
    };
    if (prior.values.defined()) {
      kept.values = register_buffer(name("values"), prior.values.detach().to(options).clone());
      if (learnable) {
        kept.rules = register_buffer(name("rules"), prior.rules.to(options.device()).clone());
      }
    }
    if (prior.hard.defined()) {
      kept.hard = register_buffer(name("hard"), prior.hard.to(options.device(), torch::kBool));
    }
    priors_.emplace(length, kept);
  }
  if (!shape.empty()) {  // learnable, and some size has values
    rule_offsets_ =
        register_parameter("rule_offsets", torch::zeros({shape[0], shape[1], rule_count}, options));
  }
}

torch::Tensor MaskedTransformerImpl::layer_forward(int64_t layer, const torch::Tensor& x,
                                                   int64_t first, const torch::Tensor& bias,
                                                   std::vector<torch::Tensor>* attention,
                                                   torch::Tensor* keys, torch::Tensor* values,
                                                   const Distinct* distinct) {
  const int64_t batch = x.size(0), n = x.size(1);
  if (first == 0 && (keys == nullptr || !keys->defined()) && fused(x)) {
    torch::Tensor kv;
    auto y = segment_layer(layer, x, 0, {}, bias, {0, n}, kv, distinct, attention);
    if (keys != nullptr) {  // a new cache
      *keys = key_view(kv);
      *values = value_view(kv);
    }
    return y;
  }
  auto& block = blocks_[static_cast<size_t>(layer)];
  auto h = block->attention_input(x);
  const auto these_bias = layer_bias(bias, layer, first, n);
  const double scale = 1.0 / std::sqrt(static_cast<double>(config_.head_dim));
  auto split = [&](torch::nn::Linear& w) {
    return w(h).view({batch, n, config_.heads, config_.head_dim}).transpose(1, 2);
  };
  auto q = block->normed_queries(split(block->wq)), k = block->normed_keys(split(block->wk)),
       v = split(block->wv);
  if (config_.position == PositionEmbedding::kRope) {
    q = rotate(q, first, 2);
    k = rotate(k, first, 2);
  }
  if (keys && !keys->defined()) {  // a new cache: these positions
    *keys = k;
    *values = v;
  } else if (keys) {  // a full-length cache: these positions written in place, then [0, first + n)
    keys->narrow(2, first, n).copy_(k);
    values->narrow(2, first, n).copy_(v);
    k = keys->narrow(2, 0, first + n);
    v = values->narrow(2, 0, first + n);
  }
  auto mixed = attend(q, k, v, these_bias, scale, block->attention_dropout(), attention)
                   .transpose(1, 2)
                   .reshape({batch, n, -1});
  return block->finish(x, mixed);
}

torch::Tensor MaskedTransformerImpl::run(const torch::Tensor& ids,
                                         std::vector<torch::Tensor>* attention, Rows rows) {
  const int64_t length = sequence_length(ids);
  if (config_.readout == Readout::kCausalLm && rows.count > 0 && attention == nullptr &&
      config_.patch_features == 0 && ids.device().is_cpu() && fused(position_embedding_)) {
    // No row of a causal decoder sees a later position: the pass stops at the last row read.
    std::vector<torch::Tensor> kv;
    const auto head = ids.narrow(1, 0, rows.first + rows.count);
    return readout(segment_pass(head, 0, {}, attention_bias(length), rows, kv));
  }
  const auto distinct = distinct_inputs(ids);
  auto x = embed(ids, distinct);
  const auto bias = attention_bias(length);  // [L' or 1, H' or 1, T, T] or undefined
  // A CLS readout needs the last layer at position 0 only (every layer before it everywhere).
  if (config_.readout != Readout::kCausalLm) rows = {0, 1};
  const bool prune = rows.count > 0 && attention == nullptr && fused(x);
  const int64_t last = config_.depth - 1;
  for (int64_t l = 0; l < config_.depth; ++l) {
    const Distinct* input = l == 0 && distinct ? &*distinct : nullptr;
    torch::Tensor kv;
    x = l == last && prune ? segment_layer(l, x, 0, {}, bias, rows, kv, input)
                           : layer_forward(l, x, 0, bias, attention, nullptr, nullptr, input);
  }
  if (rows.count > 0 && !prune) x = x.narrow(1, rows.first, rows.count);
  if (config_.readout == Readout::kClsRegression) {
    return readout(x.select(1, 0)).squeeze(-1);
  }
  if (config_.readout == Readout::kClsClassify) return readout(x.select(1, 0));
  return readout(x);
}

torch::Tensor MaskedTransformerImpl::segment_layer(int64_t layer, const torch::Tensor& x,
                                                   int64_t first, const torch::Tensor& prefix,
                                                   const torch::Tensor& bias, Rows rows,
                                                   torch::Tensor& kv, const Distinct* distinct,
                                                   std::vector<torch::Tensor>* attention) {
  auto& block = blocks_[static_cast<size_t>(layer)];
  const int64_t batch = x.size(0), n = x.size(1), heads = config_.heads, d = config_.head_dim;
  // One GEMM for the keys and values of the segment, and its queries too where all are wanted.
  const bool all_rows = rows.first == first && rows.count == n;
  const auto weight = all_rows
                          ? torch::cat({block->wq->weight, block->wk->weight, block->wv->weight})
                          : torch::cat({block->wk->weight, block->wv->weight});
  const auto in_bias = !block->wk->bias.defined() ? torch::Tensor()
                       : all_rows ? torch::cat({block->wq->bias, block->wk->bias, block->wv->bias})
                                  : torch::cat({block->wk->bias, block->wv->bias});
  const auto h = distinct == nullptr || !all_rows ? block->attention_input(x) : torch::Tensor();
  auto projected = distinct == nullptr
                       ? F::linear(h, weight, in_bias)
                       : F::linear(block->attention_input(distinct->embedded), weight, in_bias)
                             .index_select(0, distinct->index);
  projected = projected.view({batch, n, all_rows ? 3 : 2, heads, d});
  if (block->q_norm) {  // the queries (where all rows are wanted) and keys, normed
    std::vector<torch::Tensor> parts;
    if (all_rows) parts.push_back(block->normed_queries(projected.narrow(2, 0, 1)));
    parts.push_back(block->normed_keys(projected.narrow(2, all_rows ? 1 : 0, 1)));
    parts.push_back(projected.narrow(2, all_rows ? 2 : 1, 1));
    projected = torch::cat(parts, 2);
  }
  const bool rope = config_.position == PositionEmbedding::kRope;
  if (rope) {  // the queries (where all rows are wanted) and keys turned by their positions
    const int64_t turned = all_rows ? 2 : 1;
    projected = torch::cat(
        {rotate(projected.narrow(2, 0, turned), first, 1), projected.narrow(2, turned, 1)}, 2);
  }
  const auto own = all_rows ? projected.narrow(2, 1, 2) : projected;
  kv = prefix.defined() ? torch::cat({prefix, own}, 1) : projected;
  if (rows.count == 0) return {};
  const auto these_bias = bias_block(bias, layer, rows.first, rows.count, first + n);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  torch::Tensor mixed, probs;
  auto* want_probs = attention ? &probs : nullptr;
  if (all_rows && !prefix.defined()) {
    mixed = fused_attention(projected, these_bias, scale, 0, n, want_probs);
  } else {
    auto q = all_rows ? projected.select(2, 0)
                      : block->normed_queries(block->wq(h.narrow(1, rows.first - first, rows.count))
                                                  .view({batch, rows.count, heads, d}));
    if (rope && !all_rows) q = rotate(q, rows.first, 1);
    mixed = fused_attention(q, kv, these_bias, scale, want_probs);
  }
  if (attention) attention->push_back(probs);
  return block->finish(x.narrow(1, rows.first - first, rows.count), mixed);
}

torch::Tensor MaskedTransformerImpl::segment_pass(const torch::Tensor& ids, int64_t first,
                                                  const std::vector<torch::Tensor>& prefix,
                                                  const torch::Tensor& bias, Rows rows,
                                                  std::vector<torch::Tensor>& kv) {
  const int64_t n = ids.size(1);
  const auto distinct = distinct_inputs(ids, first);
  auto x =
      distinct
          ? distinct->embedded.index_select(0, distinct->index).view({ids.size(0), n, config_.dim})
          : token_embedding_(ids) + position_embedding_.narrow(0, first, n);
  kv.assign(static_cast<size_t>(config_.depth), torch::Tensor());
  for (int64_t l = 0; l < config_.depth; ++l) {
    const auto i = static_cast<size_t>(l);
    x = segment_layer(l, x, first, prefix.empty() ? torch::Tensor() : prefix[i], bias,
                      l == config_.depth - 1 ? rows : Rows{first, n}, kv[i],
                      l == 0 && distinct ? &*distinct : nullptr);
  }
  return x;
}

torch::Tensor MaskedTransformerImpl::forward(const torch::Tensor& ids) {
  return run(ids, nullptr);
}

torch::Tensor MaskedTransformerImpl::forward(const torch::Tensor& ids, Rows rows) {
  rows_length("forward", ids, rows);
  return run(ids, nullptr, rows);
}

int64_t MaskedTransformerImpl::rows_length(const char* operation, const torch::Tensor& ids,
                                           Rows rows) const {
  const bool causal = config_.readout == Readout::kCausalLm;
  const int64_t length = causal ? sequence_length(ids) : config_.seq_len;
  if (!causal || rows.first < 0 || rows.count <= 0 || rows.first + rows.count > length) {
    throw InputError(
        fmt::format("[{}] rows [{}, {}) need a causal decoder and positions in [0, {})", operation,
                    rows.first, rows.first + rows.count, length));
  }
  return length;
}

std::vector<torch::Tensor> MaskedTransformerImpl::attention_maps(const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> maps;
  run(ids, &maps);
  return maps;
}

torch::Tensor MaskedTransformerImpl::attention_input(const torch::Tensor& ids) {
  torch::NoGradGuard no_grad;
  return blocks_.front()->attention_input(embed(ids));
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
  internal_check(priors_.empty(), "set_mask after set_sized_priors");
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
  internal_check(priors_.empty(), "set_hard_mask after set_sized_priors");
  hard_ = register_buffer("hard", value);
}

void clear_gradients(torch::nn::Module& module) {
  for (auto& p : module.parameters()) p.mutable_grad() = torch::Tensor();
}

int64_t parameter_count(MaskedTransformer& model) {
  int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  return count;
}

}  // namespace maskprior::runtime
