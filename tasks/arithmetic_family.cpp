// The arithmetic family: 3-digit addition and multiplication in the low-data regime
// (tasks/arithmetic_task.h, docs/arithmetic.md).
#include <fmt/format.h>

#include <utility>

#include "tasks/arithmetic_task.h"
#include "tasks/families.h"

namespace maskprior::tasks {

namespace {

using nlohmann::json;

/// Each task at the paper's train fraction, which both presets set.
std::vector<SuiteRun> arithmetic_runs(const std::vector<std::string>& inits) {
  std::vector<SuiteRun> runs;
  for (const std::string& task : arithmetic_task_names()) {
    for (SuiteRun& run : init_runs(task, fmt::format("specs/arith/{}.mask", task), inits)) {
      runs.push_back(std::move(run));
    }
  }
  return runs;
}

/// Accuracy against the train fraction (the paper's Figure 4), vanilla vs mask, for both tasks.
std::vector<SuiteRun> sweep_runs() {
  const std::vector<std::pair<std::string, std::vector<double>>> sweeps = {
      {"addition", {0.002, 0.004, 0.01, 0.02}}, {"multiplication", {0.01, 0.03, 0.05, 0.10}}};
  std::vector<SuiteRun> runs;
  for (const auto& [task, fractions] : sweeps) {
    for (double fraction : fractions) {
      for (const std::string init : {"vanilla", "mask"}) {
        runs.push_back({fmt::format("{}-{:g}pct-{}", task, 100 * fraction, init), task,
                        fmt::format("specs/arith/{}.mask", task), init,
                        json{{"train_fraction", fraction}}});
      }
    }
  }
  return runs;
}

/// `maskc reproduce distill`: vanilla addition at a data-rich 2% (the source), then at 0.1, 0.2 and
/// 0.4% with vanilla, the hand-written mask, and two masks distilled from the source run of the
/// same seed (docs/distill.md): `distilled`, the union over layers and heads of the keys holding
/// 0.9 of each row's attention (the command's defaults but --per model), and `distilled-head`, one
/// pattern per layer and head holding 0.5.
std::vector<SuiteRun> distill_runs() {
  const std::string spec = "specs/arith/addition.mask";
  const std::string source = "addition-2pct-vanilla";
  std::vector<SuiteRun> runs = {
      {source, "addition", spec, "vanilla", json{{"train_fraction", 0.02}}}};
  for (double fraction : {0.001, 0.002, 0.004}) {
    const json overrides = {{"train_fraction", fraction}};
    const std::string row = fmt::format("addition-{:g}pct-", 100 * fraction);
    runs.push_back({row + "vanilla", "addition", spec, "vanilla", overrides});
    runs.push_back({row + "mask", "addition", spec, "mask", overrides});
    runs.push_back({row + "distilled", "addition", spec, "mask", overrides, DistilledFrom{source}});
    runs.push_back({row + "distilled-head", "addition", spec, "mask", overrides,
                    DistilledFrom{source, "attention", "head", 0.5}});
  }
  return runs;
}

/// docs/paper.md, "Arithmetic (low data)": sequence accuracy at the paper's train fraction only.
std::vector<PaperNumber> arithmetic_paper_numbers() {
  std::vector<PaperNumber> numbers;
  for (const auto& [task, vanilla, mask, qk] :
       {std::tuple{"addition", "1.19", "77.49", "≤ 3.39"},
        std::tuple{"multiplication", "5.01", "69.49", "≤ 27.82"}}) {
    const json setting = {{"train_fraction", paper_train_fraction(task)}};
    numbers.push_back({task, "vanilla", vanilla, setting});
    numbers.push_back({task, "mask", mask, setting});
    numbers.push_back({task, "qk-svd", qk, setting});
    numbers.push_back({task, "qk-opt", qk, setting});
  }
  return numbers;
}

// quick: a small decoder that finishes in well under 5 minutes on 2 CPU cores
//   (docs/arithmetic.md): about 1,600 (addition) or 1,900 (multiplication) steps of batch 64.
// paper: docs/paper.md, "Arithmetic (low data)". Both presets also set each task's paper train
//   fraction (addition 0.4% of the problems, multiplication 3%): arithmetic_task_presets.
const char* kPresets = R"({
  "quick": {"test_size": 10000, "dim": 64, "depth": 2, "heads": 4, "head_dim": 16,
            "mlp": 256, "optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-3,
            "batch_size": 64, "schedule": "cosine", "warmup": 0, "eval_every": 500},
  "paper": {"test_size": 10000, "dim": 256, "depth": 6, "heads": 4, "head_dim": 64,
            "mlp": 256, "optimizer": "adamw", "lr": 1e-3, "weight_decay": 1e-3,
            "epochs": 50, "batch_size": 256, "schedule": "cosine", "warmup": 0}
})";

