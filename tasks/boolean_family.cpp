// The Boolean GOTU family: parity2, maj3, cyclic3, threesym (tasks/boolean_task.h).
#include <fmt/format.h>

#include "tasks/boolean_task.h"
#include "tasks/families.h"

namespace maskprior::tasks {

namespace {

using nlohmann::json;

std::vector<SuiteRun> gotu_runs(const std::vector<std::string>& tasks,
                                const std::vector<std::string>& inits) {
  std::vector<SuiteRun> runs;
  for (const std::string& task : tasks) {
    for (SuiteRun& run : init_runs(task, "specs/gotu/" + task + ".mask", inits)) {
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

/// `maskc reproduce distill`: vanilla parity2 and maj3 trained on every point of the cube (the
/// sources), then parity2 on its GOTU split with vanilla, the hand-written mask, a mask distilled
/// from the parity2 source (the union over layers and heads of the keys holding 0.9 of each row's
/// attention; and per layer and head, 0.5) and one from the maj3 source (transfer: the same
/// layout), each from the source run of the same seed (docs/distill.md).
std::vector<SuiteRun> distill_runs() {
  const std::string spec = "specs/gotu/parity2.mask";
  const json all = {{"train_domain", "all"}};
  return {{"parity2-all-vanilla", "parity2", spec, "vanilla", all},
          {"maj3-all-vanilla", "maj3", "specs/gotu/maj3.mask", "vanilla", all},
          {"parity2-vanilla", "parity2", spec, "vanilla"},
          {"parity2-mask", "parity2", spec, "mask"},
          {"parity2-distilled", "parity2", spec, "mask", json::object(),
           DistilledFrom{"parity2-all-vanilla"}},
          {"parity2-distilled-head", "parity2", spec, "mask", json::object(),
           DistilledFrom{"parity2-all-vanilla", "attention", "head", 0.5}},
          {"parity2-from-maj3", "parity2", spec, "mask", json::object(),
           DistilledFrom{"maj3-all-vanilla"}}};
}

/// parity2 with misspecified, neutral, fixed and low-contrast masks.
std::vector<SuiteRun> ablation_runs() {
  const std::string spec = "specs/gotu/parity2.mask";
  std::vector<SuiteRun> runs = {
      {"parity2-vanilla", "parity2", spec, "vanilla"},
      {"parity2-mask", "parity2", spec, "mask"},
      {"parity2-misspecified", "parity2", "specs/gotu/parity2_misspecified.mask", "mask"},
      {"parity2-mask-zero", "parity2", spec, "mask-zero"},
      {"parity2-mask-fixed", "parity2", spec, "mask-fixed"},
  };
  for (int contrast : {1, 3, 5}) {
    runs.push_back({fmt::format("parity2-mask-pm{}", contrast), "parity2", spec, "mask",
                    json{{"mask_open", contrast}, {"mask_close", -contrast}}});
  }
  return runs;
}

/// Several masks for the same target (specs/designs/): does any of them move the learned function
/// away from the min-degree interpolator?
std::vector<SuiteRun> design_runs() {
  const std::vector<std::pair<std::string, std::vector<std::string>>> designs = {
      {"parity2", {"readout", "noself", "twohop", "hard", "layers"}},
      {"maj3", {"readout", "twohop", "hard"}}};
  std::vector<SuiteRun> runs;
  for (const auto& [task, names] : designs) {
    runs.push_back({task + "-vanilla", task, "", "vanilla"});
    runs.push_back({task + "-pair", task, fmt::format("specs/gotu/{}.mask", task), "mask"});
    for (const std::string& name : names) {
      runs.push_back({fmt::format("{}-{}", task, name), task,
                      fmt::format("specs/designs/{}_{}.mask", task, name), "mask"});
    }
  }
  return runs;
}

/// docs/paper.md, "Boolean GOTU": accuracy over the cube.
std::vector<PaperNumber> gotu_paper_numbers() {
  std::vector<PaperNumber> numbers;
  for (const auto& [task, baseline, mask] :
       {std::tuple{"parity2", "≈ 75", "100"}, std::tuple{"maj3", "≈ 87", "100"},
        std::tuple{"cyclic3", "≈ 87", "99.98"}}) {
    for (const char* init : {"vanilla", "qk-svd", "qk-opt"}) {
      numbers.push_back({task, init, baseline});
    }
    numbers.push_back({task, "mask", mask});
  }
  return numbers;
}

// quick: a small model that finishes in a few minutes on 2 CPU cores.
// paper: docs/paper.md, "Boolean GOTU" (Abbe et al.'s model, Adam, batch 256); each task's own
//   learning rate and epochs on top.
const char* kPresets = R"({
  "quick": {"n": 15, "dim": 64, "depth": 2, "heads": 2, "head_dim": 16, "mlp": 64,
            "lr": 1e-3, "epochs": 5, "batch_size": 256, "optimizer": "adam",
            "weight_decay": 1e-3, "schedule": "constant", "warmup": 0},
  "paper": {"n": 15, "dim": 256, "depth": 12, "heads": 6, "head_dim": 64, "mlp": 256,
            "optimizer": "adam", "weight_decay": 1e-3, "batch_size": 256,
            "schedule": "constant", "warmup": 0}
})";
const char* kTaskPresets = R"({
  "parity2": {"paper": {"lr": 1e-5, "epochs": 20}},
  "maj3": {"paper": {"lr": 1e-5, "epochs": 30}},
  "cyclic3": {"paper": {"lr": 2e-5, "epochs": 80}},
  "threesym": {"paper": {"lr": 2e-5, "epochs": 40}}
})";

}  // namespace

