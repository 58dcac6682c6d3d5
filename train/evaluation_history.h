// The evaluations of a run over all its sessions: the step-0 record (init.json), the records of
// metrics.jsonl, the last one (what summary.json reports) and those a resumed run found lost.
// Files only, no LibTorch: the loop (train/train.cpp) measures, this keeps.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "train/run_folder.h"

namespace maskprior::training {

/// Compares the evaluation steps metrics.jsonl holds (`present`, up to the checkpoint's step,
/// in file order) with those it held when the checkpoint was written (`written`, ascending): the
/// steps it lost are returned; a step the run never evaluated, or steps out of order, mean the
/// file is another run's: InputError naming `metrics_path`.
std::vector<int64_t> lost_evaluations(const std::string& metrics_path, int64_t checkpoint_step,
                                      const std::vector<int64_t>& written,
                                      const std::vector<int64_t>& present);

class EvaluationHistory {
 public:
  /// `folder`: the run's (disabled: a run without --out, or a rank other than 0; the history then
  /// keeps this session's records in memory only). It must outlive the history.
  explicit EvaluationHistory(const RunFolder& folder) : folder_(folder) {}

  /// Resuming at a checkpoint of `step` that recorded the evaluation steps `written` (nullopt: a
  /// checkpoint without checkpoint.json): keeps metrics.jsonl up to `step`, reads init.json,
  /// warns of evaluations lost since the checkpoint (lost() names them) and takes the record at
  /// `step`, if it has a train loss, as the last. InputError when metrics.jsonl is not this run's.
  void resume(int64_t step, const std::optional<std::vector<int64_t>>& written);
  /// The step-0 record of a new run: written to init.json and as metrics.jsonl's first line.
  void start(const nlohmann::json& record);
  /// Another evaluation, appended to metrics.jsonl; it becomes the last record.
  void append(const nlohmann::json& record);

  /// The step-0 record (null until start or resume).
  const nlohmann::json& init_record() const { return init_; }
  /// The latest evaluation after step 0 (null: none yet, or a resumed run that had none at its
  /// checkpoint's step).
  const nlohmann::json& last_record() const { return last_; }
  /// The steps metrics.jsonl holds records of, in order (what a checkpoint records).
  const std::vector<int64_t>& steps() const { return steps_; }
  /// Evaluations of earlier sessions that metrics.jsonl lost (summary's missing_evaluations).
  const std::vector<int64_t>& lost() const { return lost_; }
  /// Every record of the run: metrics.jsonl's with a folder, else this session's.
  std::vector<nlohmann::json> records() const;

 private:
  const RunFolder& folder_;
  nlohmann::json init_, last_;
  std::vector<int64_t> steps_, lost_;
  std::vector<nlohmann::json> session_;  // this session's records (a run without a folder)
};

}  // namespace maskprior::training
