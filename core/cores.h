#pragma once
// How many cores this machine has, for every layer's default thread and job counts.

#include <algorithm>
#include <thread>

namespace maskprior {

/// Every core of this machine (at least 1; std::thread::hardware_concurrency may say 0).
inline int all_cores() {
  return static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
}

}  // namespace maskprior