std::vector<Metric> boolean_metrics() {
  return {{"accuracy", "accuracy", "accuracy", "%"},
          {"unseen_accuracy", "unseen acc", "unseen accuracy", "%"},
          {"seen_accuracy", "seen acc", "seen accuracy", "%"},
          {"seen_mse", "seen MSE", "seen mse", "", Better::kLower, /*in_tables=*/false},
          {"unseen_mse", "unseen MSE", "unseen mse", "", Better::kLower}};
}

TaskFamily boolean_family() {
  TaskFamily family;
  family.name = "boolean";
  family.title = "Boolean GOTU";
  family.tasks = boolean_task_names();
  family.presets = json::parse(kPresets);
  family.task_presets = json::parse(kTaskPresets);
  family.metrics = boolean_metrics();
  family.judged_by = "unseen_accuracy";
  // The learned coefficient of the monomial the MDI leaves out, and the margin of the unseen
  // predictions from the rounding boundary (> 0: rounds right).
  family.diagnostics = {{"target_coefficient", "target coef", "target coefficient", ""},
                        {"unseen_margin", "unseen margin", "unseen margin", ""}};
  family.spec_params = {"n"};
  family.own_settings = {"n", "train_domain"};
  family.describe_data = [](const json& config) {
    std::string text = config.contains("n") ? "n = " + config["n"].dump() : std::string("—");
    if (config.value("train_domain", std::string("seen")) == "all")
      text += ", trained on every point";
    return text;
  };
  family.truth_table = [](const std::string& task, int n) {
    return boolean_truth_table(make_boolean_task(task, n));
  };
  family.paper = gotu_paper_numbers();
  family.suites = {
      {"gotu", "the four Boolean GOTU tasks with every init method", 5,
       gotu_runs(boolean_task_names(), {"vanilla", "qk-svd", "qk-opt", "mimetic", "mask"})},
      {"ablations",
       "parity2: misspecified, neutral (zero), fixed and low-contrast (±1, ±3, ±5) masks", 5,
       ablation_runs()},
      {"designs",
       "parity2 and maj3 with several masks for the same target (readout only, pair, no self, "
       "two-hop, hard, per layer): learned target coefficient and unseen margin",
       3, design_runs()}};
  family.demo = gotu_runs({"parity2"}, {"vanilla", "mask"});
  family.distill = distill_runs();
  return family;
}

}  // namespace maskprior::tasks
