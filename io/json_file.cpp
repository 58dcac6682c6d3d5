#include "io/json_file.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/regular_file.h"
#include "io/atomic_file.h"

namespace maskprior {

nlohmann::json read_json_file(const std::string& path) {
  // A run folder's JSON files are small; a FIFO or a device in their place is refused, not read.
  const std::string text = read_regular_file(path, kMaxJsonBytes, "JSON file");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

std::vector<nlohmann::json> read_json_lines(const std::string& path) {
  const std::string text = read_regular_file(path, kMaxJsonBytes, "JSON Lines file");
  std::vector<nlohmann::json> records;
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view row(text.data() + start, end - start);
    start = end + 1;
    if (row.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto record = nlohmann::json::parse(row, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded()) {
      throw InputError(fmt::format("{}:{}: error: not a JSON value", path, line));
    }
    records.push_back(std::move(record));
  }
  return records;
}

void write_json_file(const std::string& path, const nlohmann::json& value) {
  write_file_atomic(path, value.dump(2) + "\n");
}

}  // namespace maskprior
