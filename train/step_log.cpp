#include "train/step_log.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <sstream>
#include <string>

#include "core/regular_file.h"
#include "io/atomic_file.h"

namespace maskprior::training {

namespace {

using nlohmann::json;

/// The most a step log may hold when a resumed run reads it back.
constexpr uint64_t kMaxStepLogBytes = uint64_t{1} << 30;

/// The step a line of the log names; -1 when it names none (a header, a line cut short).
int64_t step_of_json(const std::string& line) {
  const json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!record.is_object() || !record.contains("step") || !record["step"].is_number_integer()) {
    return -1;
  }
  return record["step"].get<int64_t>();
}

int64_t step_of_csv(const std::string& line) {
  // A whole line has all five fields; a shorter one was cut short while being appended.
  const auto comma = line.find(',');
  if (comma == std::string::npos || std::count(line.begin(), line.end(), ',') != 4) return -1;
  int64_t step = -1;
  const auto [end, error] = std::from_chars(line.data(), line.data() + comma, step);
  return error == std::errc() && end == line.data() + comma ? step : -1;
}

/// Rewrites `path` with its lines whose step (`step_of`) is at most `step` (and `header` first,
/// when given).
template <class StepOf>
void keep_up_to(const std::string& path, int64_t step, const char* header, StepOf step_of) {
  if (!std::filesystem::exists(path)) return;
  std::istringstream in(read_regular_file(path, kMaxStepLogBytes, "step log"));
  std::string kept = header != nullptr ? std::string(header) + "\n" : std::string();
  for (std::string line; std::getline(in, line);) {
    if (in.eof()) break;  // no newline: cut short
    const int64_t line_step = step_of(line);
    if (line_step >= 0 && line_step <= step) kept += line + "\n";
  }
  write_file_atomic(path, kept);
}

}  // namespace

bool StepLog::due(int64_t step, int64_t total) const {
  return enabled() && (step % every_ == 0 || step == total);
}

void StepLog::append(const StepRecord& r) const {
  if (!enabled()) return;
  const json line = {{"step", r.step},
                     {"loss", r.loss},
                     {"lr", r.lr},
                     {"grad_norm", r.grad_norm},
                     {"seconds", r.seconds}};
  append_file(folder_.file(kStepsJsonFile), line.dump() + "\n");
  const std::string csv = folder_.file(kStepsCsvFile);
  std::string text;
  if (!std::filesystem::exists(csv)) text = std::string(kStepsCsvHeader) + "\n";
  text += fmt::format("{},{},{},{},{}\n", r.step, r.loss, r.lr, r.grad_norm, r.seconds);
  append_file(csv, text);
}

void StepLog::truncate(int64_t step) const {
  if (!folder_.enabled()) return;  // a log written with another --log-every is cut as well
  keep_up_to(folder_.file(kStepsJsonFile), step, nullptr, step_of_json);
  keep_up_to(folder_.file(kStepsCsvFile), step, kStepsCsvHeader, step_of_csv);
}

}  // namespace maskprior::training
