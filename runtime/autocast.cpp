#include "runtime/autocast.h"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

namespace maskprior::runtime {

namespace {

// LibTorch 2.4 made autocast's switches take the device type; 1.13 has one set per device.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
bool enabled_for(torch::DeviceType type) {
  return at::autocast::is_autocast_enabled(type);
}
void enable_for(torch::DeviceType type, bool on) {
  at::autocast::set_autocast_enabled(type, on);
}
torch::ScalarType dtype_for(torch::DeviceType type) {
  return at::autocast::get_autocast_dtype(type);
}
void set_dtype_for(torch::DeviceType type, torch::ScalarType dtype) {
  at::autocast::set_autocast_dtype(type, dtype);
}
#else
bool enabled_for(torch::DeviceType type) {
  return type == torch::kCUDA ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled();
}
void enable_for(torch::DeviceType type, bool on) {
  if (type == torch::kCUDA) {
    at::autocast::set_enabled(on);
  } else {
    at::autocast::set_cpu_enabled(on);
  }
}
torch::ScalarType dtype_for(torch::DeviceType type) {
  return type == torch::kCUDA ? at::autocast::get_autocast_gpu_dtype()
                              : at::autocast::get_autocast_cpu_dtype();
}
void set_dtype_for(torch::DeviceType type, torch::ScalarType dtype) {
  if (type == torch::kCUDA) {
    at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_autocast_cpu_dtype(dtype);
  }
}
#endif

}  // namespace

Autocast::Autocast(torch::Device device, bool enabled)
    : type_(device.type() == torch::kCUDA ? torch::kCUDA : torch::kCPU), enabled_(enabled) {
  if (!enabled_) return;
  was_enabled_ = enabled_for(type_);
  was_dtype_ = dtype_for(type_);
  set_dtype_for(type_, torch::kBFloat16);
  enable_for(type_, true);
  at::autocast::increment_nesting();
}

Autocast::~Autocast() {
  if (!enabled_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  enable_for(type_, was_enabled_);
  set_dtype_for(type_, was_dtype_);
}

bool Autocast::active(torch::Device device) {
  return enabled_for(device.type() == torch::kCUDA ? torch::kCUDA : torch::kCPU);
}

}  // namespace maskprior::runtime
