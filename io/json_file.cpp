#include "io/json_file.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/regular_file.h"
#include "io/atomic_file.h"

namespace maskprior {

namespace {

constexpr uint64_t kMaxJsonBytes = uint64_t{256} << 20;  // 256 MiB

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  // A run folder's JSON files are small; a FIFO or a device in their place is refused, not read.
  const std::string text = read_regular_file(path, kMaxJsonBytes, "JSON file");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

void write_json_file(const std::string& path, const nlohmann::json& value) {
  write_file_atomic(path, value.dump(2) + "\n");
}

}  // namespace maskprior
