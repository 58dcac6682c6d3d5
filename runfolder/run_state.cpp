#include "runfolder/run_state.h"

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
