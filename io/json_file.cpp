#include "io/json_file.h"

#include <fmt/format.h>

#include <fstream>

#include "core/error.h"
#include "io/atomic_file.h"

namespace maskprior {

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read {}", path));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

void write_json_file(const std::string& path, const nlohmann::json& value) {
  write_file_atomic(path, value.dump(2) + "\n");
}

}  // namespace maskprior
