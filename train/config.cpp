#include "train/config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/error.h"
#include "core/machine.h"
#include "runfolder/run_files.h"
#include "runtime/init_method.h"
#include "tasks/family.h"
#include "train/presets.h"

namespace maskprior::training {

namespace {

using nlohmann::json;
using C = TrainConfig;
using R = FieldRule;

// The rows, in the order of `maskc train --help`: what is learned (task, prior, data) ...
std::vector<ConfigField> learning_fields() {
  const auto tasks = fmt::format("{}", fmt::join(tasks::task_names(), ", "));
  // clang-format off
  return {
    // Task and prior.
    {"task", "--task", "task: " + tasks + " (or --data, or --truth-table)", &C::task},
    {"data", "--data",
     "your own sequences instead of a task: a file with one example per line, one symbol per "
     "token of --spec, whitespace between them (docs/your-data.md)", &C::data},
    {"test_data", "--test-data",
     "--data: the test examples, in the same form (default: a seeded 10% of --data held out)",
     &C::test_data},
    {"predict", "--predict",
     "--data: the span of the spec whose symbols the model predicts (from the tokens before it)",
     &C::predict},
    {"truth_table", "--truth-table",
     "your own Boolean function instead of a task: a CSV truth table as maskc validate reads it "
     "(columns named after --spec's tokens, y, and seen = 1 for training rows)", &C::truth_table},
    {"spec", "--spec",
     "prior: a .mask file (compiled now) or a .safetensors mask file; optional for vanilla, "
     "mask-zero and mimetic (then it only defines the pattern the metrics measure)", &C::spec},
    {"defines", "-D,--define",
     "override a `param` of the .mask spec, e.g. -D n=20 (repeatable); a Boolean task's n is "
     "passed as -D n=... unless given", &C::defines},
    {"init", "--init", "initialisation (default vanilla)", &C::init, R::kOneOf,
     runtime::init_method_names()},
    {"preset", "--preset",
     "quick (small, minutes on a CPU) or paper (docs/paper.md settings); any other flag overrides it",
     &C::preset, R::kOneOfOrEmpty, preset_names()},
    {"mask_open", "--mask-open",
     "override the .mask spec's open value (like maskc compile --open; default: the spec's), "
     "for contrast ablations; explicit values in the spec are untouched", &C::mask_open},
    {"mask_close", "--mask-close",
     "override the .mask spec's close value (like maskc compile --close; default: the spec's)",
     &C::mask_close},
    // Seed, run folder and data.
    {"seed", "--seed", "seed: model init and data order (default 0)", &C::seed},
    {"out", "--out", "run folder for config, metrics, weights, checkpoints (none if not given)",
     &C::out},
    {"n", "--n",
     "Boolean tasks: number of input bits (default 15); fortunes-char: context length (its "
     "presets: 64)", &C::n, R::kPositive},
    {"train_domain", "--train-domain",
     "Boolean tasks: seen = train on the GOTU split's seen domain (the unseen points are held "
     "out); all = on every point of the cube, nothing unseen (a data-rich model to distil a prior "
     "from). Unseen metrics still read the split's unseen points", &C::train_domain, R::kOneOf,
     {"seen", "all"}},
    {"train_fraction", "--train-fraction", "arithmetic tasks: share of problems trained on",
     &C::train_fraction, R::kFraction},
    {"test_size", "--test-size",
     "arithmetic tasks: problems evaluated; fashion-mnist: test images (at most 10000); "
     "fortunes-char: test and validation windows (at most all)", &C::test_size, R::kPositive},
    {"loss_rows", "--loss-rows",
     "causal decoders (arithmetic, --data): answer = cross-entropy on the rows that predict the "
     "answer span only; all = on every next-token row (rows 0..N-2 predict tokens 1..N-1). "
     "Metrics and test_loss read the answer rows either way (docs/arithmetic.md)",
     &C::loss_rows, R::kOneOf, {"answer", "all"}},
    {"operand_order", "--operand-order",
     "arithmetic tasks: digit order of the operands a, b in the sequence (msb = most significant "
     "first); a .mask spec is compiled with it as `digits a, b` (docs/arithmetic.md)",
     &C::operand_order, R::kOneOf, {"msb", "lsb"}},
    {"answer_order", "--answer-order",
     "arithmetic tasks: digit order of the answer c (lsb = least significant first); a .mask spec "
     "is compiled with it as `digits c`", &C::answer_order, R::kOneOf, {"lsb", "msb"}},
    {"digits", "--digits",
     "arithmetic tasks: operand length in digits, one (default 3, the paper's) or a range trained "
     "together, e.g. 1..10 (a run over several sizes: docs/settings.md, \"Sizes\")", &C::digits},
    {"test_digits", "--test-digits",
     "arithmetic tasks: operand lengths tested, e.g. 11,20,50 or 11..13 (default: the trained "
     "ones); longer than any trained size tests length generalisation", &C::test_digits},
    {"train_size", "--train-size",
     "fashion-mnist, fortunes-char: training images or windows, a seeded subset (0 = all); "
     "arithmetic beyond 3 digits or over several sizes: problems per size (0 = 1000)",
     &C::train_size, R::kNonNegative},
    {"data_dir", "--data-dir",
     "fashion-mnist, fortunes-char: folder of the data files (default: where the Debian "
     "packages dataset-fashion-mnist and fortunes put them)", &C::data_dir},
  };
  // clang-format on
}

// ... the model's sizes and the architecture's choices ...
std::vector<ConfigField> model_fields() {
  // clang-format off
  return {
    {"dim", "--dim", "model width", &C::dim, R::kPositive},
    {"depth", "--depth", "layers", &C::depth, R::kPositive},
    {"heads", "--heads", "attention heads", &C::heads, R::kPositive},
    {"head_dim", "--head-dim", "width of one head", &C::head_dim, R::kPositive},
    {"mlp", "--mlp", "MLP hidden width", &C::mlp, R::kPositive},
    // Architecture choices the paper leaves unstated (docs/settings.md).
    {"pos_embedding", "--pos-embedding",
     "positions: learned (a parameter), sinusoidal (fixed sines and cosines), none, rope "
     "(queries and keys rotated by position) or alibi (a fixed distance bias per head)",
     &C::pos_embedding, R::kOneOf, {"learned", "sinusoidal", "none", "rope", "alibi"}},
    {"pos_init_std", "--pos-init-std",
     "learned position embedding: its initial values are drawn from N(0, std^2) (default 1)",
     &C::pos_init_std, R::kNonNegative},
    {"norm", "--norm",
     "LayerNorm placement: pre (x + f(LN(x))) or post (LN(x + f(x)), as PyTorch's "
     "nn.TransformerEncoderLayer by default)", &C::norm, R::kOneOf, {"pre", "post"}},
    {"attn_dropout", "--attn-dropout", "dropout on the attention probabilities while training",
     &C::attn_dropout, R::kProbability},
    {"resid_dropout", "--resid-dropout",
     "dropout on the attention's and the MLP's outputs before each residual sum, while training",
     &C::resid_dropout, R::kProbability},
    {"activation", "--activation", "the MLP's activation", &C::activation, R::kOneOf,
     {"gelu", "relu"}},
    {"qk_norm", "--qk-norm",
     "none, or layer: a LayerNorm over each head's queries and keys before their product (gain "
     "and bias per layer, shared by its heads)", &C::qk_norm, R::kOneOf, {"none", "layer"}},
    {"mlp_dropout", "--mlp-dropout",
     "dropout on the MLP's hidden activations (after the activation) while training, as PyTorch's "
     "nn.TransformerEncoderLayer does with its dropout", &C::mlp_dropout, R::kProbability},
    {"qkv_bias", "--qkv-bias", "biases on the query, key and value projections (yes, as "
     "nn.MultiheadAttention; no: none)", &C::qkv_bias, R::kOneOf, {"no", "yes"}},
    {"attn_init", "--attn-init",
     "how Wq, Wk, Wv start: default (LibTorch's Linear init) or torch (nn.MultiheadAttention's: "
     "xavier-uniform on the packed in-projection, zero in-projection and output biases)",
     &C::attn_init, R::kOneOf, {"default", "torch"}},
    {"final_norm", "--final-norm", "a LayerNorm on the last layer's output before the readout "
     "(no: none, as a plain stack of nn.TransformerEncoderLayer)", &C::final_norm, R::kOneOf,
     {"yes", "no"}},
  };
  // clang-format on
}

// ... and how: optimisation, initialisation details, execution (only execution may change on
// --resume: it changes how a run is computed, not what it computes).
std::vector<ConfigField> training_fields() {
  // clang-format off
  return {
    // Optimisation.
    {"optimizer", "--optimizer", "optimizer", &C::optimizer, R::kOneOf, {"adam", "adamw"}},
    {"lr", "--lr", "learning rate", &C::lr, R::kPositive},
    {"weight_decay", "--weight-decay", "weight decay", &C::weight_decay, R::kNonNegative},
    {"mask_weight_decay", "--mask-weight-decay",
     "weight decay of a learnable M (default: the same as --weight-decay, one Adam over all "
     "parameters, as in the paper; Adam's coupled decay shrinks M by about lr per step)",
     &C::mask_weight_decay, R::kNonNegative},
    {"epochs", "--epochs", "passes over the training set", &C::epochs, R::kNonNegative},
    {"steps", "--steps",
     "train for this many steps in all, however many epochs that takes (0 = --epochs decides)",
     &C::steps, R::kNonNegative},
    {"batch_size", "--batch-size", "batch size", &C::batch_size, R::kPositive},
    {"schedule", "--schedule", "learning-rate schedule after the warm-up", &C::schedule,
     R::kOneOf, {"constant", "cosine"}},
    {"warmup", "--warmup", "linear warm-up steps", &C::warmup, R::kNonNegative},
    // Initialisation details (runtime/init.h InitOptions).
    {"qk_contrast", "--qk-contrast",
     "qk-svd/qk-opt: target logit gap between open and closed cells (default 10)",
     &C::qk_contrast},
    {"qk_opt_steps", "--qk-opt-steps", "qk-opt: Adam steps", &C::qk_opt_steps, R::kNonNegative},
    {"qk_opt_lr", "--qk-opt-lr", "qk-opt: Adam learning rate", &C::qk_opt_lr, R::kPositive},
    {"qk_opt_sequences", "--qk-opt-sequences",
     "qk-opt: how many probe inputs (the first of --probe-size) the fit targets",
     &C::qk_opt_sequences, R::kPositive},
    {"length_param", "--length-param",
     "runs over several sizes: the spec's `param` that sets the size (compiled once per size, "
     "as maskc compile -D NAME=VALUE)", &C::length_param},
    {"mask_param", "--mask-param",
     "learnable prior (--init mask): cells = one logit per cell (one size only); rules = one "
     "logit per rule of the spec, per layer and head, added to what the rule writes: the same "
     "prior at every size (docs/settings.md, \"Sizes\")", &C::mask_param, R::kOneOf,
     {"cells", "rules"}},
    {"mask_sharing", "--mask-sharing",
     "mask methods: spec = M as the spec gives it (one for every layer and head unless the spec "
     "has per-layer or per-head masks), layer = one M per layer, head = one per layer and head; "
     "each starts from the spec's", &C::mask_sharing, R::kOneOf, {"spec", "layer", "head"}},
    // Execution.
    {"threads", "--threads", fmt::format("CPU threads (0 = every core; at most {})", kMaxThreads), &C::threads,
     R::kThreadCount, {}},
    {"device", "--device", "where to train (auto = cuda when available)", &C::device, R::kOneOf,
     {"auto", "cpu", "cuda"}},
    {"precision", "--precision",
     "bf16 = matrix products in bfloat16 under autocast, in training and evaluation passes "
     "(parameters, optimizer state and checkpoints stay float32); fp32 = float32 throughout",
     &C::precision, R::kOneOf, {"fp32", "bf16"}},
    {"eval_every", "--eval-every", "steps between evaluations (0 = every epoch)", &C::eval_every,
     R::kNonNegative},
    {"checkpoint_every", "--checkpoint-every", "steps between checkpoints (0 = every epoch)",
     &C::checkpoint_every, R::kNonNegative},
    {"probe_size", "--probe-size", "sequences in the fixed batch that attention metrics use",
     &C::probe_size, R::kPositive},
    {"progress", "-q,--quiet", "no progress output", &C::progress, R::kAny},
    {"stop_after", "--stop-after",
     "stop with a checkpoint after this step, as if interrupted (0 = never)", &C::stop_after,
     R::kNonNegative, {}},
    {"log_every", "--log-every",
     "steps between lines of the run folder's step log (steps.jsonl and steps.csv: the step's "
     "loss, learning rate, gradient norm and seconds; 0 = none)", &C::log_every,
     R::kNonNegative, {}},
  };
  // clang-format on
}

std::vector<ConfigField> make_fields() {
  auto fields = learning_fields();
  for (auto& field : model_fields()) fields.push_back(std::move(field));
  for (auto& field : training_fields()) fields.push_back(std::move(field));
  // The execution settings, which --resume may change, are the run folder's list of them.
  for (auto& field : fields) {
    field.resumable = std::find(runfolder::kExecutionKeys.begin(), runfolder::kExecutionKeys.end(),
                                field.key) != runfolder::kExecutionKeys.end();
  }
  return fields;
}

void merge_into(json& base, const json& patch, const std::string& what) {
  if (patch.is_null()) return;
  if (!patch.is_object()) throw InputError(what + " must be a JSON object");
  for (const auto& [key, value] : patch.items()) base[key] = value;
}

template <class T>
void check_range(const ConfigField& field, const T& value) {
  if constexpr (std::is_floating_point_v<T>) {
    // NaN passes every comparison below as "not out of range", and an infinite learning rate or
    // decay poisons the whole run: no floating setting may be either.
    if (!std::isfinite(value)) {
      throw InputError(fmt::format("{} must be a finite number, got {}", field.key, value));
    }
  }
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    if (field.rule == FieldRule::kPositive && !(value > 0)) {
      throw InputError(fmt::format("{} must be positive, got {}", field.key, value));
    }
    if constexpr (std::is_signed_v<T>) {
      if (field.rule == FieldRule::kNonNegative && value < 0) {
        throw InputError(fmt::format("{} must not be negative, got {}", field.key, value));
      }
    }
    if (field.rule == FieldRule::kFraction && !(value > 0 && value <= 1)) {
      throw InputError(fmt::format("{} must be in (0, 1], got {}", field.key, value));
    }
    if (field.rule == FieldRule::kProbability && !(value >= 0 && value < 1)) {
      throw InputError(fmt::format("{} must be in [0, 1), got {}", field.key, value));
    }
    if (field.rule == FieldRule::kThreadCount && !(value >= 0 && value <= kMaxThreads)) {
      throw InputError(fmt::format("{} must be from 0 (every core) to {}, got {}", field.key,
                                   kMaxThreads, value));
    }
  }
}

void check_choice(const ConfigField& field, const std::string& value) {
  if (field.rule == FieldRule::kNonEmpty && value.empty()) {
    throw InputError(fmt::format("no {} given ({} NAME)", field.key, field.flags));
  }
  if (field.rule != FieldRule::kOneOf && field.rule != FieldRule::kOneOfOrEmpty) return;
  if (field.rule == FieldRule::kOneOfOrEmpty && value.empty()) return;
  for (const auto& a : field.allowed) {
    if (a == value) return;
  }
  throw InputError(fmt::format("{} must be one of {}, got '{}'", field.key,
                               fmt::join(field.allowed, ", "), value));
}

}  // namespace

