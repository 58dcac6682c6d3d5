// Arithmetic in the low-data regime (docs/arithmetic.md): 3-digit addition and multiplication as a causal
// decoder over `a[3] op b[3] eq c[K]` (tasks/arithmetic_task.h; docs/paper.md, "Our format"). The answer
// c is the span the decoder learns and decodes (runtime/decoder.h); its share of right tokens is
// reported as `digit_accuracy`.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/experiment.h"
#include "tasks/arithmetic_task.h"

namespace maskprior::runtime {

/// The task settings.task names, with the digit orders of settings.operand_order and
/// settings.answer_order. InputError for an unknown task or order.
tasks::ArithmeticTask arithmetic_task(const ExperimentSettings& settings);

/// Token ids [P, N] (int64, CPU) of the problems `problems` (indices as in ArithmeticTask).
torch::Tensor arithmetic_ids(const tasks::ArithmeticTask& task,
                             const std::vector<int64_t>& problems);

/// The experiment for config.task ∈ {addition, multiplication}: training set = a seeded
/// config.train_fraction of all problems, test set = config.test_size other problems
/// (tasks::split_problems with config.seed).
std::unique_ptr<Experiment> make_arithmetic_experiment(const ExperimentConfig& config);

}  // namespace maskprior::runtime
