#include "runtime/host.h"

#include <dlfcn.h>
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <string>

namespace maskprior::runtime {
namespace {

/// A function of the BLAS (OpenBLAS, or the MKL inside the wheel's libtorch_cpu) found among the
/// libraries already loaded, or nullptr.
template <typename Function>
Function* blas_function(const char* name) {
  return reinterpret_cast<Function*>(dlsym(RTLD_DEFAULT, name));
}

/// glibc's largest mmap threshold on 64-bit systems (DEFAULT_MMAP_THRESHOLD_MAX).
constexpr int kLargestMmapThreshold = 32 << 20;
/// Memory at the top of the heap kept rather than returned to the kernel.
constexpr int kTrimThreshold = 1 << 30;

}  // namespace

std::string blas_core() {
  if (auto* name = blas_function<char*()>("openblas_get_corename")) return name();
  if (auto* version = blas_function<void(char*, int)>("MKL_Get_Version_String")) {
    char text[256] = {};
    version(text, sizeof text - 1);
    return text;
  }
  return "";
}

int prepare_host(int threads) {
  const int count = threads > 0 ? threads : all_cores();
  torch::set_num_threads(count);
  if (auto* set = blas_function<void(int)>("openblas_set_num_threads")) set(count);
#ifdef __GLIBC__
  // Both only tune; a libc that refuses them leaves the defaults, which work.
  mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
#endif
  return count;
}

int blas_threads() {
  if (auto* get = blas_function<int()>("openblas_get_num_threads")) return get();
  if (auto* get = blas_function<int()>("mkl_get_max_threads")) return get();
  return 0;
}

}  // namespace maskprior::runtime
