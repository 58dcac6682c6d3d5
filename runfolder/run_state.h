// What a folder holds as a run: the one definition of "a run", "a finished run" and "a running
// run" that every reader uses (report/, serve/, experiments/' reuse of finished runs).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

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

/// The newest record of the run's step log (steps.jsonl: step, loss, lr, grad_norm, seconds), read
/// from the file's last 4 KiB: the last complete line, so a line still being written is skipped.
/// Nothing when there is no log yet or its last line is no JSON object with a numeric "step".
std::optional<nlohmann::json> latest_step(const std::filesystem::path& dir);

/// How far the run in `dir` has got, from the newest record of its step log and the total step
/// count in its config.json (`resolved.steps`): "step 1070 of 3840, loss 0.00033, 41.2 min, about
/// 106.7 min left" — the time so far is the log's, the time left the steps it has left at its
/// recent pace (over the log's last 4 KiB, about 30 records: a resumed run, or one that shares its
/// cores with other work for a while, is not judged by its slower or faster past). Parts it cannot
/// read are left out; "no step logged yet" before the first record.
std::string progress_text(const std::filesystem::path& dir);

/// The summary of a finished run, nothing for any other state. Throws what read_json_file
/// throws for a summary that cannot be read.
std::optional<nlohmann::json> finished_summary(const std::filesystem::path& dir);

}  // namespace maskprior::runfolder
