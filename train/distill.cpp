#include "train/distill.h"

#include <fmt/format.h>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <optional>

#include "compiler/write_spec.h"
#include "core/cells.h"
#include "core/error.h"
#include "io/mask_file.h"
#include "io/safetensors.h"
#include "runtime/experiment.h"
#include "runtime/model.h"
#include "tasks/family.h"
#include "train/config.h"
#include "train/data_experiment.h"
#include "train/model_files.h"
#include "train/run_folder.h"
#include "train/run_spec.h"

namespace maskprior::training {
namespace {

using nlohmann::json;

/// The config of the finished run in `folder`, its spec pointed at the folder's copy.
TrainConfig finished_run_config(const RunFolder& folder) {
  if (folder.has(kConfigFile) && !folder.has(kSummaryFile)) {
    throw InputError(fmt::format(
        "{} holds an unfinished run (no {}): finish it with `maskc train --resume {}` first",
        folder.path(), kSummaryFile, folder.path()));
  }
  TrainConfig config;
  try {
    config = folder.read_config();
  } catch (const InputError& e) {
    if (!folder.has(kConfigFile)) throw;
    throw InputError(fmt::format("{} (a run of another maskc version?)", e.what()));
  }
  if (folder.has(kSpecFile)) config.spec = folder.file(kSpecFile);
  config.out.clear();
  return config;
}

/// Planes [L, H, N, N] merged as `per` asks: unchanged (head), OR over heads (layer) or over all.
std::vector<uint8_t> merge_planes(const std::vector<uint8_t>& pattern, int64_t& layers,
                                  int64_t& heads, int64_t n, const std::string& per) {
  if (per == "head") return pattern;
  const int64_t out_layers = per == "layer" ? layers : 1;
  const size_t plane = static_cast<size_t>(n * n);
  std::vector<uint8_t> merged(static_cast<size_t>(out_layers) * plane, 0);
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      const size_t from = static_cast<size_t>(l * heads + h) * plane;
      const size_t to = static_cast<size_t>(per == "layer" ? l : 0) * plane;
      for (size_t i = 0; i < plane; ++i) merged[to + i] |= pattern[from + i];
    }
  }
  layers = out_layers;
  heads = 1;
  return merged;
}

/// The share of each layer's attention on the written pattern (per head: its own plane; merged:
/// the layer's or model's plane), mean over rows and heads.
std::vector<double> covered_mass(const std::vector<float>& attention, int64_t layers, int64_t heads,
                                 int64_t n, const SpecDraft& draft) {
  std::vector<double> mass(static_cast<size_t>(layers), 0.0);
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t pl = draft.layers == 1 ? 0 : l, ph = draft.heads == 1 ? 0 : h;
      for (int64_t c = 0; c < n * n; ++c) {
        const size_t cell = static_cast<size_t>((pl * draft.heads + ph) * n * n + c);
        if (draft.pattern[cell] == 0) continue;
        mass[static_cast<size_t>(l)] += attention[static_cast<size_t>((l * heads + h) * n * n + c)];
      }
    }
    mass[static_cast<size_t>(l)] /= static_cast<double>(heads * n);
  }
  return mass;
}

/// The model of the run, built as it trained and loaded from weights.safetensors.
runtime::MaskedTransformer load_model(const RunFolder& folder, const runtime::ModelConfig& config) {
  if (!folder.has(kWeightsFile)) {
    throw InputError(
        fmt::format("{} has no {}: the run did not save its weights", folder.path(), kWeightsFile));
  }
  runtime::MaskedTransformer model(config);
  load_model_tensors(model, read_safetensors(folder.file(kWeightsFile)), folder.file(kWeightsFile));
  model->eval();
  return model;
}

