#include "runtime/truth_table_experiment.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "runtime/regression_experiment.h"

namespace maskprior::runtime {

namespace {

void check_binding(const TruthTableTask& task) {
  const auto& table = task.table;
  if (table.outputs.size() != 1) {
    throw InputError(fmt::format("{}: training reads one output column `y`, the table has {} ({})",
                                 table.source, table.outputs.size(),
                                 fmt::join(table.outputs, ", ")));
  }
  if (task.input_tokens.size() != table.inputs.size()) {
    throw InternalError("truth table: one token per input column expected");
  }
  std::vector<int> columns(static_cast<size_t>(task.layout.size()), -1);
  for (size_t i = 0; i < task.input_tokens.size(); ++i) {
    const int64_t token = task.input_tokens[i];
    if (token <= 0 || token >= task.layout.size() || columns[static_cast<size_t>(token)] >= 0) {
      throw InputError(fmt::format("{}: column {} names token {}, which {}", table.source,
                                   quote_input(table.inputs[i]), task.layout.token_label(token),
                                   token == 0 ? "is the readout (cls)" : "another column names"));
    }
    columns[static_cast<size_t>(token)] = static_cast<int>(i);
  }
  for (int64_t t = 1; t < task.layout.size(); ++t) {
    if (columns[static_cast<size_t>(t)] < 0) {
      throw InputError(fmt::format(
          "{}: no column gives token {} of the spec ({}); every token after the readout `{}` "
          "needs a column (e.g. `{}`)",
          table.source, task.layout.token_label(t), layout_text(task.layout),
          task.layout.token_label(0), task.layout.token_label(t)));
    }
  }
}

class TruthTableExperiment : public RegressionExperiment {
 public:
  explicit TruthTableExperiment(TruthTableTask task) : task_(std::move(task)) {
    check_binding(task_);
    const auto& table = task_.table;
    std::vector<double> values;  // every input value, then its id is its index
    for (int64_t r = 0; r < table.rows; ++r) {
      for (size_t i = 0; i < table.inputs.size(); ++i) values.push_back(table.input(r, i));
    }
    std::vector<double> signs = values;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    readout_token_ = static_cast<int64_t>(values.size());
    rows_ids_ = ids(values);
    rows_y_ = torch::tensor(table.y[0], torch::kDouble).to(torch::kFloat);
    std::vector<int64_t> seen(static_cast<size_t>(table.rows), 1);
    if (table.has_seen()) seen.assign(table.seen.begin(), table.seen.end());
    rows_seen_ = torch::tensor(seen, torch::kLong).to(torch::kBool);
    const auto train_rows = rows_seen_.nonzero().view({-1});
    if (train_rows.numel() == 0) {
      throw InputError(
          fmt::format("{}: no row has seen = 1, so there is nothing to train on", table.source));
    }
    train_ids_ = rows_ids_.index_select(0, train_rows);
    train_y_ = rows_y_.index_select(0, train_rows);
    values_ = torch::tensor(table.values[0], torch::kDouble).to(torch::kFloat);
    if (table.cube) {
      const auto x = torch::tensor(signs, torch::kDouble)
                         .to(torch::kFloat)
                         .view({table.rows, static_cast<int64_t>(table.inputs.size())});
      characters_ = fourier_characters(x, task_.fourier_sets);
    }
  }

  Layout layout() const override { return task_.layout; }

  ModelConfig model_config(const ExperimentConfig& config) const override {
    return sized_model_config(config, readout_token_ + 1, task_.layout.size(),
                              Readout::kClsRegression);
  }

  nlohmann::json evaluate(MaskedTransformer& model) const override {
    auto metrics = RegressionExperiment::evaluate(model);
    metrics["rows"] = rows_ids_.size(0);
    metrics["train_size"] = train_ids_.size(0);
    return metrics;
  }

  std::string description() const override {
    const auto& table = task_.table;
    return fmt::format("truth table {}: {} rows, {} seen{}", table.source, table.rows,
                       train_ids_.size(0), table.has_seen() ? "" : " (no `seen` column: all)");
  }

 private:
  /// Token ids [rows, N]: the readout, then each input's value id at its token.
  torch::Tensor ids(const std::vector<double>& values) const {
    const auto& table = task_.table;
    const int64_t n = task_.layout.size();
    std::vector<int64_t> ids(static_cast<size_t>(table.rows * n), readout_token_);
    for (int64_t r = 0; r < table.rows; ++r) {
      for (size_t i = 0; i < table.inputs.size(); ++i) {
        const auto it = std::lower_bound(values.begin(), values.end(), table.input(r, i));
        ids[static_cast<size_t>(r * n + task_.input_tokens[i])] = it - values.begin();
      }
    }
    return torch::tensor(ids, torch::kLong).view({table.rows, n});
  }

  TruthTableTask task_;
  int64_t readout_token_ = 0;
};

}  // namespace

std::unique_ptr<Experiment> make_truth_table_experiment(TruthTableTask task) {
  return std::make_unique<TruthTableExperiment>(std::move(task));
}

}  // namespace maskprior::runtime
