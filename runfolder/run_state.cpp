#include "runfolder/run_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "core/text.h"
#include "io/json_file.h"
#include "io/lock_file.h"
#include "runfolder/run_files.h"

namespace maskprior::runfolder {

namespace fs = std::filesystem;

namespace {

bool interrupted(const nlohmann::json& summary) {
  return summary.is_object() && summary.value("interrupted", false);
}

/// The run's total step count from its config.json (`resolved.steps`); nothing when the file is
/// not there or says no positive count.
std::optional<int64_t> planned_steps(const fs::path& dir) {
  try {
    const nlohmann::json config = read_json_file((dir / kConfigFile).string());
    if (!config.is_object()) return std::nullopt;
    const nlohmann::json resolved = config.value("resolved", nlohmann::json::object());
    if (!resolved.is_object()) return std::nullopt;
    const nlohmann::json steps = resolved.value("steps", nlohmann::json());
    if (steps.is_number_integer() && steps.get<int64_t>() > 0) return steps.get<int64_t>();
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

/// Whether `record` is a step record: a JSON object with an integer "step".
bool is_step_record(const nlohmann::json& record) {
  return record.is_object() && record.value("step", nlohmann::json()).is_number_integer();
}

/// The complete lines of the last 4 KiB of the run's step log, parsed (a line that is no JSON is a
/// discarded value), oldest first: the first line of the tail is dropped when the file is longer
/// (it may start mid-record), and so is the text after the last newline (a line being written).
std::vector<nlohmann::json> tail_records(const fs::path& dir) {
  constexpr std::streamoff kTail = 4096;  // a step record is about 120 bytes
  std::ifstream in(dir / kStepsJsonFile, std::ios::binary | std::ios::ate);
  if (!in) return {};
  const std::streamoff size = std::max<std::streamoff>(in.tellg(), 0);
  const std::streamoff tail = std::min(size, kTail);
  std::string text(static_cast<size_t>(tail), '\0');
  in.seekg(size - tail);
  if (!in.read(text.data(), tail)) return {};
  std::vector<nlohmann::json> records;
  size_t from = 0;
  if (size > tail) {  // skip the first, likely partial, line
    from = text.find('\n');
    if (from == std::string::npos) return {};
    ++from;
  }
  for (size_t end = text.find('\n', from); end != std::string::npos;
       from = end + 1, end = text.find('\n', from)) {
    if (end > from)
      records.push_back(nlohmann::json::parse(text.substr(from, end - from), nullptr, false));
  }
  return records;
}

/// Seconds a step at the run's recent pace: over the step records of the log's tail (about the
/// last 30), or from the start when the tail has fewer than two with times; nothing without times.
std::optional<double> recent_pace(const std::vector<nlohmann::json>& records) {
  std::vector<std::pair<int64_t, double>> timed;  // step, seconds
  for (const nlohmann::json& r : records) {
    if (is_step_record(r) && r.value("seconds", nlohmann::json()).is_number()) {
      timed.emplace_back(r["step"].get<int64_t>(), r["seconds"].get<double>());
    }
  }
  if (timed.empty()) return std::nullopt;
  auto [step0, seconds0] = timed.size() >= 2 ? timed.front() : std::pair<int64_t, double>{0, 0.0};
  const auto [step1, seconds1] = timed.back();
  if (step1 <= step0 || seconds1 < seconds0) return std::nullopt;
  return (seconds1 - seconds0) / static_cast<double>(step1 - step0);
}

}  // namespace

std::optional<nlohmann::json> latest_step(const fs::path& dir) {
  std::vector<nlohmann::json> records = tail_records(dir);
  if (records.empty() || !is_step_record(records.back())) return std::nullopt;
  return std::move(records.back());
}

std::string progress_text(const fs::path& dir) {
  const std::vector<nlohmann::json> records = tail_records(dir);
  if (records.empty() || !is_step_record(records.back())) return "no step logged yet";
  const nlohmann::json& record = records.back();
  const auto step = record["step"].get<int64_t>();
  const std::optional<int64_t> total = planned_steps(dir);
  std::string text = fmt::format("step {}", step);
  if (total) text += fmt::format(" of {}", *total);
  if (record.value("loss", nlohmann::json()).is_number()) {
    text += fmt::format(", loss {:.3g}", record["loss"].get<double>());
  }
  if (record.value("seconds", nlohmann::json()).is_number()) {
    text += ", " + human_duration(record["seconds"].get<double>());
    const std::optional<double> pace = recent_pace(records);
    if (total && pace && *total > step) {
      text += ", about " + human_duration(*pace * static_cast<double>(*total - step)) + " left";
    }
  }
  return text;
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
