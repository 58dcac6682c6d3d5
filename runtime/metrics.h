// Persistence metrics of a prior (docs/paper.md, "Open questions"), measured during training.
#pragma once

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include <array>

#include "runtime/model.h"

namespace maskprior::runtime {

/// Persistence of the prior (docs/paper.md, "Open questions"), measured on the probe batch
/// `probe_ids`: with `open` ([L', H', N, N] bool, defined): `prior_mass` (per layer: attention mass
/// on open cells, averaged over sequences, heads and rows with an open cell) and
/// `attention_correlation` (per layer: Pearson correlation of the mean attention map with the open
/// pattern); for a model with M: `mask_drift` (per layer: ‖log σ(M_t) − log σ(M_0)‖_F). Lists have
/// one entry per layer. The keys of persistence_metrics that say where a run starts (mask_drift is
/// 0 there by definition): a run's summary keeps their step-0 values as KEY_init.
inline constexpr std::array<const char*, 2> kPriorStartKeys = {"prior_mass",
                                                               "attention_correlation"};

nlohmann::json persistence_metrics(MaskedTransformer& model, const torch::Tensor& probe_ids,
                                   const torch::Tensor& open);

}  // namespace maskprior::runtime
