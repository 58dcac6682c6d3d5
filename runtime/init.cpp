#include "runtime/init.h"

#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "core/cells.h"
#include "core/error.h"
#include "core/interrupt.h"

namespace maskprior::runtime {

namespace F = torch::nn::functional;

namespace {

/// Layer l, head h of an open_cells pattern (broadcast over L', H') as double [N, N].
torch::Tensor head_pattern(const torch::Tensor& open, int64_t layer, int64_t head) {
  return open.select(0, open.size(0) == 1 ? 0 : layer)
      .select(0, open.size(1) == 1 ? 0 : head)
      .to(torch::kDouble);
}

/// Writes per-head factors into a block's Wq/Wk (Linear weights are [heads·d_head, dim] = Wᵀ).
void set_head_rows(torch::nn::Linear& w, int64_t head, int64_t head_dim, const torch::Tensor& m) {
  auto& weight = w->weight;
  weight.narrow(0, head * head_dim, head_dim).copy_(m.t().to(weight.options()));
}

/// The distinct (position, token) rows that layer 0 sees in `probe_ids`: X' [R, dim] and the
/// position of each row. A QK pattern that fits every row fits every sequence made of them.
std::pair<torch::Tensor, std::vector<int64_t>> distinct_attention_rows(MaskedTransformer& model,
                                                                       const torch::Tensor& ids) {
  auto x = model->attention_input(ids).to(torch::kCPU, torch::kDouble);  // [B, N, dim]
  if (ids.is_floating_point()) {  // patches: the positional part, one row per position
    std::vector<int64_t> positions(static_cast<size_t>(x.size(1)));
    std::iota(positions.begin(), positions.end(), int64_t{0});
    return {x.mean(0), positions};
  }
  auto tokens = ids.to(torch::kCPU);
  std::vector<torch::Tensor> rows;
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < tokens.size(1); ++i) {
    std::map<int64_t, int64_t> first_row_of_token;
    auto column = tokens.select(1, i);
    for (int64_t b = 0; b < column.size(0); ++b) {
      first_row_of_token.emplace(column[b].item<int64_t>(), b);
    }
    for (auto [token, b] : first_row_of_token) {
      rows.push_back(x[b][i]);
      positions.push_back(i);
    }
  }
  return {torch::stack(rows), positions};
}

/// qk-svd (docs/paper.md, "Baselines"): X' = U Σ Vᵀ, B = Uᵀ A U, B_r = U_B S V_Bᵀ, Wq = V Σ⁻¹ U_B
/// S^½, Wk = V Σ⁻¹ V_B S^½, so that X' Wq Wkᵀ X'ᵀ ≈ A = √d_head · contrast · open.
nlohmann::json init_qk_svd(MaskedTransformer& model, const torch::Tensor& open,
                           const InitOptions& options) {
  torch::NoGradGuard no_grad;
  const auto& config = model->config();
  auto [x, positions] = distinct_attention_rows(model, options.probe_ids);
  auto [u_full, sigma_full, vh_full] = torch::linalg_svd(x, /*full_matrices=*/false);
  const double cutoff = 1e-6 * sigma_full[0].item<double>();
  const int64_t rank = (sigma_full > cutoff).sum().item<int64_t>();
  auto u = u_full.narrow(1, 0, rank);
  auto sigma_inv = sigma_full.narrow(0, 0, rank).reciprocal();
  auto v = vh_full.narrow(0, 0, rank).t();  // [dim, rank]
  auto pos = torch::tensor(positions, torch::kLong);
  const double gain = std::sqrt(static_cast<double>(config.head_dim)) * options.qk_contrast;
  const int64_t r = config.head_dim;
  double residual_sum = 0;
  for (int64_t l = 0; l < config.depth; ++l) {
    auto& block = model->blocks()[static_cast<size_t>(l)];
    for (int64_t h = 0; h < config.heads; ++h) {
      auto pattern = head_pattern(open, l, h);
      auto a = gain * pattern.index({pos}).index({torch::indexing::Slice(), pos});  // [R, R]
      auto b = u.t().matmul(a).matmul(u);
      auto [ub, s, vbh] = torch::linalg_svd(b, /*full_matrices=*/false);
      const int64_t keep = std::min(r, s.size(0));
      auto root = s.narrow(0, 0, keep).sqrt();
      auto wq = torch::zeros({config.dim, r}, torch::kDouble);
      auto wk = torch::zeros({config.dim, r}, torch::kDouble);
      auto left = v * sigma_inv;  // V Σ⁻¹, [dim, rank]
      wq.narrow(1, 0, keep).copy_(left.matmul(ub.narrow(1, 0, keep)) * root);
      wk.narrow(1, 0, keep).copy_(left.matmul(vbh.narrow(0, 0, keep).t()) * root);
      set_head_rows(block->wq, h, r, wq);
      set_head_rows(block->wk, h, r, wk);
      auto fitted = x.matmul(wq).matmul(wk.t()).matmul(x.t());
      residual_sum += ((fitted - a).norm() / a.norm().clamp_min(1e-12)).item<double>();
    }
  }
  return {{"rows", x.size(0)},
          {"rank", rank},
          {"relative_residual", residual_sum / static_cast<double>(config.depth * config.heads)}};
}

/// qk-opt (docs/paper.md, "Baselines"): Adam fits every layer's and head's Wq, Wk so that
/// softmax(X Wq Wkᵀ Xᵀ / √d_head) matches softmax(contrast · open) on the probe batch (MSE); with
/// qk_norm, softmax(LN(X Wq) LN(X Wk)ᵀ / √d_head), the product the model then computes.
nlohmann::json init_qk_opt(MaskedTransformer& model, const torch::Tensor& open,
                           const InitOptions& options) {
  const auto& config = model->config();
  const int64_t depth = config.depth, heads = config.heads, r = config.head_dim;
  const auto& ids = options.probe_ids;
  torch::Tensor x =
      model->attention_input(ids.narrow(0, 0, std::min(options.qk_opt_sequences, ids.size(0))))
          .to(torch::kCPU);  // [B, N, dim]
  std::vector<torch::Tensor> wq_init, wk_init, targets;
  {
    torch::NoGradGuard no_grad;
    for (int64_t l = 0; l < depth; ++l) {
      auto& block = model->blocks()[static_cast<size_t>(l)];
      // Linear weight [H·r, dim] → per-head W [H, dim, r].
      auto per_head = [&](torch::nn::Linear& w) {
        return w->weight.detach().to(torch::kCPU).view({heads, r, config.dim}).transpose(1, 2);
      };
      wq_init.push_back(per_head(block->wq));
      wk_init.push_back(per_head(block->wk));
      for (int64_t h = 0; h < heads; ++h) {
        targets.push_back(torch::softmax(options.qk_contrast * head_pattern(open, l, h), -1));
      }
    }
  }
  auto wq = torch::stack(wq_init).clone().set_requires_grad(true);  // [L, H, dim, r]
  auto wk = torch::stack(wk_init).clone().set_requires_grad(true);
  auto target =
      torch::stack(targets).view({depth, heads, 1, x.size(1), x.size(1)}).to(torch::kFloat);
  const int64_t batch = x.size(0), n = x.size(1);
  auto rows = x.reshape({batch * n, config.dim});  // [B·N, dim]
  // Every layer's and head's X W as one matrix product (a broadcast product per head would copy
  // X once per layer and head, on every step): [B·N, dim] × [dim, L·H·r] → [L, H, B, N, r].
  auto project = [&](const torch::Tensor& w) {
    return rows.matmul(w.permute({2, 0, 1, 3}).reshape({config.dim, depth * heads * r}))
        .view({batch, n, depth, heads, r})
        .permute({2, 3, 0, 1, 4});
  };
  const double scale = 1.0 / std::sqrt(static_cast<double>(r));
  torch::optim::Adam adam({wq, wk}, torch::optim::AdamOptions(options.qk_opt_lr));
  double first_loss = 0, last_loss = 0;
  for (int64_t step = 0; step < options.qk_opt_steps; ++step) {
    check_stop_requested("fitting the qk-opt initialisation");
    auto q = project(wq);  // [L, H, B, N, r]
    auto k = project(wk);
    if (config.qk_norm) {  // through the model's norms as they start (gain 1, bias 0)
      q = F::layer_norm(q, F::LayerNormFuncOptions({r}));
      k = F::layer_norm(k, F::LayerNormFuncOptions({r}));
    }
    auto probs = torch::softmax(torch::matmul(q, k.transpose(-2, -1)) * scale, -1);
    auto loss = (probs - target).pow(2).mean();
    adam.zero_grad();
    loss.backward();
    adam.step();
    last_loss = loss.item<double>();
    if (step == 0) first_loss = last_loss;
  }
  torch::NoGradGuard no_grad;
  for (int64_t l = 0; l < depth; ++l) {
    auto& block = model->blocks()[static_cast<size_t>(l)];
    for (int64_t h = 0; h < heads; ++h) {
      set_head_rows(block->wq, h, r, wq[l][h]);
      set_head_rows(block->wk, h, r, wk[l][h]);
    }
  }
  return {{"steps", options.qk_opt_steps}, {"first_loss", first_loss}, {"final_loss", last_loss}};
}

/// Factors a d×d target into two d×r matrices (top-r SVD): T ≈ left · rightᵀ.
std::pair<torch::Tensor, torch::Tensor> factor(const torch::Tensor& target, int64_t r) {
  auto [u, s, vh] = torch::linalg_svd(target, /*full_matrices=*/false);
  const int64_t keep = std::min(r, s.size(0));
  auto root = s.narrow(0, 0, keep).sqrt();
  auto left = torch::zeros({target.size(0), r}, target.options());
  auto right = torch::zeros({target.size(1), r}, target.options());
  left.narrow(1, 0, keep).copy_(u.narrow(1, 0, keep) * root);
  right.narrow(1, 0, keep).copy_(vh.narrow(0, 0, keep).t() * root);
  return {left, right};
}

/// mimetic: per head Wq Wkᵀ ≈ 0.7 Z + 0.7 I and Wv Wo ≈ 0.4 Z − 0.4 I, Z uniform with variance
/// 1/dim (docs/paper.md, "Baselines"), factorised by SVD.
nlohmann::json init_mimetic(MaskedTransformer& model, const InitOptions& options) {
  torch::NoGradGuard no_grad;
  const auto& config = model->config();
  const int64_t d = config.dim, r = config.head_dim;
  auto generator = at::detail::createCPUGenerator(options.seed);
  const double half_width = std::sqrt(3.0 / static_cast<double>(d));  // U(−a, a) has variance a²/3
  auto uniform = [&] {
    return (torch::rand({d, d}, generator, torch::kDouble) * 2 - 1) * half_width;
  };
  auto eye = torch::eye(d, torch::kDouble);
  for (auto& block : model->blocks()) {
    for (int64_t h = 0; h < config.heads; ++h) {
      auto [wq, wk] = factor(0.7 * uniform() + 0.7 * eye, r);
      set_head_rows(block->wq, h, r, wq);
      set_head_rows(block->wk, h, r, wk);
      auto [wv, wo] = factor(0.4 * uniform() - 0.4 * eye, r);
      set_head_rows(block->wv, h, r, wv);
      // wo.weight is [dim, H·r]: head h's columns are Wo_hᵀ = `wo` ([dim, r]).
      auto& weight = block->wo->weight;
      weight.narrow(1, h * r, r).copy_(wo.to(weight.options()));
    }
  }
  return nlohmann::json::object();
}

/// impulse: the shift pattern of the task's grid, fitted into Wq/Wk as qk-svd does.
nlohmann::json init_impulse(MaskedTransformer& model, const InitOptions& options) {
  const auto& config = model->config();
  auto pattern = impulse_pattern(options.layout, config.heads);
  if (pattern.size(2) != config.seq_len) {
    throw InputError(fmt::format("--init impulse: the layout has {} tokens, the model {}",
                                 pattern.size(2), config.seq_len));
  }
  auto info = init_qk_svd(model, pattern, options);
  std::vector<std::vector<int64_t>> shifts;
  for (int64_t h = 0; h < config.heads; ++h) {
    const auto [dy, dx] = impulse_shifts()[static_cast<size_t>(h) % impulse_shifts().size()];
    shifts.push_back({dy, dx});
  }
  info["shifts"] = shifts;
  return info;
}

}  // namespace

