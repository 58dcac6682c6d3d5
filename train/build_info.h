// What a run was computed with: the commit and build of this program (written at build time by
// cmake/build_info.cmake), and the machine it runs on. A run's summary.json records them
// ("provenance"), and reports name them.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace maskprior::training {

struct BuildInfo {
  std::string commit;      // the full hash of HEAD, or "unknown" outside a git checkout
  bool dirty = false;      // tracked files differed from HEAD when the program was built
  std::string build_type;  // CMAKE_BUILD_TYPE (Release, Debug, ...)
};
const BuildInfo& build_info();

/// {"commit", "dirty", "build_type", "torch", "host", "cpu", "cores"}: the build (build_info),
/// LibTorch's version, and this machine (host name, CPU model from /proc/cpuinfo, online cores).
nlohmann::json provenance();

}  // namespace maskprior::training
