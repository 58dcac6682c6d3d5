#include "runtime/regression_experiment.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <limits>

#include "tasks/random.h"

namespace maskprior::runtime {

namespace {

inline constexpr uint64_t kProbeSeed = 0x5eed'0f'9b0beULL;  // fixed: every run probes alike

}  // namespace

int64_t RegressionExperiment::train_size() const {
  return train_ids_.size(0);
}

Batch RegressionExperiment::train_batch(const torch::Tensor& rows) const {
  auto index = rows.to(train_ids_.device());
  return {train_ids_.index_select(0, index), train_y_.index_select(0, index)};
}

torch::Tensor RegressionExperiment::loss(const torch::Tensor& output, const Batch& batch) const {
  return torch::mse_loss(output, batch.targets);
}

nlohmann::json RegressionExperiment::evaluate(MaskedTransformer& model) const {
  auto pred = map_in_chunks(rows_ids_, kEvalRows, [&](const torch::Tensor& ids) {
                return model->forward(ids);
              }).to(torch::kCPU);
  return boolean_metrics(pred, rows_y_.to(torch::kCPU), rows_seen_.to(torch::kCPU),
                         values_.to(torch::kCPU), characters_);
}

torch::Tensor RegressionExperiment::probe_inputs(int64_t size) const {
  const auto order = tasks::shuffled_rows(rows_ids_.size(0), size, kProbeSeed);
  return rows_ids_.index_select(0, torch::tensor(order, torch::kLong).to(rows_ids_.device()))
      .to(torch::kCPU);
}

TestRows RegressionExperiment::test_rows() const {
  return {{{"inputs", rows_ids_.to(torch::kCPU)},
           {"targets", rows_y_.to(torch::kCPU)},
           {"seen", rows_seen_.to(torch::kCPU)}},
          {{"loss", "mse"}}};
}

void RegressionExperiment::to(torch::Device device) {
  for (auto* t : {&train_ids_, &train_y_, &rows_ids_, &rows_y_, &rows_seen_, &values_}) {
    *t = t->to(device);
  }
}

std::vector<std::vector<int>> variable_subsets(const std::vector<int>& variables) {
  std::vector<std::vector<int>> all;
  const size_t count = size_t{1} << variables.size();
  for (size_t bits = 0; bits < count; ++bits) {
    std::vector<int> subset;
    for (size_t i = 0; i < variables.size(); ++i) {
      if (bits >> i & 1) subset.push_back(variables[i]);
    }
    all.push_back(subset);
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return a.size() < b.size(); });
  return all;
}

std::vector<FourierCharacter> fourier_characters(const torch::Tensor& signs,
                                                 const std::vector<std::vector<int>>& sets) {
  std::vector<FourierCharacter> characters;
  for (const auto& set : sets) {
    auto character = torch::ones({signs.size(0)}, torch::kFloat);
    for (int i : set) character = character * signs.select(1, i);
    characters.emplace_back(fmt::format("{{{}}}", fmt::join(set, ",")), character);
  }
  return characters;
}

nlohmann::json boolean_metrics(const torch::Tensor& pred, const torch::Tensor& y,
                               const torch::Tensor& seen, const torch::Tensor& values,
                               const std::vector<FourierCharacter>& characters) {
  auto nearest = values.index_select(0, (pred.unsqueeze(1) - values).abs().argmin(1));
  auto correct = ((nearest - y).abs() < 1e-5).to(torch::kDouble);
  auto squared = (pred - y).pow(2);
  auto unseen = seen.logical_not();
  // null when no row is such (a table whose rows are all seen has no unseen accuracy, not 0)
  auto mean_where = [](const torch::Tensor& v, const torch::Tensor& where) -> nlohmann::json {
    if (!where.any().item<bool>()) return nullptr;
    return v.index({where}).to(torch::kDouble).mean().item<double>();
  };
  nlohmann::json fourier = nlohmann::json::object();
  for (const auto& [name, character] : characters) {
    fourier[name] = (pred * character.to(pred.device())).to(torch::kDouble).mean().item<double>();
  }
  // The largest character (all of f's variables for the GOTU tasks): the min-degree
  // interpolator leaves it out (parity2's x0·x1, maj3's x0·x1·x2), so its learned coefficient
  // shows whether training left the MDI.
  const std::string top = characters.empty() ? "" : characters.back().first;
  return {{"accuracy", correct.mean().item<double>()},
          {"seen_accuracy", mean_where(correct, seen)},
          {"unseen_accuracy", mean_where(correct, unseen)},
          {"seen_mse", mean_where(squared, seen)},
          {"unseen_mse", mean_where(squared, unseen)},
          {"unseen_margin", mean_where(rounding_margin(pred, y, values), unseen)},
          {"target_monomial", top},
          {"target_coefficient", top.empty() ? nlohmann::json() : fourier[top]},
          {"fourier", fourier}};
}

torch::Tensor rounding_margin(const torch::Tensor& pred, const torch::Tensor& y,
                              const torch::Tensor& values) {
  const double inf = std::numeric_limits<double>::infinity();
  auto sorted = std::get<0>(values.to(torch::kDouble).sort());
  auto target = y.to(torch::kDouble);
  auto index = (target.unsqueeze(1) - sorted).abs().argmin(1);
  auto padded = torch::cat(
      {torch::full({1}, -inf, torch::kDouble), sorted, torch::full({1}, inf, torch::kDouble)});
  auto lower = (padded.index_select(0, index) + target) / 2;
  auto upper = (padded.index_select(0, index + 2) + target) / 2;
  auto p = pred.to(torch::kDouble);
  return torch::min(p - lower, upper - p);
}

}  // namespace maskprior::runtime
