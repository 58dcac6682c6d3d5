#include "core/machine.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace maskprior {

namespace {

std::optional<int64_t> soft_limit(int resource) {
  rlimit limit{};
  if (::getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return std::nullopt;
  return static_cast<int64_t>(std::min<rlim_t>(limit.rlim_cur, INT64_MAX));
}

}  // namespace

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
  // This process's address-space limit (ulimit -v) less what it has mapped already.
  if (const auto limit = soft_limit(RLIMIT_AS)) {
    std::ifstream status("/proc/self/status");
    for (std::string name; status >> name;) {
      double kib = 0;
      if (name == "VmSize:" && status >> kib) {
        const double left = std::max(0.0, static_cast<double>(*limit) - kib * 1024);
        available = available ? std::min(*available, left) : left;
        break;
      }
      status.ignore(1 << 10, '\n');
    }
  }
  return available;
}

std::optional<int64_t> process_limit() {
  return soft_limit(RLIMIT_NPROC);
}

std::optional<int64_t> open_file_limit() {
  return soft_limit(RLIMIT_NOFILE);
}

}  // namespace maskprior
