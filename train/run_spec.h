// The spec of a run: compiled (or read) as the run's settings say, checked against the task's
// layout and the model, and made causal for a decoder.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/compiled_mask.h"
#include "core/layout.h"
#include "train/config.h"

namespace maskprior::runtime {
struct ModelConfig;
}  // namespace maskprior::runtime

namespace maskprior::training {

/// Compiles (.mask) or reads (tensor file) the spec of `config`: with its -D defines and its
/// mask_open/mask_close when set. A .mask spec with a parameter `n` is compiled with n =
/// config.n for Boolean and language tasks (bits, context), and one with a parameter `depth` with
/// the model's depth, unless -D gave them; its `digits` declarations of the spans whose order the
/// task's data fixes (arithmetic: operand_order, answer_order) give way to that order
/// (TaskFamily::digit_orders), and a tensor file must have been compiled with it. Throws SpecError
/// or InputError as the compiler does, InputError for a tensor file of other digit orders.
CompiledMask load_spec(const TrainConfig& config);

/// Throws InputError unless `spec` has `task_layout`'s spans and the model's sequence length,
/// and one layer or the model's depth, one head or the model's heads; the message names the spec
/// (config.spec) and both sides.
void check_spec(const CompiledMask& spec, const TrainConfig& config, const Layout& task_layout,
                const runtime::ModelConfig& model);

/// For a causal decoder: makes every cell above the diagonal hard-excluded in `spec` (as
/// `hard causal` does); true if the spec did not already say so.
bool add_hard_causal(CompiledMask& spec);
/// The same on a hard mask [n, n] (created, all allowed, when empty).
bool add_hard_causal(std::optional<std::vector<uint8_t>>& hard, int64_t n);

}  // namespace maskprior::training