void check_field(const ConfigField& field, const TrainConfig& config) {
  std::visit(
      [&](auto member) {
        const auto& value = config.*member;
        using T = std::decay_t<decltype(value)>;
        if constexpr (std::is_same_v<T, std::string>) {
          check_choice(field, value);
        } else if constexpr (std::is_same_v<T, std::optional<double>>) {
          if (value) check_range(field, *value);
        } else {
          check_range(field, value);
        }
      },
      field.member);
}

namespace {

/// A config as the current format spells it. Configs written before kConfigFormatKey existed
/// (old run folders) spelled "unset" with sentinels: 0 for mask_open and mask_close (the spec's
/// own values) and any negative mask_weight_decay (the same as weight_decay); those read as unset,
/// so such a run resumes with the meaning it started with.
json current_format(const json& j) {
  if (j.contains(kConfigFormatKey)) {
    if (j[kConfigFormatKey] != kConfigFormat) {
      throw InputError(fmt::format(
          "training config: {} is {}; this maskc reads {} (and configs written before it, without "
          "the key)",
          kConfigFormatKey, j[kConfigFormatKey].dump(), kConfigFormat));
    }
    return j;
  }
  json current = j;
  auto unset_if = [&](const char* key, auto sentinel) {
    if (current.contains(key) && current[key].is_number() && sentinel(current[key].get<double>())) {
      current[key] = nullptr;
    }
  };
  unset_if("mask_open", [](double v) { return v == 0; });
  unset_if("mask_close", [](double v) { return v == 0; });
  unset_if("mask_weight_decay", [](double v) { return v < 0; });
  return current;
}

/// Reads `value` into a field: null is an unset optional field. An integer field takes only a
/// whole number in its type's range (32.5 and 1e30 are refused, never converted out of range).
template <class T>
void read_value(const json& value, T& field, const std::string& key) {
  if constexpr (std::is_same_v<T, std::optional<double>>) {
    field = value.is_null() ? std::nullopt : std::optional<double>(value.get<double>());
  } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    const auto refuse = [&] {
      throw InputError(fmt::format(
          "training config: key '{}' must be a whole number from {} to "
          "{}, not {}",
          key, std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), value.dump()));
    };
    if (value.is_number_unsigned()) {
      const auto v = value.get<uint64_t>();
      if (v > static_cast<uint64_t>(std::numeric_limits<T>::max())) refuse();
      field = static_cast<T>(v);
    } else if (value.is_number_integer()) {
      const auto v = value.get<int64_t>();
      if (!std::in_range<T>(v)) refuse();
      field = static_cast<T>(v);
    } else if (value.is_number_float()) {
      // A whole float (32.0, as other tools may write it) in [min, max]: max + 1 is a power of
      // two, exact as a double, where max itself may round up past the range.
      const double v = value.get<double>();
      const double past_max = 2.0 * static_cast<double>(std::numeric_limits<T>::max() / 2 + 1);
      if (!(v == std::trunc(v) && v >= static_cast<double>(std::numeric_limits<T>::min()) &&
            v < past_max)) {
        refuse();
      }
      field = static_cast<T>(v);
    } else {
      value.get_to(field);  // not a number: the type error below
    }
  } else {
    value.get_to(field);
  }
}

}  // namespace

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> kFields = make_fields();
  return kFields;
}

