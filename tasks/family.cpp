#include "tasks/family.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <set>

#include "tasks/families.h"

namespace maskprior::tasks {

namespace {

using nlohmann::json;

/// Throws InputError unless each distilled row of `runs` (the rows of suite `suite`) reads a row
/// listed before it that is not distilled itself.
void check_distilled_rows(const std::string& suite, const std::vector<SuiteRun>& runs) {
  std::set<std::string> earlier;
  for (const SuiteRun& run : runs) {
    if (run.distilled) {
      const bool source_ok = earlier.contains(run.distilled->row) &&
                             std::none_of(runs.begin(), runs.end(), [&](const SuiteRun& r) {
                               return r.label == run.distilled->row && r.distilled;
                             });
      if (!source_ok) {
        throw InputError(fmt::format(
            "suite {}: row {} is distilled from no earlier undistilled row", suite, run.label));
      }
    }
    earlier.insert(run.label);
  }
}

/// Checks the distilled rows of `family`: its distill rows (which the `distill` suite gathers)
/// and each of its own suites.
void check_distilled_rows(const TaskFamily& family) {
  check_distilled_rows("distill (family " + family.name + ")", family.distill);
  for (const Suite& s : family.suites) check_distilled_rows(s.name, s.runs);
}

/// The families: the built-in ones, then those registered. Built once, on first use.
std::deque<TaskFamily>& registry() {
  static std::deque<TaskFamily> all = [] {
    std::deque<TaskFamily> built = {boolean_family(),       arithmetic_family(),
                                    vision_family(),        language_family(),
                                    sequence_data_family(), truth_table_family()};
    for (const TaskFamily& family : built) check_distilled_rows(family);
    return built;
  }();
  return all;
}

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace

std::vector<SuiteRun> init_runs(const std::string& task, const std::string& spec,
                                const std::vector<std::string>& inits) {
  std::vector<SuiteRun> runs;
  for (const std::string& init : inits) runs.push_back({task + "-" + init, task, spec, init});
  return runs;
}

const std::deque<TaskFamily>& families() {
  const std::lock_guard lock(registry_mutex());
  return registry();
}

void register_family(TaskFamily family) {
  const std::lock_guard lock(registry_mutex());
  std::deque<TaskFamily>& all = registry();
  if (family.metrics.empty()) {
    throw InputError(fmt::format("task family '{}' reports no metric", family.name));
  }
  check_distilled_rows(family);
  for (const TaskFamily& other : all) {
    if (other.name == family.name) {
      throw InputError(fmt::format("a task family '{}' exists already", family.name));
    }
    for (const std::string& task : family.tasks) {
      if (std::find(other.tasks.begin(), other.tasks.end(), task) != other.tasks.end()) {
        throw InputError(fmt::format("task '{}' of family '{}' belongs to family '{}' already",
                                     task, family.name, other.name));
      }
    }
  }
  all.push_back(std::move(family));
}

const TaskFamily* find_family(const std::string& name) {
  for (const TaskFamily& family : families()) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

const TaskFamily& family_of_task(const std::string& task) {
  for (const TaskFamily& family : families()) {
    if (std::find(family.tasks.begin(), family.tasks.end(), task) != family.tasks.end()) {
      return family;
    }
  }
  throw unknown_task(task);
}

const TaskFamily& family_of_run(const json& config) {
  for (const TaskFamily& family : families()) {
    if (family.input_key.empty()) continue;
    const auto value = config.find(family.input_key);
    if (value != config.end() && value->is_string() && !value->get<std::string>().empty()) {
      return family;
    }
  }
  const auto task = config.find("task");
  return family_of_task(task != config.end() && task->is_string() ? task->get<std::string>() : "");
}

std::vector<std::string> foreign_settings(const TaskFamily& family) {
  std::set<std::string> foreign;
  const auto& own = family.own_settings;
  for (const TaskFamily& other : families()) {
    for (const std::string& key : other.own_settings) {
      if (std::find(own.begin(), own.end(), key) == own.end()) foreign.insert(key);
    }
    if (!other.input_key.empty() && other.input_key != family.input_key) {
      foreign.insert(other.input_key);
    }
  }
  if (!family.input_key.empty()) foreign.insert("task");
  return {foreign.begin(), foreign.end()};
}

std::map<std::string, std::string> filled_spec_params(
    const TaskFamily& family, const nlohmann::json& settings,
    const std::map<std::string, double>& declared,
    const std::map<std::string, std::string>& defines) {
  std::vector<std::string> names = family.spec_params;
  names.emplace_back("depth");
  std::map<std::string, std::string> filled;
  for (const std::string& name : names) {
    const auto value = settings.find(name);
    const auto param = declared.find(name);
    if (value == settings.end() || !value->is_number_integer()) continue;
    if (!defines.contains(name) && param != declared.end() &&
        param->second != static_cast<double>(value->get<int64_t>())) {
      filled[name] = std::to_string(value->get<int64_t>());
    }
  }
  return filled;
}

std::vector<std::string> task_names() {
  std::vector<std::string> names;
  for (const TaskFamily& family : families()) {
    names.insert(names.end(), family.tasks.begin(), family.tasks.end());
  }
  return names;
}

InputError unknown_task(const std::string& task) {
  return InputError(
      fmt::format("unknown task '{}' (known: {})", task, fmt::join(task_names(), ", ")));
}

std::vector<Suite> suites() {
  Suite demo{"demo", "", /*default_seeds=*/1, {}};
  std::vector<std::string> parts;  // "parity2 (vanilla, mask)"
  for (const TaskFamily& family : families()) {
    demo.runs.insert(demo.runs.end(), family.demo.begin(), family.demo.end());
    std::vector<std::string> inits;
    for (const SuiteRun& run : family.demo) inits.push_back(run.init);
    if (!family.demo.empty()) {
      parts.push_back(fmt::format("{} ({})", family.demo.front().task, fmt::join(inits, ", ")));
    }
  }
  demo.description = fmt::format("{}; one seed", fmt::join(parts, ", "));
  Suite distill{"distill",
                "priors distilled from data-rich runs (`maskc distill`) against the "
                "hand-written spec and vanilla where data is scarce: addition 2% -> 0.1/0.2/0.4%, "
                "parity2 and maj3 on every input -> the parity2 GOTU split",
                /*default_seeds=*/3,
                {}};
  for (const TaskFamily& family : families()) {
    distill.runs.insert(distill.runs.end(), family.distill.begin(), family.distill.end());
  }
  std::vector<Suite> all = {demo, distill};
  for (const TaskFamily& family : families()) {
    all.insert(all.end(), family.suites.begin(), family.suites.end());
  }
  return all;
}

Suite suite(const std::string& name) {
  std::vector<std::string> known;
  for (Suite& s : suites()) {
    if (s.name == name) return s;
    known.push_back(s.name);
  }
  throw InputError(
      fmt::format("[reproduce] unknown suite '{}' (known: {})", name, fmt::join(known, ", ")));
}

const std::vector<Metric>& persistence_metrics() {
  static const std::vector<Metric> kMetrics = {
      {"prior_mass_init", "prior mass start", "attention mass on the prior at step 0", ""},
      {"prior_mass", "prior mass end", "attention mass on the prior", ""},
      {"mask_drift", "mask drift", "mask drift", ""}};
  return kMetrics;
}

}  // namespace maskprior::tasks
