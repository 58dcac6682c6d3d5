#include <torch/version.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <string>
#include <thread>

#include "train/build_info.h"

namespace maskprior::training {

namespace {

/// The first "model name" of /proc/cpuinfo ("" where there is none).
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "";
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "";
  return name.data();
}

}  // namespace

nlohmann::json provenance() {
  const auto& build = build_info();
  return {{"commit", build.commit},
          {"dirty", build.dirty},
          {"build_type", build.build_type},
          {"torch", TORCH_VERSION},
          {"host", host_name()},
          {"cpu", cpu_model()},
          {"cores", std::thread::hardware_concurrency()}};
}

}  // namespace maskprior::training