const ConfigField& config_field(const std::string& key) {
  for (const auto& field : config_fields()) {
    if (field.key == key) return field;
  }
  throw InputError(fmt::format("training config: unknown key '{}'", key));
}

std::vector<std::string> resumable_keys() {
  std::vector<std::string> keys;
  for (const auto& field : config_fields()) {
    if (field.resumable) keys.push_back(field.key);
  }
  return keys;
}

json to_json(const TrainConfig& config) {
  json j = json::object();
  for (const auto& field : config_fields()) {
    std::visit(
        [&](auto member) {
          const auto& value = config.*member;
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::optional<double>>) {
            j[field.key] = value ? json(*value) : json(nullptr);
          } else {
            j[field.key] = value;
          }
        },
        field.member);
  }
  j[kConfigFormatKey] = kConfigFormat;
  return j;
}

const tasks::TaskFamily& family_of(const TrainConfig& config) {
  return tasks::family_of_run(to_json(config));
}

json run_config_json(const TrainConfig& config, const json& resolved) {
  json j = to_json(config);
  for (const std::string& key : tasks::foreign_settings(tasks::family_of_run(j))) j.erase(key);
  j[kResolvedKey] = resolved;
  return j;
}

TrainConfig config_from_json(const json& j) {
  if (!j.is_object()) throw InputError("a training config must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != kConfigFormatKey && key != kResolvedKey) config_field(key);  // unknown keys
  }
  const json current = current_format(j);
  TrainConfig config;
  for (const auto& field : config_fields()) {
    if (!current.contains(field.key)) continue;
    const json& value = current.at(field.key);
    try {
      std::visit([&](auto member) { read_value(value, config.*member, field.key); }, field.member);
    } catch (const json::exception&) {
      throw InputError(fmt::format("training config: key '{}' has the wrong type ({})", field.key,
                                   value.dump()));
    }
  }
  return config;
}

