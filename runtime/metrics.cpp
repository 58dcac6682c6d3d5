#include "runtime/metrics.h"

namespace maskprior::runtime {

namespace {

using nlohmann::json;

double pearson(const torch::Tensor& a, const torch::Tensor& b) {
  auto x = a.flatten().to(torch::kDouble), y = b.flatten().to(torch::kDouble);
  x = x - x.mean();
  y = y - y.mean();
  const double denominator = (x.norm() * y.norm()).item<double>();
  return denominator > 0 ? (x * y).sum().item<double>() / denominator : 0.0;
}

}  // namespace

json persistence_metrics(MaskedTransformer& model, const torch::Tensor& probe,
                         const torch::Tensor& open) {
  json metrics = json::object();
  if (open.defined()) {
    const auto maps = model->attention_maps(probe);
    std::vector<double> mass, correlation;
    for (size_t l = 0; l < maps.size(); ++l) {
      const auto& probs = maps[l];  // [B, H, N, N]
      auto pattern = open.select(0, open.size(0) == 1 ? 0 : static_cast<int64_t>(l))
                         .to(probs.dtype())
                         .expand({probs.size(1), probs.size(2), probs.size(3)});  // [H, N, N]
      auto row_mass = (probs * pattern).sum(-1).mean(0);                          // [H, N]
      auto has_open = pattern.sum(-1) > 0;
      mass.push_back(row_mass.index({has_open}).mean().item<double>());
      correlation.push_back(pearson(probs.mean(0), pattern));
    }
    metrics[kPriorStartKeys[0]] = mass;
    metrics[kPriorStartKeys[1]] = correlation;
  }
  if (model->has_mask()) {
    torch::NoGradGuard no_grad;
    namespace F = torch::nn::functional;
    auto diff = F::logsigmoid(model->mask()) - F::logsigmoid(model->mask_init());
    auto per_mask_layer = diff.pow(2).sum({1, 2, 3}).sqrt();  // [L']
    std::vector<double> drift;
    for (int64_t l = 0; l < model->config().depth; ++l) {
      drift.push_back(per_mask_layer[per_mask_layer.size(0) == 1 ? 0 : l].item<double>());
    }
    metrics["mask_drift"] = drift;
  }
  return metrics;
}

}  // namespace maskprior::runtime
