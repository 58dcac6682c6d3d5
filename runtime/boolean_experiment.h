// The Boolean GOTU family's experiment (runtime/boolean_experiment.cpp).
#pragma once

#include <memory>

#include "runtime/experiment.h"
#include "runtime/experiment_config.h"

namespace maskprior::runtime {

/// Boolean GOTU tasks (parity2, maj3, cyclic3, threesym) on config.n bits.
std::unique_ptr<Experiment> make_boolean_experiment(const ExperimentConfig& config);

}  // namespace maskprior::runtime
