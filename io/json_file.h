// JSON files: configs, summaries and results of runs, read with errors naming the file and
// written atomically.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace maskprior {

/// The largest JSON (or JSON Lines) file read: a run folder's files are far smaller.
inline constexpr uint64_t kMaxJsonBytes = uint64_t{256} << 20;  // 256 MiB

/// Reads a JSON file; InputError naming the file if unreadable or not JSON.
nlohmann::json read_json_file(const std::string& path);
/// Reads a JSON Lines file (one JSON value per line; blank lines skipped); InputError naming the
/// file and line of a line that is not JSON.
std::vector<nlohmann::json> read_json_lines(const std::string& path);
/// Writes `value` as indented JSON atomically (temporary file + rename).
void write_json_file(const std::string& path, const nlohmann::json& value);

}  // namespace maskprior
