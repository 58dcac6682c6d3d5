#include "train/fingerprints.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/sha256.h"

namespace maskprior::training {

namespace {

using nlohmann::json;

constexpr const char* kFormat = "maskprior-fingerprints/1";
/// Files are hashed whole; a data file is at most 1 GiB (tasks/sequence_file.h), a spec 16 MiB.
constexpr uint64_t kMaxHashedBytes = uint64_t{64} << 30;

/// The files a run reads, by config key: (key, path) for each one given.
std::vector<std::pair<std::string, std::string>> run_files(const TrainConfig& config) {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& [key, path] : {std::pair<std::string, std::string>{"spec", config.spec},
                                  {"data", config.data},
                                  {"test_data", config.test_data},
                                  {"truth_table", config.truth_table}}) {
    if (!path.empty()) files.emplace_back(key, path);
  }
  return files;
}

std::string config_sha256(const json& config_json) {
  return sha256_hex(config_json.dump());
}

/// "lr was 0.001, now 0.5" for every key that differs, in key order.
std::vector<std::string> config_changes(const json& before, const json& now) {
  std::set<std::string> keys;
  for (const auto& item : before.items()) keys.insert(item.key());
  for (const auto& item : now.items()) keys.insert(item.key());
  std::vector<std::string> changes;
  for (const std::string& key : keys) {
    const auto was = before.find(key);
    const auto is = now.find(key);
    const std::string old_text = was == before.end() ? "missing" : was->dump();
    const std::string new_text = is == now.end() ? "missing" : is->dump();
    if (old_text != new_text) {
      changes.push_back(fmt::format("{} was {}, now {}", key, quote_input(old_text, 80),
                                    quote_input(new_text, 80)));
    }
  }
  return changes;
}

}  // namespace

json run_fingerprints(const json& config_json, const TrainConfig& config) {
  json files = json::object();
  for (const auto& [key, path] : run_files(config)) {
    files[key] = {{"path", path}, {"sha256", sha256_file(path, kMaxHashedBytes, key)}};
  }
  return {{"format", kFormat},
          {"config", config_json},
          {"config_sha256", config_sha256(config_json)},
          {"files", files}};
}

void check_fingerprints(const json& fingerprints, const json& config_json,
                        const TrainConfig& config, const std::string& config_path) {
  if (!fingerprints.is_object() || fingerprints.value("format", "") != kFormat ||
      !fingerprints.contains("config") || !fingerprints.contains("files") ||
      !fingerprints["files"].is_object()) {
    throw InputError(
        fmt::format("{}: the run's fingerprints.json next to it is damaged (not a "
                    "\"{}\" object): its run cannot be checked, so it is not resumed",
                    config_path, kFormat));
  }
  const json& created = fingerprints["config"];
  if (config_sha256(config_json) != fingerprints.value("config_sha256", "")) {
    const std::vector<std::string> changes = config_changes(created, config_json);
    throw InputError(fmt::format(
        "{} changed since the run was created{}{}: a run's settings are fixed when it starts "
        "(--resume may change only {}). Restore it, or start a new run",
        config_path, changes.empty() ? "" : ": ", fmt::join(changes, "; "),
        fmt::join(resumable_keys(), ", ")));
  }
  const json& files = fingerprints["files"];
  for (const auto& [key, path] : run_files(config)) {
    const auto stored = files.find(key);
    if (stored == files.end() || !stored->is_object()) {
      throw InputError(
          fmt::format("{}: the run names a {} ({}) that was not fingerprinted when it "
                      "was created",
                      config_path, key, quote_input(path)));
    }
    const std::string now = sha256_file(path, kMaxHashedBytes, key);
    if (now != stored->value("sha256", "")) {
      throw InputError(fmt::format(
          "the {} file {} changed since the run in {} was created (SHA-256 {}, now {}); a "
          "relative path is read from the current folder. Restore the file the run was created "
          "with (or resume from the folder it was started in), or start a new run",
          key, quote_input(path), config_path, stored->value("sha256", ""), now));
    }
  }
}

}  // namespace maskprior::training
