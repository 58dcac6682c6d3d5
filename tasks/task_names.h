// Every built-in task by name, and the one error for a name that is none of them.
#pragma once

#include <string>
#include <vector>

#include "core/error.h"

namespace maskprior::tasks {

/// The built-in tasks: the Boolean ones, the arithmetic ones, fashion-mnist, fortunes-char.
std::vector<std::string> task_names();
/// An InputError naming `task` and listing every built-in task.
InputError unknown_task(const std::string& task);

}  // namespace maskprior::tasks
