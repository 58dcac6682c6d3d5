#include "tasks/descriptor.h"

#include <algorithm>
#include <cmath>

namespace maskprior::tasks {

namespace {

using nlohmann::json;

/// Config values a paper number's setting asks for: numbers within a relative 1e-9.
bool same_setting_value(const json& want, const json& have) {
  if (want.is_number() && have.is_number()) {
    const double a = want.get<double>(), b = have.get<double>();
    return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
  }
  return want == have;
}

}  // namespace

const Metric& TaskFamily::headline() const {
  internal_check(!metrics.empty(), "task family " + name + " reports no metric");
  return metrics.front();
}

const Metric* TaskFamily::find_metric(const std::string& key) const {
  for (const auto* list : {&metrics, &diagnostics}) {
    for (const Metric& metric : *list) {
      if (metric.key == key) return &metric;
    }
  }
  return nullptr;
}

std::optional<std::string> TaskFamily::paper_number(const std::string& task,
                                                    const std::string& init,
                                                    const json& config) const {
  for (const PaperNumber& number : paper) {
    if (number.task != task || number.init != init) continue;
    for (const auto& [key, want] : number.setting.items()) {
      if (!config.contains(key) || !same_setting_value(want, config[key])) return std::nullopt;
    }
    return number.value;
  }
  return std::nullopt;
}

}  // namespace maskprior::tasks