namespace {

/// Exactly one of task, data and truth_table; what goes with data and what they need.
void check_what_is_learned(const TrainConfig& c) {
  const int given = int{!c.task.empty()} + int{!c.data.empty()} + int{!c.truth_table.empty()};
  if (given != 1) {
    throw InputError(given == 0 ? "no task given (--task NAME, --data FILE or --truth-table FILE)"
                                : "give one of task, data and truth_table (--task, --data, "
                                  "--truth-table), not several");
  }
  if (!c.data.empty() && c.predict.empty()) {
    throw InputError(
        "--data needs --predict SPAN: the span of the spec whose symbols are predicted");
  }
  if (c.data.empty() && (!c.predict.empty() || !c.test_data.empty())) {
    throw InputError("test_data and predict (--test-data, --predict) go with --data");
  }
  if (c.spec.empty() && (!c.data.empty() || !c.truth_table.empty())) {
    throw InputError(
        fmt::format("{} needs a spec (--spec FILE.mask): its tokens are the layout of "
                    "the data",
                    c.data.empty() ? "--truth-table" : "--data"));
  }
}

/// A setting that only some families read (TaskFamily::own_settings) keeps its default in a run
/// of any other family.
void check_family_settings(const TrainConfig& c) {
  const json settings = to_json(c);
  const json defaults = to_json(TrainConfig{});
  const tasks::TaskFamily* family = nullptr;  // looked up once a setting needs it
  for (const auto& other : tasks::families()) {
    for (const std::string& key : other.own_settings) {
      if (settings.at(key) == defaults.at(key)) continue;
      if (family == nullptr) family = &tasks::family_of_run(settings);
      const auto& own = family->own_settings;
      if (std::find(own.begin(), own.end(), key) != own.end()) continue;
      std::vector<std::string> readers;
      for (const auto& f : tasks::families()) {
        const auto& keys = f.own_settings;
        if (std::find(keys.begin(), keys.end(), key) != keys.end()) readers.push_back(f.name);
      }
      const std::string run = !c.data.empty()          ? "data " + c.data
                              : !c.truth_table.empty() ? "truth table " + c.truth_table
                                                       : "task " + c.task;
      throw InputError(fmt::format(
          "{} ({}) is {} but applies only to the {} famil{}; this run ({}) is of the {} family: "
          "leave it at {}",
          key, config_field(key).flags, settings.at(key).dump(), fmt::join(readers, ", "),
          readers.size() == 1 ? "y" : "ies", run, family->name, defaults.at(key).dump()));
    }
  }
}

/// The preset row for `task`, or for the run on your own data that `overrides` name; "" if none.
std::string preset_row(const std::string& task, const json& overrides) {
  if (!task.empty() || !overrides.is_object()) return task;
  auto given = [&](const char* key) {
    return overrides.contains(key) && overrides[key].is_string() &&
           !overrides[key].get<std::string>().empty();
  };
  if (given("data")) return kSequenceDataPresets;
  if (given("truth_table")) return kTruthTablePresets;
  return task;
}

}  // namespace

