// Arithmetic in the low-data regime (docs/arithmetic.md): 3-digit addition and multiplication as a
// causal decoder over `a[3] op b[3] eq c[K]` (tasks/arithmetic_task.h; docs/paper.md, "Our
// format"). The answer c is the span the decoder learns and decodes (runtime/decoder.h); its share
// of right tokens is reported as `digit_accuracy`.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/experiment.h"
#include "tasks/arithmetic_task.h"

namespace maskprior::runtime {

/// The task settings.task names, with operands of `digits` digits and the digit orders of
/// settings.operand_order and settings.answer_order. InputError for an unknown task or order.
tasks::ArithmeticTask arithmetic_task(const ExperimentSettings& settings, int digits = 3);

/// Token ids [P, N] (int64, CPU) of the problems `problems` (indices as in ArithmeticTask).
torch::Tensor arithmetic_ids(const tasks::ArithmeticTask& task,
                             const std::vector<int64_t>& problems);

/// The experiment for config.task ∈ {addition, multiplication}. At the paper's 3 digits: training
/// set = a seeded config.train_fraction of all problems, test set = config.test_size other
/// problems (tasks::split_problems with config.seed). At other sizes, or over several
/// (config.digits, config.test_digits): config.train_size problems per trained size (0:
/// kDefaultProblemsPerSize) and config.test_size per tested size, drawn disjoint
/// (tasks::sample_digit_problems); several sizes make a sized run (Experiment::size_groups).
std::unique_ptr<Experiment> make_arithmetic_experiment(const ExperimentConfig& config);

}  // namespace maskprior::runtime
