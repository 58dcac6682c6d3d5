#include "train/evaluation_history.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <iterator>

#include "core/error.h"
#include "io/json_file.h"

namespace maskprior::training {

using nlohmann::json;

std::vector<int64_t> lost_evaluations(const std::string& metrics_path, int64_t checkpoint_step,
                                      const std::vector<int64_t>& written,
                                      const std::vector<int64_t>& present) {
  std::vector<int64_t> sorted = present;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> lost, foreign;
  std::set_difference(written.begin(), written.end(), sorted.begin(), sorted.end(),
                      std::back_inserter(lost));
  std::set_difference(sorted.begin(), sorted.end(), written.begin(), written.end(),
                      std::back_inserter(foreign));
  if (!foreign.empty() || sorted != present) {
    throw InputError(fmt::format(
        "{} is not this run's history: it holds evaluations at steps {} that the run never wrote "
        "before its checkpoint at step {} (it wrote {}). Restore the run's own metrics.jsonl, or "
        "start a new run",
        metrics_path, fmt::join(foreign.empty() ? present : foreign, ", "), checkpoint_step,
        fmt::join(written, ", ")));
  }
  return lost;
}

void EvaluationHistory::resume(int64_t step, const std::optional<std::vector<int64_t>>& written) {
  if (folder_.enabled()) init_ = folder_.read_json(kInitFile);
  std::vector<json> records = folder_.truncate_metrics(step);
  steps_.clear();
  for (const json& record : records) steps_.push_back(record.value("step", int64_t{-1}));
  if (folder_.enabled() && written) {
    lost_ = lost_evaluations(folder_.file(kMetricsFile), step, *written, steps_);
    if (!lost_.empty()) {
      std::cerr << fmt::format(
          "maskc: warning: {} lost the evaluations at steps {} (written before the checkpoint "
          "at step {}); the run continues, and its summary names them as missing_evaluations\n",
          folder_.file(kMetricsFile), fmt::join(lost_, ", "), step);
    }
  }
  // The evaluation at the checkpoint's step, if any: a run killed after its last checkpoint but
  // before summary.json finishes with the same summary as one never killed.
  for (json& record : records) {
    if (record.value("step", int64_t{-1}) == step && record.contains("train_loss")) {
      last_ = std::move(record);
    }
  }
}

void EvaluationHistory::start(const json& record) {
  init_ = record;
  folder_.write_json(kInitFile, record);
  folder_.start_metrics(record);  // never appended to a file left by another run
  steps_.push_back(record.value("step", int64_t{0}));
  session_.push_back(record);
}

void EvaluationHistory::append(const json& record) {
  folder_.append_metrics(record);
  steps_.push_back(record.value("step", int64_t{-1}));
  session_.push_back(record);
  last_ = record;
}

std::vector<json> EvaluationHistory::records() const {
  return folder_.enabled() ? read_json_lines(folder_.file(kMetricsFile)) : session_;
}

}  // namespace maskprior::training
