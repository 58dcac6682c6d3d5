// JSON files: configs, summaries and results of runs, read with errors naming the file and
// written atomically.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace maskprior {

/// The deepest nesting of arrays and objects a JSON reader accepts. The parser itself keeps its
/// own stack, but printing, comparing and copying a value recurse once per level, so a value
/// nested a million deep (2 MB of brackets) would overflow the stack long after it was read.
inline constexpr int kMaxJsonDepth = 512;

/// Parses `text` as JSON nested at most kMaxJsonDepth deep; InputError "WHERE: ..." when it is not
/// JSON (a number beyond double's range included) or is nested deeper.
nlohmann::json parse_json(std::string_view text, const std::string& where);

/// The most bytes read_json_file and read_json_lines read unless told otherwise: a run folder's
/// files are far smaller.
inline constexpr uint64_t kMaxJsonBytes = uint64_t{256} << 20;  // 256 MiB

/// Reads a JSON file; InputError naming the file if unreadable or not JSON.
nlohmann::json read_json_file(const std::string& path);

/// Reads a JSON Lines file (one JSON value per line; blank lines skipped) of at most `max_bytes`;
/// InputError naming the file and line of a line that is not JSON, or a larger file.
std::vector<nlohmann::json> read_json_lines(const std::string& path,
                                            uint64_t max_bytes = kMaxJsonBytes);
/// Writes `value` as indented JSON atomically (temporary file + rename).
void write_json_file(const std::string& path, const nlohmann::json& value);
/// `value` as JSON text on one line, any bytes that are not UTF-8 (a file name, a config value, a
/// line of a spec) replaced by U+FFFD: never an exception while a reply or a line is written.
std::string json_text(const nlohmann::json& value);

}  // namespace maskprior
