#include "train/run_spec.h"

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <string>

#include "compiler/compile.h"
#include "core/error.h"
#include "io/mask_file.h"
#include "runtime/model.h"
#include "tasks/family.h"

namespace maskprior::training {

namespace {

/// For a tensor file: InputError unless every span of `orders` that the mask has, with a digit
/// order, has that order (a .mask spec is compiled with them instead).
void check_digit_orders(const CompiledMask& spec, const TrainConfig& config,
                        const std::map<std::string, DigitOrder>& orders) {
  for (const auto& [name, order] : orders) {
    const Span* span = spec.layout.find(name);
    if (span == nullptr || !span->digits || *span->digits == order) continue;
    throw InputError(fmt::format(
        "spec {} was compiled with `digits {} {}`, but this run's data (operand_order {}, "
        "answer_order {}) puts {} {}; compile the .mask with --digits {}={} or pass the .mask "
        "itself",
        config.spec, name, digit_order_keyword(*span->digits), config.operand_order,
        config.answer_order, name, digit_order_keyword(order), name, digit_order_keyword(order)));
  }
}

}  // namespace

CompiledMask load_spec(const TrainConfig& config) {
  const auto& family = family_of(config);
  const nlohmann::json settings = to_json(config);
  std::map<std::string, DigitOrder> orders;
  if (family.digit_orders) orders = family.digit_orders(settings);
  if (!config.spec.ends_with(".mask")) {
    auto spec = read_mask_file(config.spec);
    check_digit_orders(spec, config, orders);
    return spec;
  }
  CompileOptions options;
  options.defines = config.defines;
  options.open_value = config.mask_open;
  options.close_value = config.mask_close;
  auto spec = compile_file(config.spec, options);
  // Parameters the run fills in unless -D gave them: those its task family names (Boolean tasks:
  // `n` bits; language: `n` tokens of context), from the setting of the same name, and `depth`
  // (a spec with per-layer rules written for any depth, e.g. specs/designs/parity2_layers.mask).
  for (const std::string& name : family.spec_params) {
    const auto value = settings.find(name);
    internal_check(value != settings.end() && value->is_number_integer(),
                   "a task family's spec parameter " + name + " is no integer setting");
  }
  const auto filled = tasks::filled_spec_params(family, settings, spec.params, config.defines);
  options.defines.insert(filled.begin(), filled.end());
  bool again = !filled.empty();
  // The data's digit orders in place of the spec's declarations, where they differ (a spec without
  // the span is left to check_spec, which names both layouts).
  for (const auto& [name, order] : orders) {
    const Span* span = spec.layout.find(name);
    if (span != nullptr && span->digits && *span->digits != order) {
      options.digit_orders[name] = order;
      again = true;
    }
  }
  return again ? compile_file(config.spec, options) : spec;
}

void check_spec(const CompiledMask& spec, const TrainConfig& config, const Layout& task_layout,
                const runtime::ModelConfig& model) {
  if (!same_spans(spec.layout, task_layout) || spec.n != model.seq_len) {
    throw InputError(fmt::format(
        "spec {} has layout {} but task {} expects {}; write the spec for this task's layout",
        config.spec, layout_text(spec.layout), config.task, layout_text(task_layout)));
  }
  if (spec.layers != 1 && spec.layers != model.depth) {
    throw InputError(fmt::format("spec {} has {} layers but the model has depth {} (use 1 or {})",
                                 config.spec, spec.layers, model.depth, model.depth));
  }
  if (spec.heads != 1 && spec.heads != model.heads) {
    throw InputError(fmt::format("spec {} has {} heads but the model has {} (use 1 or {})",
                                 config.spec, spec.heads, model.heads, model.heads));
  }
}

bool add_hard_causal(CompiledMask& spec) {
  return add_hard_causal(spec.hard, spec.n);
}

bool add_hard_causal(std::optional<std::vector<uint8_t>>& hard, int64_t n) {
  if (!hard) hard.emplace(static_cast<size_t>(n * n), uint8_t{0});
  bool added = false;
  for (int64_t q = 0; q < n; ++q) {
    for (int64_t k = q + 1; k < n; ++k) {
      auto& cell = (*hard)[static_cast<size_t>(q * n + k)];
      added = added || cell == 0;
      cell = 1;
    }
  }
  return added;
}

}  // namespace maskprior::training