const std::vector<std::pair<int64_t, int64_t>>& impulse_shifts() {
  static const std::vector<std::pair<int64_t, int64_t>> kShifts = {
      {0, 1}, {0, -1}, {1, 0}, {-1, 0}, {1, 1}, {1, -1}, {-1, 1}, {-1, -1}, {0, 0}};
  return kShifts;
}

torch::Tensor impulse_pattern(const Layout& layout, int64_t heads) {
  const auto grid = std::find_if(layout.spans.begin(), layout.spans.end(),
                                 [](const Span& span) { return span.grid.has_value(); });
  if (grid == layout.spans.end()) {
    throw InputError(fmt::format(
        "--init impulse needs a task whose tokens lie on a grid (fashion-mnist); layout {} has "
        "no grid span",
        layout_text(layout)));
  }
  const auto [rows, cols] = *grid->grid;
  const int64_t n = layout.size();
  auto pattern = torch::zeros({1, heads, n, n}, torch::kBool);
  for (int64_t h = 0; h < heads; ++h) {
    const auto [dy, dx] = impulse_shifts()[static_cast<size_t>(h) % impulse_shifts().size()];
    for (int64_t p = 0; p < rows; ++p) {
      for (int64_t q = 0; q < cols; ++q) {
        if (p + dy < 0 || p + dy >= rows || q + dx < 0 || q + dx >= cols) continue;
        pattern[0][h][grid->offset + p * cols + q][grid->offset + (p + dy) * cols + q + dx] = true;
      }
    }
  }
  return pattern;
}

