#pragma once
// What this machine can hold, for every layer's defaults and its checks before work starts: cores,
// the thread cap, the memory a new allocation can have, and this process's resource limits.

#include <cstdint>
#include <optional>

#include "core/cores.h"

namespace maskprior {

/// The most CPU threads one process may ask for (`--threads`, a run's config.json): far above any
/// machine's cores, far below the count at which creating them exhausts the machine.
inline constexpr int kMaxThreads = 1024;

/// The memory this machine can give a new allocation now, in bytes: /proc/meminfo's MemAvailable,
/// or less where the cgroup's memory.max less its use, or this process's address-space limit
/// (ulimit -v) less its mapped size, is smaller; nullopt when unknown.
std::optional<double> available_memory_bytes();

/// The soft limit on this user's processes (RLIMIT_NPROC), or nullopt when unlimited or unknown.
std::optional<int64_t> process_limit();

/// The soft limit on this process's open files (RLIMIT_NOFILE), or nullopt when unlimited or
/// unknown.
std::optional<int64_t> open_file_limit();

}  // namespace maskprior
