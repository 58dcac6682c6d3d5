#include "runtime/init_method.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <utility>

#include "core/error.h"

namespace maskprior::runtime {

namespace {

const std::vector<std::pair<InitMethod, std::string>>& method_table() {
  static const std::vector<std::pair<InitMethod, std::string>> table = {
      {InitMethod::kVanilla, "vanilla"},      {InitMethod::kMask, "mask"},
      {InitMethod::kMaskFixed, "mask-fixed"}, {InitMethod::kMaskZero, "mask-zero"},
      {InitMethod::kQkSvd, "qk-svd"},         {InitMethod::kQkOpt, "qk-opt"},
      {InitMethod::kMimetic, "mimetic"},      {InitMethod::kImpulse, "impulse"}};
  return table;
}

}  // namespace

InitMethod parse_init_method(const std::string& name) {
  for (const auto& [method, method_name] : method_table()) {
    if (method_name == name) return method;
  }
  throw InputError(fmt::format("unknown init method '{}' (expected one of: {})", name,
                               fmt::join(init_method_names(), ", ")));
}

std::string init_method_name(InitMethod method) {
  for (const auto& [m, name] : method_table()) {
    if (m == method) return name;
  }
  throw InternalError("init_method_name: unknown method");
}

std::vector<std::string> init_method_names() {
  std::vector<std::string> names;
  for (const auto& entry : method_table()) names.push_back(entry.second);
  return names;
}

bool init_uses_mask(InitMethod method) {
  return method == InitMethod::kMask || method == InitMethod::kMaskFixed ||
         method == InitMethod::kMaskZero;
}

bool init_requires_spec(InitMethod method) {
  return method == InitMethod::kMask || method == InitMethod::kMaskFixed ||
         method == InitMethod::kQkSvd || method == InitMethod::kQkOpt;
}

bool init_requires_grid(InitMethod method) {
  return method == InitMethod::kImpulse;
}

}  // namespace maskprior::runtime
