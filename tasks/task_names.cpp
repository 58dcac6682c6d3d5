#include "tasks/task_names.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tasks/arithmetic_task.h"
#include "tasks/boolean_task.h"
#include "tasks/fashion_mnist.h"
#include "tasks/text_corpus.h"

namespace maskprior::tasks {

std::vector<std::string> task_names() {
  std::vector<std::string> names = boolean_task_names();
  for (const std::string& name : arithmetic_task_names()) names.push_back(name);
  for (const std::string& name : vision_task_names()) names.push_back(name);
  for (const std::string& name : language_task_names()) names.push_back(name);
  return names;
}

InputError unknown_task(const std::string& task) {
  return InputError(
      fmt::format("unknown task '{}' (known: {})", task, fmt::join(task_names(), ", ")));
}

}  // namespace maskprior::tasks
