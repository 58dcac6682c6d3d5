#include "train/sized_prior.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "core/error.h"
#include "runtime/init.h"
#include "runtime/init_method.h"
#include "tasks/sequence_file.h"
#include "train/run_spec.h"

namespace maskprior::training {

namespace {

using nlohmann::json;
using runtime::InitMethod;

/// Line `line` (1-based) of `text`, trimmed; "" past its end.
std::string line_text(const std::string& text, int32_t line) {
  std::istringstream in(text);
  std::string out;
  for (int32_t i = 0; i < line && std::getline(in, out); ++i) {
  }
  const auto first = out.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return out.substr(first, out.find_last_not_of(" \t\r") - first + 1);
}

}  // namespace

int64_t longest_trained(const std::vector<runtime::SizeGroup>& groups) {
  int64_t tokens = 0;
  for (const auto& group : groups) {
    if (group.train_rows > 0) tokens = std::max<int64_t>(tokens, group.layout.size());
  }
  return tokens;
}

void check_sized_run(const TrainConfig& config, const std::vector<runtime::SizeGroup>& groups) {
  const InitMethod method = runtime::parse_init_method(config.init);
  if (method != InitMethod::kVanilla && method != InitMethod::kMask &&
      method != InitMethod::kMaskFixed && method != InitMethod::kMaskZero) {
    throw InputError(fmt::format(
        "--init {} fits the model to one sequence length; a run over several sizes (--digits "
        "A..B, --test-digits) takes vanilla, mask, mask-fixed or mask-zero",
        config.init));
  }
  if ((method == InitMethod::kMask || method == InitMethod::kMaskZero) &&
      config.mask_param != "rules") {
    throw InputError(fmt::format(
        "--init {} with --mask-param cells learns one logit per cell of one size, which means "
        "nothing at another; a run over several sizes needs --mask-param rules (one logit per "
        "rule of the spec, the same at every size) or --init mask-fixed",
        config.init));
  }
  if (config.mask_sharing != "spec") {
    throw InputError(fmt::format(
        "--mask-sharing {} is for one size; a run over several sizes takes the spec's layers and "
        "heads (--mask-sharing spec)",
        config.mask_sharing));
  }
  if (config.defines.contains(config.length_param)) {
    throw InputError(fmt::format(
        "-D {}={} fixes the size that a run over several sizes sets itself (--length-param {}); "
        "leave -D {} out",
        config.length_param, config.defines.at(config.length_param), config.length_param,
        config.length_param));
  }
  const int64_t trained = longest_trained(groups);
  int64_t longest = 0;
  for (const auto& group : groups) longest = std::max<int64_t>(longest, group.layout.size());
  if (config.pos_embedding == "learned" && longest > trained) {
    throw InputError(fmt::format(
        "--pos-embedding learned has no trained row for positions past {} (the longest trained "
        "sequence), but the run tests sequences of {} tokens; choose --pos-embedding sinusoidal, "
        "rope, alibi or none, or test at trained sizes only",
        trained, longest));
  }
}

std::map<int64_t, Layout> data_layouts(const TrainConfig& config, const CompiledMask& spec) {
  std::map<int64_t, std::pair<std::string, int>> lengths;  // T → where a line of T symbols is
  for (const std::string& path : {config.data, config.test_data}) {
    if (path.empty()) continue;
    for (const auto& [count, line] : tasks::sequence_lengths(path))
      lengths.emplace(count, std::pair{path, line});
  }
  const int64_t n = spec.layout.size();
  if (lengths.size() == 1 && lengths.begin()->first == n) return {};
  const std::string& name = config.length_param;
  auto where = [&](int64_t t) {
    const auto& [path, line] = lengths.at(t);
    return fmt::format("{}:{}", path, line);
  };
  const auto param = spec.params.find(name);
  // Without a size parameter (or with -D fixing it) every line must have the spec's length: the
  // data file's reader says where one does not.
  if (param == spec.params.end() || config.defines.contains(name)) return {};
  // Token counts are affine in the size parameter in every spec of the house (spans of `n`,
  // `n + 1`, `2 * n` ...): two compiles give the slope, one more checks the value found.
  const auto at = [&](int64_t value) {
    TrainConfig sized = config;
    sized.defines[name] = std::to_string(value);
    return load_spec(sized).layout;
  };
  const auto base = static_cast<int64_t>(std::llround(param->second));
  const int64_t slope = at(base + 1).size() - n;
  std::map<int64_t, Layout> out;
  for (const auto& [t, source] : lengths) {
    const int64_t offset = t - n;
    if (slope == 0 || offset % slope != 0 || base + offset / slope < 1) {
      throw InputError(fmt::format(
          "{}: a line of {} symbols, but no value of `param {}` of spec {} gives a layout of {} "
          "tokens ({} = {} gives {}, {} = {} gives {})",
          where(t), t, name, config.spec, t, name, base, n, name, base + 1, n + slope));
    }
    const int64_t value = base + offset / slope;
    Layout layout = value == base ? spec.layout : at(value);
    if (layout.size() != t) {
      throw InputError(fmt::format(
          "{}: a line of {} symbols, but spec {} at {} = {} has {} tokens, and its token count "
          "does not grow evenly with {}; give lines of one length",
          where(t), t, config.spec, name, value, layout.size(), name));
    }
    out.emplace(value, std::move(layout));
  }
  return out;
}

SizedSpec compile_sizes(const TrainConfig& config, const std::vector<runtime::SizeGroup>& groups,
                        const runtime::ModelConfig& model) {
  if (!config.spec.ends_with(".mask")) {
    throw InputError(fmt::format(
        "spec {}: a run over several sizes compiles its spec at each size; give the .mask file "
        "(a tensor file holds one size)",
        config.spec));
  }
  SizedSpec out;
  std::set<int32_t> lines = {0};
  for (const auto& group : groups) {
    TrainConfig at = config;
    at.defines[config.length_param] = std::to_string(group.size);
    CompiledMask spec = load_spec(at);
    if (!spec.params.contains(config.length_param)) {
      throw InputError(fmt::format(
          "spec {} has no `param {}`, so it cannot be compiled at each size of the run; declare "
          "it (e.g. `param {} = 3` and sizes written with it) or name the spec's size parameter "
          "with --length-param",
          config.spec, config.length_param, config.length_param));
    }
    runtime::ModelConfig sized = model;
    sized.seq_len = group.layout.size();
    check_spec(spec, at, group.layout, sized);
    if (model.readout == runtime::Readout::kCausalLm) add_hard_causal(spec);
    lines.insert(spec.provenance.begin(), spec.provenance.end());
    out.by_tokens.emplace(spec.n, std::move(spec));
  }
  out.rule_lines.assign(lines.begin(), lines.end());
  for (const auto& [tokens, spec] : out.by_tokens) {
    std::vector<int64_t> rules(spec.provenance.size());
    for (size_t i = 0; i < rules.size(); ++i) {
      rules[i] =
          std::lower_bound(out.rule_lines.begin(), out.rule_lines.end(), spec.provenance[i]) -
          out.rule_lines.begin();
    }
    out.rules.emplace(tokens, std::move(rules));
  }
  return out;
}

json install_sized_priors(runtime::MaskedTransformer& model, const TrainConfig& config,
                          const SizedSpec* spec, const std::vector<runtime::SizeGroup>& groups,
                          std::map<int64_t, torch::Tensor>& initial) {
  const InitMethod method = runtime::parse_init_method(config.init);
  if (runtime::init_requires_spec(method) && spec == nullptr) {
    throw InputError(fmt::format("--init {} needs a spec (--spec FILE)", config.init));
  }
  if (!runtime::init_uses_mask(method)) return json::object();
  const bool learnable = method != InitMethod::kMaskFixed;
  std::map<int64_t, runtime::SizedPrior> priors;
  for (const auto& group : groups) {
    const int64_t n = group.layout.size();
    runtime::SizedPrior prior;
    if (spec != nullptr) {
      const CompiledMask& compiled = spec->by_tokens.at(n);
      prior.values = runtime::mask_tensor(compiled);
      if (method == InitMethod::kMaskZero) prior.values = torch::zeros_like(prior.values);
      prior.rules = torch::tensor(spec->rules.at(n), torch::kLong)
                        .view({compiled.layers, compiled.heads, n, n});
      prior.hard = runtime::hard_tensor(compiled);
    } else {  // mask-zero without a spec: one rule for every cell
      prior.values = torch::zeros({1, 1, n, n});
      prior.rules = torch::zeros({1, 1, n, n}, torch::kLong);
    }
    if (!learnable) prior.rules = torch::Tensor();
    initial[n] = prior.values.clone();
    priors.emplace(n, std::move(prior));
  }
  const int64_t rules = spec != nullptr ? static_cast<int64_t>(spec->rule_lines.size()) : 1;
  model->set_sized_priors(std::move(priors), rules, learnable);
  return {{"sizes", groups.size()}, {"rules", learnable ? rules : 0}};
}

json learned_rules(runtime::MaskedTransformer& model, const SizedSpec& spec,
                   const std::string& source, int64_t tokens) {
  const torch::Tensor& offsets = model->rule_offsets();
  if (!offsets.defined()) return json::array();
  const auto learned =
      offsets.detach().to(torch::kCPU, torch::kDouble).contiguous();  // [L', H', R]
  const CompiledMask& compiled = spec.by_tokens.at(tokens);
  const std::vector<int64_t>& rules = spec.rules.at(tokens);
  json table = json::array();
  for (size_t r = 0; r < spec.rule_lines.size(); ++r) {
    double sum = 0;
    int64_t cells = 0;
    std::set<std::pair<int64_t, int64_t>> planes;  // (layer, head) where the rule wrote cells
    const auto plane_size = static_cast<size_t>(tokens * tokens);
    for (size_t i = 0; i < rules.size(); ++i) {
      if (rules[i] != static_cast<int64_t>(r)) continue;
      sum += compiled.mask[i];
      ++cells;
      const auto plane = static_cast<int64_t>(i / plane_size);
      planes.emplace(plane / compiled.heads, plane % compiled.heads);
    }
    const double written = cells > 0 ? sum / static_cast<double>(cells) : 0.0;
    json values = json::array();  // [layer][head]: written + offset
    for (int64_t l = 0; l < learned.size(0); ++l) {
      json heads = json::array();
      for (int64_t h = 0; h < learned.size(1); ++h) {
        heads.push_back(written + learned[l][h][static_cast<int64_t>(r)].item<double>());
      }
      values.push_back(std::move(heads));
    }
    const int32_t line = spec.rule_lines[r];
    table.push_back(
        {{"rule", r},
         {"line", line},
         {"text", line == 0 ? std::string("(cells no statement wrote)") : line_text(source, line)},
         {"cells", cells},
         {"planes", planes},
         {"written", written},
         {"learned", std::move(values)}});
  }
  return table;
}

std::vector<double> sized_mask_drift(runtime::MaskedTransformer& model, int64_t tokens,
                                     const torch::Tensor& initial) {
  torch::NoGradGuard no_grad;
  namespace F = torch::nn::functional;
  const auto now = model->prior_at(tokens);
  if (!now.defined()) return {};
  const auto diff = F::logsigmoid(now) - F::logsigmoid(initial.to(now.device(), now.dtype()));
  const auto per_layer = diff.pow(2).sum({1, 2, 3}).sqrt();  // [L']
  std::vector<double> drift;
  for (int64_t l = 0; l < model->config().depth; ++l) {
    drift.push_back(per_layer[per_layer.size(0) == 1 ? 0 : l].item<double>());
  }
  return drift;
}

}  // namespace maskprior::training