torch::Tensor mask_tensor(const CompiledMask& spec) {
  check_invariants(spec);
  return torch::tensor(spec.mask, torch::kFloat).view({spec.layers, spec.heads, spec.n, spec.n});
}

torch::Tensor hard_tensor(const CompiledMask& spec) {
  if (!spec.hard) return {};
  std::vector<int64_t> values(spec.hard->begin(), spec.hard->end());
  return torch::tensor(values, torch::kLong).view({spec.n, spec.n}).to(torch::kBool);
}

torch::Tensor open_cells(const CompiledMask& spec) {
  const std::vector<uint8_t> pattern = maskprior::open_pattern(spec);
  return torch::from_blob(const_cast<uint8_t*>(pattern.data()),
                          {spec.layers, spec.heads, spec.n, spec.n}, torch::kUInt8)
      .to(torch::kBool);
}

MaskSharing parse_mask_sharing(const std::string& name) {
  if (name == "spec") return MaskSharing::kSpec;
  if (name == "layer") return MaskSharing::kLayer;
  if (name == "head") return MaskSharing::kHead;
  throw InputError(fmt::format("mask_sharing must be one of spec, layer, head, got '{}'", name));
}

torch::Tensor shared_mask(const torch::Tensor& m, MaskSharing sharing, int64_t depth,
                          int64_t heads) {
  if (sharing == MaskSharing::kSpec) return m;
  const int64_t h = sharing == MaskSharing::kHead ? heads : m.size(1);
  if (m.size(0) != 1 && m.size(0) != depth) return m;  // set_mask reports the shape
  if (m.size(1) != 1 && m.size(1) != h) return m;
  return m.expand({depth, h, m.size(2), m.size(3)}).contiguous();
}

