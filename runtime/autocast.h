// bfloat16 autocast for a stretch of code: LibTorch runs matrix products (linear, matmul) in
// bfloat16 and keeps the rest in float32; parameters, gradients and optimizer state stay float32.
#pragma once

#include <torch/torch.h>

namespace maskprior::runtime {

/// While alive, bfloat16 autocast is on for `device`'s type if `enabled` (as Python's
/// `torch.autocast(device_type, dtype=torch.bfloat16)`); nothing otherwise. Restores the previous
/// state and, when the outermost one ends, clears autocast's cache of cast weights.
class Autocast {
 public:
  Autocast(torch::Device device, bool enabled);
  ~Autocast();
  Autocast(const Autocast&) = delete;
  Autocast& operator=(const Autocast&) = delete;

  /// Whether autocast is on for `device`'s type now.
  static bool active(torch::Device device);

 private:
  torch::DeviceType type_;
  bool enabled_, was_enabled_ = false;
  torch::ScalarType was_dtype_ = torch::kFloat;
};

}  // namespace maskprior::runtime
