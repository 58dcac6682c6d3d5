#include "io/json_file.h"

#include <fmt/format.h>

#include "core/error.h"
#include "core/regular_file.h"
#include "io/atomic_file.h"

namespace maskprior {

namespace {

/// Thrown by the parser callback past kMaxJsonDepth (caught in parse_json).
struct TooDeep {};

}  // namespace

nlohmann::json parse_json(std::string_view text, const std::string& where) {
  const nlohmann::json::parser_callback_t limit = [](int depth, nlohmann::json::parse_event_t event,
                                                     nlohmann::json&) {
    if (depth >= kMaxJsonDepth && (event == nlohmann::json::parse_event_t::object_start ||
                                   event == nlohmann::json::parse_event_t::array_start)) {
      throw TooDeep{};
    }
    return true;
  };
  try {
    return nlohmann::json::parse(text, limit);
  } catch (const TooDeep&) {
    throw InputError(fmt::format("{}: JSON nested more than {} deep", where, kMaxJsonDepth));
  } catch (const nlohmann::json::exception& e) {  // also out_of_range: a number like 1e999
    throw InputError(fmt::format("{}: not valid JSON: {}", where, e.what()));
  }
}

nlohmann::json read_json_file(const std::string& path) {
  // A run folder's JSON files are small; a FIFO or a device in their place is refused, not read.
  return parse_json(read_regular_file(path, kMaxJsonBytes, "JSON file"), path);
}

std::vector<nlohmann::json> read_json_lines(const std::string& path, uint64_t max_bytes) {
  const std::string text = read_regular_file(path, max_bytes, "JSON Lines file");
  std::vector<nlohmann::json> records;
  size_t start = 0;
  for (int line = 1; start < text.size(); ++line) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view row(text.data() + start, end - start);
    start = end + 1;
    if (row.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    records.push_back(parse_json(row, fmt::format("{}:{}: error", path, line)));
  }
  return records;
}

void write_json_file(const std::string& path, const nlohmann::json& value) {
  write_file_atomic(path, value.dump(2) + "\n");
}

std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace maskprior
