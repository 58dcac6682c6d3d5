// The built-in task families' descriptors (tasks/descriptor.h), one file each; tasks/family.cpp
// lists them. Internal to the tasks layer.
#pragma once

#include "tasks/descriptor.h"

namespace maskprior::tasks {

/// parity2, maj3, cyclic3, threesym (tasks/boolean_family.cpp).
TaskFamily boolean_family();
/// addition, multiplication (tasks/arithmetic_family.cpp).
TaskFamily arithmetic_family();
/// fashion-mnist (tasks/vision_family.cpp).
TaskFamily vision_family();
/// fortunes-char (tasks/language_family.cpp).
TaskFamily language_family();
/// `maskc train --data`: your own sequences (tasks/data_families.cpp).
TaskFamily sequence_data_family();
/// `maskc train --truth-table`: your own Boolean function (tasks/data_families.cpp).
TaskFamily truth_table_family();

/// One run of `task` on `spec` per init, labelled TASK-INIT.
std::vector<SuiteRun> init_runs(const std::string& task, const std::string& spec,
                                const std::vector<std::string>& inits);

/// The Boolean GOTU metrics, shared by the built-in Boolean tasks and truth tables.
std::vector<Metric> boolean_metrics();
/// The decoder metrics of a sequence `predicted`'s rows ("digit", "token") and the test loss.
std::vector<Metric> decoder_metrics(const std::string& unit_name);

}  // namespace maskprior::tasks