void check_trains_a_step(const TrainConfig& config) {
  if (config.epochs == 0 && config.steps == 0) {
    throw InputError("--epochs 0 trains no step: give --epochs N or --steps N with N at least 1");
  }
}

void check_config(const TrainConfig& config) {
  for (const auto& field : config_fields()) check_field(field, config);
  check_what_is_learned(config);
  check_family_settings(config);
  const auto method = runtime::parse_init_method(config.init);
  if (runtime::init_requires_spec(method) && config.spec.empty()) {
    throw InputError(fmt::format("--init {} needs a spec (--spec FILE)", config.init));
  }
}

TrainConfig resolve_config(const std::string& task, const std::string& preset,
                           const json& overrides) {
  json j = to_json(TrainConfig{});
  j["task"] = task;
  if (!preset.empty()) {
    const std::string row = preset_row(task, overrides);
    if (!row.empty()) merge_into(j, task_preset(row, preset), "preset");
    j["preset"] = preset;
  }
  merge_into(j, overrides, "overrides");
  // Epochs given on their own are run, even where the preset counts steps.
  if (overrides.is_object() && overrides.contains("epochs") && !overrides.contains("steps")) {
    j["steps"] = 0;
  }
  auto config = config_from_json(j);
  check_config(config);
  return config;
}

void check_resume_overrides(const json& overrides) {
  if (overrides.is_null()) return;
  if (!overrides.is_object()) throw InputError("resume overrides must be a JSON object");
  for (const auto& [key, value] : overrides.items()) {
    if (!config_field(key).resumable) {
      throw InputError(fmt::format("--resume cannot change '{}' (only {} may change)", key,
                                   fmt::join(resumable_keys(), ", ")));
    }
  }
}

runtime::ExperimentConfig experiment_config(const TrainConfig& config) {
  runtime::ExperimentConfig experiment;
  static_cast<runtime::ExperimentSettings&>(experiment) = config;  // the settings it reads
  return experiment;
}

}  // namespace maskprior::training
