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

/// The value in kB of field `name` ("MemAvailable:", "VmSize:") of a /proc file such as
/// /proc/meminfo or /proc/self/status, in bytes; nullopt when the file or the field is missing.
std::optional<double> proc_field_bytes(const char* path, const std::string& name) {
  std::ifstream file(path);
  for (std::string field; file >> field;) {
    double kib = 0;
    if (field == name && file >> kib) return kib * 1024;
    file.ignore(1 << 10, '\n');
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> available_memory_bytes() {
  std::optional<double> available = proc_field_bytes("/proc/meminfo", "MemAvailable:");
  // A container's limit (cgroup v2) can be far below the machine's.
  std::ifstream max_file("/sys/fs/cgroup/memory.max"),
      current_file("/sys/fs/cgroup/memory.current");
  double max = 0, current = 0;
  if (max_file >> max && current_file >> current && max > current) {
    available = available ? std::min(*available, max - current) : max - current;
  }
  // This process's address-space limit (ulimit -v) less what it has mapped already.
  const auto limit = soft_limit(RLIMIT_AS);
  if (const auto mapped = proc_field_bytes("/proc/self/status", "VmSize:"); limit && mapped) {
    const double left = std::max(0.0, static_cast<double>(*limit) - *mapped);
    available = available ? std::min(*available, left) : left;
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
