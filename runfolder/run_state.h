// What a folder holds as a run: the one definition of "a run", "a finished run" and "a running
// run" that every reader uses (report/, serve/, experiments/' reuse of finished runs).
#pragma once

#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace maskprior::runfolder {

enum class RunState {
  kNone,      // no config.json: not a run
  kRunning,   // not finished, and a training process holds the folder's lock (.lock)
  kStopped,   // not finished: no summary.json, or one that says it was interrupted
  kFinished,  // summary.json, not interrupted
};

/// The state of run folder `dir`. A summary.json that cannot be read counts as finished (its
/// readers report what is wrong with it).
RunState run_state(const std::filesystem::path& dir);

/// "finished", "running", "stopped" or "none".
const char* run_state_name(RunState state);

/// The summary of a finished run, nothing for any other state. Throws what read_json_file
/// throws for a summary that cannot be read.
std::optional<nlohmann::json> finished_summary(const std::filesystem::path& dir);

}  // namespace maskprior::runfolder
