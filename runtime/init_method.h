// The initialisation methods by name (no LibTorch: the training config and the CLI use these).
// What each method does: runtime/init.h.
#pragma once

#include <string>
#include <vector>

namespace maskprior::runtime {

enum class InitMethod {
  kVanilla,
  kMask,
  kMaskFixed,
  kMaskZero,
  kQkSvd,
  kQkOpt,
  kMimetic,
  kImpulse
};

/// `vanilla`, `mask`, ... → the method. Throws InputError listing the valid names.
InitMethod parse_init_method(const std::string& name);
/// The command-line name of a method.
std::string init_method_name(InitMethod method);
/// Every method's command-line name, in enum order.
std::vector<std::string> init_method_names();
/// True for mask, mask-fixed, mask-zero: the model carries M.
bool init_uses_mask(InitMethod method);
/// True where the method cannot run without a spec (mask, mask-fixed, qk-svd, qk-opt).
bool init_requires_spec(InitMethod method);
/// True where the method needs a task whose layout has a grid span (impulse: vision tasks).
bool init_requires_grid(InitMethod method);

}  // namespace maskprior::runtime
