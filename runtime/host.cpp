#include "runtime/host.h"

#include <dlfcn.h>
#include <malloc.h>
#include <torch/torch.h>

#include <algorithm>
#include <fstream>
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

std::optional<double> available_memory_bytes() {
  std::optional<double> available;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string name; meminfo >> name;) {
    double kib = 0;
    if (name == "MemAvailable:" && meminfo >> kib) {
      available = kib * 1024;
      break;
    }
    meminfo.ignore(1 << 10, '\n');
  }
  // A container's limit (cgroup v2) can be far below the machine's.
  std::ifstream max_file("/sys/fs/cgroup/memory.max"),
      current_file("/sys/fs/cgroup/memory.current");
  double max = 0, current = 0;
  if (max_file >> max && current_file >> current && max > current) {
    available = available ? std::min(*available, max - current) : max - current;
  }
  return available;
}

}  // namespace maskprior::runtime
