#include "train/milestones.h"

#include <algorithm>

namespace maskprior::training {

using nlohmann::json;

namespace {

bool has_number(const json& record, const std::string& key) {
  return record.is_object() && record.contains(key) && record[key].is_number();
}

}  // namespace

json milestones(const std::vector<json>& records, const tasks::Metric& headline) {
  const std::string& key = headline.key;
  if (!headline.is_share() || headline.better != tasks::Better::kHigher ||
      std::none_of(records.begin(), records.end(),
                   [&](const json& r) { return has_number(r, key); })) {
    return json::object();
  }
  json result = {{"headline_metric", key}, {"steps_to_50", nullptr}, {"steps_to_95", nullptr}};
  for (const auto& [name, level] : {std::pair{"steps_to_50", 0.5}, {"steps_to_95", 0.95}}) {
    for (const json& r : records) {
      if (has_number(r, key) && r[key].get<double>() >= level) {
        result[name] = r.value("step", int64_t{0});
        break;
      }
    }
  }
  return result;
}

}  // namespace maskprior::training