/// The draft of the run's mean attention maps, its layer masses in `distilled`.
SpecDraft attention_draft(const RunFolder& folder, const TrainConfig& config,
                          const DistillOptions& options, Distillation& distilled) {
  std::optional<CompiledMask> spec;
  if (!config.spec.empty()) spec = load_spec(config);
  const auto experiment = make_run_experiment(config, spec);
  const runtime::ModelConfig model_config = experiment->model_config(experiment_config(config));
  runtime::MaskedTransformer model = load_model(folder, model_config);
  const torch::Tensor ids = experiment->probe_inputs(options.rows);
  distilled.rows = ids.size(0);
  const std::vector<torch::Tensor> maps = model->attention_maps(ids);
  const auto mean = torch::stack(maps).mean(/*dim=*/1).to(torch::kFloat).contiguous();  // [L,H,N,N]
  const std::vector<float> attention(mean.data_ptr<float>(), mean.data_ptr<float>() + mean.numel());
  const int64_t layers = mean.size(0), heads = mean.size(1), n = mean.size(2);
  SpecDraft draft;
  draft.layout = spec ? spec->layout : experiment->layout();
  if (!spec) {  // a run without a spec: its data's digit orders, so `align` can be written
    const json settings = to_json(config);
    const tasks::TaskFamily& family = tasks::family_of_run(settings);
    if (family.digit_orders) {
      for (const auto& [name, order] : family.digit_orders(settings)) {
        for (Span& span : draft.layout.spans) {
          if (span.name == name) span.digits = order;
        }
      }
    }
  }
  draft.layers = layers;
  draft.heads = heads;
  draft.pattern = merge_planes(mass_pattern(attention, n, options.mass), draft.layers, draft.heads,
                               n, options.per);
  if (spec) {
    draft.name = spec->name;
    draft.open_value = spec->open_value;
    draft.close_value = spec->close_value;
  }
  if (model->hard_mask().defined()) {
    const auto hard = model->hard_mask().to(torch::kCPU, torch::kUInt8).contiguous();
    draft.hard.emplace(hard.data_ptr<uint8_t>(), hard.data_ptr<uint8_t>() + hard.numel());
  } else if (model_config.readout == runtime::Readout::kCausalLm) {
    add_hard_causal(draft.hard, n);
  }
  distilled.layer_mass = covered_mass(attention, layers, heads, n, draft);
  return draft;
}

/// The draft of the run's learned M: the cells that lean open (core/cells.h).
SpecDraft mask_draft(const RunFolder& folder, const DistillOptions& options) {
  if (!folder.has(kMaskFile)) {
    throw InputError(fmt::format(
        "{} has no {}: only runs whose model carries a mask M (init mask, mask-…) have one; use "
        "--from attention",
        folder.path(), kMaskFile));
  }
  const CompiledMask learned = read_mask_file(folder.file(kMaskFile));
  SpecDraft draft;
  draft.name = learned.name;
  draft.layout = learned.layout;
  draft.layers = learned.layers;
  draft.heads = learned.heads;
  draft.pattern =
      merge_planes(open_pattern(learned), draft.layers, draft.heads, learned.n, options.per);
  draft.hard = learned.hard;
  draft.open_value = learned.open_value;
  draft.close_value = learned.close_value;
  return draft;
}

}  // namespace

std::vector<uint8_t> mass_pattern(const std::vector<float>& attention, int64_t n, double mass) {
  std::vector<uint8_t> pattern(attention.size(), 0);
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (size_t row = 0; row + static_cast<size_t>(n) <= attention.size();
       row += static_cast<size_t>(n)) {
    const float* a = attention.data() + row;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return a[x] > a[y]; });
    const double total = std::accumulate(a, a + n, 0.0);
    double held = 0;
    for (int64_t k : order) {
      if (held >= mass * total || a[k] <= 0) break;
      held += a[k];
      pattern[row + static_cast<size_t>(k)] = 1;
    }
  }
  return pattern;
}

Distillation distill_run(const std::string& run_dir, const DistillOptions& options) {
  internal_check(options.from == "attention" || options.from == "mask", "distill: --from");
  internal_check(options.per == "head" || options.per == "layer" || options.per == "model",
                 "distill: --per");
  const RunFolder folder(run_dir);
  const TrainConfig config = finished_run_config(folder);
  Distillation distilled;
  SpecDraft draft = options.from == "mask" ? mask_draft(folder, options)
                                           : attention_draft(folder, config, options, distilled);
  draft.comments = {
      fmt::format("{}{} --from {}{} --per {}`", std::string(kDistilledHeader).substr(2), run_dir,
                  options.from,
                  options.from == "attention"
                      ? fmt::format(" --mass {} --rows {}", options.mass, options.rows)
                      : "",
                  options.per),
      fmt::format("run: task {}, init {}, seed {}{}",
                  config.task.empty() ? "(data file)" : config.task, config.init, config.seed,
                  config.spec.empty() ? "" : fmt::format(", spec {}", config.spec)),
  };
  if (options.from == "attention") {
    draft.comments.push_back(fmt::format(
        "each query row keeps the fewest keys holding {} of its attention, averaged over {} probe "
        "rows",
        options.mass, distilled.rows));
    for (size_t l = 0; l < distilled.layer_mass.size(); ++l) {
      draft.comments.push_back(fmt::format("layer {}: the pattern holds {:.3f} of the attention", l,
                                           distilled.layer_mass[l]));
    }
  } else {
    draft.comments.push_back(
        "open: the cells whose learned M lies nearer the open value than the close value");
  }
  if (opens_every_allowed_cell(draft)) {
    distilled.no_prior = fmt::format(
        "the distilled pattern opens every cell, so the spec is no prior ({})",
        options.from == "attention"
            ? "the attention is spread over whole rows; --per head or a lower --mass keeps less"
            : "the learned M is nearer the open value everywhere");
    draft.comments.push_back(distilled.no_prior);
  }
  distilled.spec = write_spec(draft);
  return distilled;
}

}  // namespace maskprior::training