json arithmetic_task_presets() {
  json rows = {{"addition", {{"quick", {{"epochs", 25}}}}},
               {"multiplication", {{"quick", {{"epochs", 4}}}}}};
  for (const std::string& task : arithmetic_task_names()) {
    for (const char* preset : {"quick", "paper"}) {
      rows[task][preset]["train_fraction"] = paper_train_fraction(task);
    }
  }
  return rows;
}

}  // namespace

std::vector<Metric> decoder_metrics(const std::string& unit_name) {
  return {{"sequence_accuracy", "sequence acc", "sequence accuracy", "%"},
          {unit_name + "_accuracy", unit_name + " acc", unit_name + " accuracy", "%"},
          {"test_loss", "test loss", "test loss", "", Better::kLower, /*in_tables=*/false}};
}

TaskFamily arithmetic_family() {
  TaskFamily family;
  family.name = "arithmetic";
  family.title = "arithmetic";
  family.tasks = arithmetic_task_names();
  family.presets = json::parse(kPresets);
  family.task_presets = arithmetic_task_presets();
  family.metrics = decoder_metrics("digit");
  family.own_settings = {"loss_rows", "operand_order", "answer_order", "train_fraction",
                         "test_size", "digits",        "test_digits",  "train_size"};
  family.digit_orders = [](const json& config) {
    ArithmeticTask task = make_arithmetic_task(config.at("task").get<std::string>());
    task.operand_order =
        digit_order_setting(config.at("operand_order").get<std::string>(), "operand_order");
    task.answer_order =
        digit_order_setting(config.at("answer_order").get<std::string>(), "answer_order");
    return task.digit_orders();
  };
  family.describe_data = [](const json& config) {
    const std::string digits = config.value("digits", std::string("3"));
    const std::string tested = config.value("test_digits", std::string());
    std::string text =
        config.contains("train_fraction") && config["train_fraction"].is_number()
            ? fmt::format("{:.3g}% of problems", 100 * config["train_fraction"].get<double>())
            : std::string("—");
    if (digits != "3" || !tested.empty()) {  // other sizes: problems per size
      const int64_t per_size = config.value("train_size", int64_t{0});
      text = fmt::format("{} problems per size, digits {}{}",
                         per_size > 0 ? per_size : kDefaultProblemsPerSize, digits,
                         tested.empty() ? "" : ", tested at " + tested);
    }
    // The settings of the data and loss that differ from the defaults (older run folders have
    // none of them): "0.4% of problems, answer_order msb".
    for (const auto& [key, normal] :
         {std::pair{"operand_order", "msb"}, std::pair{"answer_order", "lsb"},
          std::pair{"loss_rows", "answer"}}) {
      const auto it = config.find(key);
      const std::string value =
          it != config.end() && it->is_string() ? it->get<std::string>() : normal;
      if (value != normal) text += fmt::format(", {} {}", key, value);
    }
    return text;
  };
  family.paper = arithmetic_paper_numbers();
  family.suites = {
      {"arith", "addition at 0.4% and multiplication at 3% with vanilla, QK and mask inits", 5,
       arithmetic_runs({"vanilla", "qk-svd", "qk-opt", "mask"})},
      {"arith-sweep",
       "accuracy vs train fraction (Figure 4): addition at 0.2/0.4/1/2%, multiplication at "
       "1/3/5/10%, vanilla vs mask",
       3, sweep_runs()}};
  for (const SuiteRun& run : arithmetic_runs({"vanilla", "mask"})) {
    if (run.task == "addition") family.demo.push_back(run);
  }
  family.distill = distill_runs();
  return family;
}

}  // namespace maskprior::tasks
