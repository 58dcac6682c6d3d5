#include "runfolder/run_state.h"

#include <algorithm>
#include <fstream>
#include <string>

#include "io/json_file.h"
#include "io/lock_file.h"
#include "runfolder/run_files.h"

namespace maskprior::runfolder {

namespace fs = std::filesystem;

namespace {

bool interrupted(const nlohmann::json& summary) {
  return summary.is_object() && summary.value("interrupted", false);
}

}  // namespace

std::optional<nlohmann::json> latest_step(const fs::path& dir) {
  constexpr std::streamoff kTail = 4096;  // a step record is about 120 bytes
  std::ifstream in(dir / kStepsJsonFile, std::ios::binary | std::ios::ate);
  if (!in) return std::nullopt;
  const std::streamoff size = std::max<std::streamoff>(in.tellg(), 0);
  const std::streamoff tail = std::min(size, kTail);
  std::string text(static_cast<size_t>(tail), '\0');
  in.seekg(size - tail);
  if (!in.read(text.data(), tail)) return std::nullopt;
  const size_t end = text.rfind('\n');  // the end of the last complete line
  if (end == std::string::npos || end == 0) return std::nullopt;
  const size_t before = text.rfind('\n', end - 1);
  const size_t from = before == std::string::npos ? 0 : before + 1;
  nlohmann::json record = nlohmann::json::parse(text.substr(from, end - from), nullptr, false);
  if (!record.is_object() || !record.value("step", nlohmann::json()).is_number_integer()) {
    return std::nullopt;
  }
  return record;
}

std::optional<nlohmann::json> finished_summary(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_regular_file(dir / kSummaryFile, error)) return std::nullopt;
  nlohmann::json summary = read_json_file((dir / kSummaryFile).string());
  if (interrupted(summary)) return std::nullopt;
  return summary;
}

RunState run_state(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_regular_file(dir / kConfigFile, error)) return RunState::kNone;
  if (fs::is_regular_file(dir / kSummaryFile, error)) {
    try {
      if (finished_summary(dir)) return RunState::kFinished;
    } catch (const std::exception&) {
      return RunState::kFinished;
    }
  }
  return fs::exists(dir / kLockFileName, error) ? RunState::kRunning : RunState::kStopped;
}

const char* run_state_name(RunState state) {
  switch (state) {
    case RunState::kFinished:
      return "finished";
    case RunState::kRunning:
      return "running";
    case RunState::kStopped:
      return "stopped";
    case RunState::kNone:
      break;
  }
  return "none";
}

}  // namespace maskprior::runfolder
