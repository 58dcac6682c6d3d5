#include "runtime/host.h"

#include <dlfcn.h>
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>

namespace maskprior::runtime {
namespace {

/// A function of OpenBLAS found among the libraries already loaded, or nullptr.
template <typename Function>
Function* openblas_function(const char* name) {
  return reinterpret_cast<Function*>(dlsym(RTLD_DEFAULT, name));
}

/// glibc's largest mmap threshold on 64-bit systems (DEFAULT_MMAP_THRESHOLD_MAX).
constexpr int kLargestMmapThreshold = 32 << 20;
/// Memory at the top of the heap kept rather than returned to the kernel.
constexpr int kTrimThreshold = 1 << 30;

}  // namespace

std::string blas_core() {
  auto* name = openblas_function<char*()>("openblas_get_corename");
  return name != nullptr ? std::string(name()) : std::string();
}

int prepare_host(int threads) {
  const int count = threads > 0 ? threads : all_cores();
  torch::set_num_threads(count);
  if (auto* set = openblas_function<void(int)>("openblas_set_num_threads")) set(count);
#ifdef __GLIBC__
  // Both only tune; a libc that refuses them leaves the defaults, which work.
  mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
#endif
  return count;
}

int blas_threads() {
  auto* get = openblas_function<int()>("openblas_get_num_threads");
  return get != nullptr ? get() : 0;
}

}  // namespace maskprior::runtime
