#include "train/run_spec.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>

#include "compiler/compile.h"
#include "core/error.h"
#include "io/mask_file.h"
#include "runtime/model.h"
#include "train/data_experiment.h"

namespace maskprior::training {

CompiledMask load_spec(const TrainConfig& config) {
  if (!config.spec.ends_with(".mask")) return read_mask_file(config.spec);
  CompileOptions options;
  options.defines = config.defines;
  options.open_value = config.mask_open;
  options.close_value = config.mask_close;
  auto spec = compile_file(config.spec, options);
  // Parameters the run fills in unless -D gave them: those its task family names (Boolean tasks:
  // `n` bits; language: `n` tokens of context), from the setting of the same name, and `depth`
  // (a spec with per-layer rules written for any depth, e.g. specs/designs/parity2_layers.mask).
  bool again = false;
  auto fill = [&](const char* name, int64_t value, bool applies) {
    auto param = spec.params.find(name);
    if (applies && !config.defines.contains(name) && param != spec.params.end() &&
        param->second != static_cast<double>(value)) {
      options.defines[name] = std::to_string(value);
      again = true;
    }
  };
  const nlohmann::json settings = to_json(config);
  for (const std::string& name : family_of(config).spec_params) {
    const auto value = settings.find(name);
    internal_check(value != settings.end() && value->is_number_integer(),
                   "a task family's spec parameter " + name + " is no integer setting");
    fill(name.c_str(), value->get<int64_t>(), true);
  }
  fill("depth", config.depth, true);
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
  if (!spec.hard) spec.hard.emplace(static_cast<size_t>(spec.n * spec.n), uint8_t{0});
  bool added = false;
  for (int64_t q = 0; q < spec.n; ++q) {
    for (int64_t k = q + 1; k < spec.n; ++k) {
      auto& cell = (*spec.hard)[static_cast<size_t>(q * spec.n + k)];
      added = added || cell == 0;
      cell = 1;
    }
  }
  return added;
}

}  // namespace maskprior::training