/// Each layer's Frobenius norms ‖Wq‖ and ‖Wk‖ (all heads together), as {"wq": [...], "wk": [...]}.
nlohmann::json query_key_norms(MaskedTransformer& model) {
  torch::NoGradGuard no_grad;
  std::vector<double> wq, wk;
  for (auto& block : model->blocks()) {
    wq.push_back(block->wq->weight.norm().item<double>());
    wk.push_back(block->wk->weight.norm().item<double>());
  }
  return {{"wq", wq}, {"wk", wk}};
}

/// A query/key fit's record with the weights' scale beside it: wq_norm / wk_norm per layer after
/// the fit and wq_norm_default / wk_norm_default before it (the default init the fit replaced),
/// so a reader can tell a prior that washed out from one fitted at an extreme scale.
template <typename Fit>
nlohmann::json with_query_key_norms(MaskedTransformer& model, Fit&& fit) {
  const auto before = query_key_norms(model);
  auto info = fit();
  const auto after = query_key_norms(model);
  info["wq_norm_default"] = before["wq"];
  info["wk_norm_default"] = before["wk"];
  info["wq_norm"] = after["wq"];
  info["wk_norm"] = after["wk"];
  return info;
}

nlohmann::json apply_init(MaskedTransformer& model, InitMethod method, const CompiledMask* spec,
                          const InitOptions& options) {
  if (init_requires_spec(method) && spec == nullptr) {
    throw InputError(fmt::format("--init {} needs a spec (--spec FILE)", init_method_name(method)));
  }
  const auto& config = model->config();
  const bool fits_query_key = method == InitMethod::kQkSvd || method == InitMethod::kQkOpt ||
                              method == InitMethod::kMimetic || method == InitMethod::kImpulse;
  if (fits_query_key && (config.position == PositionEmbedding::kRope ||
                         config.position == PositionEmbedding::kAlibi)) {
    // The fits target q_i·k_j of layer 0's inputs; rope turns q and k by position and alibi adds
    // its own bias, neither of which they model.
    throw InputError(fmt::format(
        "--init {} fits Wq/Wk to the inputs' positions and models neither rope's rotation nor "
        "alibi's bias; use --pos-embedding learned, sinusoidal or none with it",
        init_method_name(method)));
  }
  switch (method) {
    case InitMethod::kVanilla:
      return nlohmann::json::object();
    case InitMethod::kMask:
    case InitMethod::kMaskFixed:
    case InitMethod::kMaskZero: {
      auto m = spec ? mask_tensor(*spec) : torch::zeros({1, 1, config.seq_len, config.seq_len});
      if (method == InitMethod::kMaskZero) m = torch::zeros_like(m);
      m = shared_mask(m, options.mask_sharing, config.depth, config.heads);
      model->set_mask(m, /*learnable=*/method != InitMethod::kMaskFixed);
      if (spec && spec->hard) model->set_hard_mask(hard_tensor(*spec));
      return nlohmann::json::object();
    }
    case InitMethod::kQkSvd:
    case InitMethod::kQkOpt:
      internal_check(options.probe_ids.defined(), "apply_init: qk methods need probe_ids");
      return with_query_key_norms(model, [&] {
        return method == InitMethod::kQkSvd ? init_qk_svd(model, open_cells(*spec), options)
                                            : init_qk_opt(model, open_cells(*spec), options);
      });
    case InitMethod::kMimetic:
      return with_query_key_norms(model, [&] { return init_mimetic(model, options); });
    case InitMethod::kImpulse:
      internal_check(options.probe_ids.defined(), "apply_init: impulse needs probe_ids");
      return with_query_key_norms(model, [&] { return init_impulse(model, options); });
  }
  throw InternalError("apply_init: unknown method");
}

}  // namespace maskprior::runtime
