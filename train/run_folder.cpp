#include "train/run_folder.h"

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/text.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "io/mask_file.h"
#include "tasks/sequence_file.h"

namespace maskprior::training {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// As much as the compiler reads of a spec (compiler/compile.cpp).
constexpr uint64_t kMaxSpecCopyBytes = uint64_t{16} << 20;

/// Every file a run writes: the run files but the lock, which the process using the folder holds.
std::vector<std::string_view> written_files() {
  std::vector<std::string_view> names;
  for (const auto& [key, name] : runfolder::kRunFiles) {
    if (name != runfolder::kLockFile) names.push_back(name);
  }
  return names;
}

}  // namespace

std::string RunFolder::file(std::string_view name) const {
  return (fs::path(path_) / name).string();
}

bool RunFolder::has(std::string_view name) const {
  return enabled() && fs::exists(file(name));
}

bool RunFolder::never_checkpointed() const {
  return has(kConfigFile) && !has(kCheckpointFile) && !has(kSummaryFile);
}

void RunFolder::clear_run() const {
  if (!enabled()) return;
  for (const std::string_view name : written_files()) {
    std::error_code error;
    fs::remove(file(name), error);
    if (error) {
      throw InputError(fmt::format("cannot remove {}: {}", file(name), error.message()));
    }
  }
}

std::vector<std::string> RunFolder::files_without_config() const {
  std::vector<std::string> found;
  if (!enabled() || has(kConfigFile)) return found;
  for (const std::string_view name : written_files()) {
    std::error_code error;
    if (fs::exists(fs::symlink_status(file(name), error))) found.emplace_back(name);
  }
  return found;
}

void RunFolder::create(const TrainConfig& config, const json& resolved) const {
  if (!enabled()) return;
  std::error_code error;
  fs::create_directories(path_, error);
  if (error) {
    throw InputError(
        fmt::format("cannot create run folder {}: {}", printable_utf8(path_), error.message()));
  }
  write_json(kConfigFile, run_config_json(config, resolved));
}

void RunFolder::copy_spec(const std::string& spec_path) const {
  if (!enabled() || !spec_path.ends_with(".mask")) return;
  write_file_atomic(file(kSpecFile), read_regular_file(spec_path, kMaxSpecCopyBytes, "spec"));
}

json RunFolder::read_json(std::string_view name) const {
  return read_json_file(file(name));
}

TrainConfig RunFolder::read_config(const json& overrides, json* written) const {
  if (!has(kConfigFile)) {
    throw InputError(fmt::format("{} is not a run folder (no {})", path_, kConfigFile));
  }
  const std::string config_path = file(kConfigFile);
  json j = read_json(kConfigFile);
  if (!j.is_object()) {
    throw InputError(fmt::format("{}:1: error: a run's config is a JSON object, not {} {}",
                                 config_path, j.is_array() ? "an" : "a", j.type_name()));
  }
  if (written != nullptr) *written = j;
  if (!overrides.is_null()) j.update(overrides);
  try {
    return config_from_json(j);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: error: {}", config_path, e.what()));
  }
}

void RunFolder::write_json(std::string_view name, const json& value) const {
  if (enabled()) write_json_file(file(name), value);
}

void RunFolder::start_metrics(const json& record) const {
  if (enabled()) write_file_atomic(file(kMetricsFile), record.dump() + "\n");
}

void RunFolder::append_metrics(const json& record) const {
  if (enabled()) append_file(file(kMetricsFile), record.dump() + "\n");
}

std::vector<json> RunFolder::truncate_metrics(int64_t step) const {
  std::vector<json> records;
  if (!enabled()) return records;
  const std::string path = file(kMetricsFile);
  std::error_code error;
  if (!fs::exists(fs::symlink_status(path, error))) return records;  // lost: checked by the caller
  std::istringstream in(read_regular_file(path, kMaxJsonBytes, "metrics file"));
  std::string kept, line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty()) continue;
    json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded() || !record.is_object()) {
      // A process killed while appending can leave the last record cut short: drop it.
      if (in.peek() == std::char_traits<char>::eof()) break;
      throw InputError(fmt::format("{}:{}: not a JSON record", path, number));
    }
    if (record.value("step", int64_t{0}) > step) continue;
    kept += line + "\n";
    records.push_back(std::move(record));
  }
  write_file_atomic(path, kept);
  return records;
}

void RunFolder::write_weights(SafetensorsData tensors, const TrainConfig& config) const {
  if (!enabled()) return;
  tensors.metadata["format"] = "maskprior-weights/1";
  tensors.metadata["config"] = to_json(config).dump();
  write_safetensors(file(kWeightsFile), tensors);
}

void RunFolder::write_test_rows(const SafetensorsData& rows) const {
  if (enabled()) write_safetensors(file(kTestRowsFile), rows);
}

void RunFolder::write_mask(const CompiledMask& mask) const {
  if (enabled()) write_mask_file(mask, file(kMaskFile));
}

}  // namespace maskprior::training
