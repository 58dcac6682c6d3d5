#include "train/milestones.h"

namespace maskprior::training {

using nlohmann::json;

std::string main_accuracy_key(const std::vector<json>& records) {
  for (const char* key : {"sequence_accuracy", "top1", "accuracy"}) {
    for (const json& r : records) {
      if (r.is_object() && r.contains(key) && r[key].is_number()) return key;
    }
  }
  return "";
}

json milestones(const std::vector<json>& records) {
  const std::string key = main_accuracy_key(records);
  if (key.empty()) return json::object();
  json result = {{"milestone_metric", key}, {"steps_to_50", nullptr}, {"steps_to_95", nullptr}};
  for (const auto& [name, level] : {std::pair{"steps_to_50", 0.5}, {"steps_to_95", 0.95}}) {
    for (const json& r : records) {
      if (r.is_object() && r.contains(key) && r[key].is_number() && r[key].get<double>() >= level) {
        result[name] = r.value("step", int64_t{0});
        break;
      }
    }
  }
  return result;
}

}  // namespace maskprior::training
