#include "train/train.h"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "compiler/compile.h"
#include "core/error.h"
#include "io/tensor_file.h"
#include "runtime/experiment.h"
#include "runtime/init.h"
#include "runtime/metrics.h"
#include "runtime/model.h"
#include "train/presets.h"

namespace maskprior::training {

using namespace runtime;  // NOLINT(google-build-using-namespace): the layer below

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

inline constexpr const char* kCheckpointFile = "checkpoint.pt";

// ---------------------------------------------------------------------------------------------
// Config fields: one table serves to_json, config_from_json and the error messages.

template <class Config, class Visit>
void for_each_field(Config& c, Visit&& visit) {
  visit("task", c.task);
  visit("spec", c.spec);
  visit("defines", c.defines);
  visit("mask_open", c.mask_open);
  visit("mask_close", c.mask_close);
  visit("init", c.init);
  visit("preset", c.preset);
  visit("seed", c.seed);
  visit("out", c.out);
  visit("n", c.n);
  visit("train_fraction", c.train_fraction);
  visit("test_size", c.test_size);
  visit("dim", c.dim);
  visit("depth", c.depth);
  visit("heads", c.heads);
  visit("head_dim", c.head_dim);
  visit("mlp", c.mlp);
  visit("optimizer", c.optimizer);
  visit("lr", c.lr);
  visit("weight_decay", c.weight_decay);
  visit("mask_weight_decay", c.mask_weight_decay);
  visit("epochs", c.epochs);
  visit("batch_size", c.batch_size);
  visit("schedule", c.schedule);
  visit("warmup", c.warmup);
  visit("qk_contrast", c.qk_contrast);
  visit("qk_opt_steps", c.qk_opt_steps);
  visit("qk_opt_lr", c.qk_opt_lr);
  visit("threads", c.threads);
  visit("device", c.device);
  visit("eval_every", c.eval_every);
  visit("checkpoint_every", c.checkpoint_every);
  visit("probe_size", c.probe_size);
  visit("progress", c.progress);
  visit("stop_after", c.stop_after);
}

void merge_into(json& base, const json& patch, const std::string& what) {
  if (patch.is_null()) return;
  if (!patch.is_object()) throw InputError(what + " must be a JSON object");
  for (const auto& [key, value] : patch.items()) base[key] = value;
}

// ---------------------------------------------------------------------------------------------
// Interruption: Ctrl-C sets a flag the training loop polls (a signal handler can do no more).

std::atomic<bool> g_interrupted{false};  // NOLINT: written only by the SIGINT handler

extern "C" void on_sigint(int) {
  g_interrupted.store(true);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

/// Installs the SIGINT handler for the lifetime of a training loop.
class InterruptScope {
 public:
  InterruptScope() {
    g_interrupted.store(false);
    previous_ = std::signal(SIGINT, on_sigint);
  }
  ~InterruptScope() { std::signal(SIGINT, previous_); }
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

 private:
  void (*previous_)(int) = SIG_DFL;
};

// ---------------------------------------------------------------------------------------------
// Data order: a pure function of (seed, epoch), so a resumed run sees the same batches.

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

torch::Tensor epoch_order(uint64_t seed, int64_t epoch, int64_t rows) {
  std::vector<int64_t> order(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) order[static_cast<size_t>(i)] = i;
  std::mt19937_64 engine(splitmix64(seed ^ splitmix64(static_cast<uint64_t>(epoch))));
  for (int64_t i = rows - 1; i > 0; --i) {  // Fisher–Yates with a fixed mapping (portable)
    std::swap(order[static_cast<size_t>(i)],
              order[static_cast<size_t>(engine() % static_cast<uint64_t>(i + 1))]);
  }
  return torch::tensor(order, torch::kLong);
}

/// Learning rate at `step`: linear warm-up to `lr`, then constant or cosine decay to 0.
double learning_rate(const TrainConfig& config, int64_t step, int64_t total_steps) {
  if (step < config.warmup) {
    return config.lr * static_cast<double>(step + 1) / static_cast<double>(config.warmup);
  }
  if (config.schedule == "cosine") {
    const double span = static_cast<double>(std::max<int64_t>(1, total_steps - config.warmup));
    const double progress = static_cast<double>(step - config.warmup) / span;
    return config.lr * 0.5 * (1.0 + std::cos(M_PI * progress));
  }
  return config.lr;
}

// ---------------------------------------------------------------------------------------------
// Spec loading and checks against the task and the model.

/// Compiles (.mask) or reads (tensor file) the spec. A .mask spec with a parameter `n` is compiled
/// with n = config.n for Boolean tasks unless -D n=... was given.
CompiledMask load_spec(const TrainConfig& config) {
  if (!config.spec.ends_with(".mask")) return read_mask_file(config.spec);
  CompileOptions options;
  options.defines = config.defines;
  if (config.mask_open != 0) options.open_value = config.mask_open;
  if (config.mask_close != 0) options.close_value = config.mask_close;
  auto spec = compile_file(config.spec, options);
  auto n = spec.params.find("n");
  if (tasks::is_boolean_task(config.task) && !config.defines.contains("n") &&
      n != spec.params.end() && n->second != config.n) {
    options.defines["n"] = std::to_string(config.n);
    spec = compile_file(config.spec, options);
  }
  return spec;
}

void check_spec(const CompiledMask& spec, const TrainConfig& config, const Layout& task_layout,
                const ModelConfig& model) {
  if (!same_spans(spec.layout, task_layout) || spec.n != model.seq_len) {
    throw InputError(fmt::format(
        "spec {} has layout {} but task {} expects {}; write the spec for this task's layout",
        config.spec, layout_text(spec.layout), config.task, layout_text(task_layout)));
  }
  if (spec.layers != 1 && spec.layers != model.depth) {
    throw InputError(fmt::format("spec {} has {} layers but the model has depth {} (use 1 or {})",
                                 config.spec, spec.layers, model.depth, model.depth));
  }
  if (spec.heads != 1 && spec.heads != model.heads) {
    throw InputError(fmt::format("spec {} has {} heads but the model has {} (use 1 or {})",
                                 config.spec, spec.heads, model.heads, model.heads));
  }
}

torch::Device resolve_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  const bool cuda = torch::cuda::is_available();
  if (name == "cuda" && !cuda) {
    throw InputError("--device cuda: LibTorch has no CUDA support here or no GPU is present");
  }
  return cuda ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

/// Adam or AdamW over every parameter; a learnable M gets its own group when
/// `mask_weight_decay` (≥ 0) differs from the rest's weight decay.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& config,
                                                        MaskedTransformer& model) {
  const double mask_decay =
      config.mask_weight_decay >= 0 ? config.mask_weight_decay : config.weight_decay;
  std::vector<torch::Tensor> rest, mask;
  for (const auto& p : model->named_parameters()) {
    (p.key() == "mask" && mask_decay != config.weight_decay ? mask : rest).push_back(p.value());
  }
  auto make = [&](auto options) {
    using Options = decltype(options);
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(
        rest, std::make_unique<Options>(Options(options).weight_decay(config.weight_decay)));
    if (!mask.empty()) {
      groups.emplace_back(mask,
                          std::make_unique<Options>(Options(options).weight_decay(mask_decay)));
    }
    return groups;
  };
  if (config.optimizer == "adamw") {
    auto options = torch::optim::AdamWOptions(config.lr);
    return std::make_unique<torch::optim::AdamW>(make(options), options);
  }
  auto options = torch::optim::AdamOptions(config.lr);
  return std::make_unique<torch::optim::Adam>(make(options), options);
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------
// Files of a run folder.

Tensor file_tensor(const torch::Tensor& value) {
  auto t = value.detach().to(torch::kCPU).contiguous();
  if (t.scalar_type() == torch::kBool) t = t.to(torch::kUInt8);
  if (t.is_floating_point()) t = t.to(torch::kFloat);
  Tensor out;
  out.dtype = t.scalar_type() == torch::kFloat   ? "F32"
              : t.scalar_type() == torch::kUInt8 ? "U8"
                                                 : "I64";
  if (out.dtype == "I64") t = t.to(torch::kLong);
  out.shape.assign(t.sizes().begin(), t.sizes().end());
  const auto* bytes = static_cast<const uint8_t*>(t.data_ptr());
  out.bytes.assign(bytes, bytes + t.numel() * t.element_size());
  return out;
}

void write_json(const fs::path& path, const json& value) {
  write_json_file(path.string(), value);
}

json read_json(const fs::path& path) {
  return read_json_file(path.string());
}

/// Keeps the metrics.jsonl lines up to `step` (a resumed run rewrites the later ones).
void truncate_metrics(const fs::path& path, int64_t step) {
  std::ifstream in(path);
  std::string kept, line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (json::parse(line).value("step", int64_t{0}) <= step) kept += line + "\n";
  }
  write_file_atomic(path.string(), kept);
}

void write_weights(const fs::path& path, MaskedTransformer& model, const TrainConfig& config) {
  SafetensorsData data;
  for (const auto& item : model->named_parameters())
    data.tensors[item.key()] = file_tensor(item.value());
  for (const auto& item : model->named_buffers())
    data.tensors[item.key()] = file_tensor(item.value());
  data.metadata["format"] = "maskprior-weights/1";
  data.metadata["config"] = to_json(config).dump();
  write_safetensors(path.string(), data);
}

/// The learned M as a mask file (the spec's metadata and provenance, M replaced).
void write_learned_mask(const fs::path& path, MaskedTransformer& model, const CompiledMask* spec,
                        const Layout& layout) {
  auto m = model->mask().detach().to(torch::kCPU, torch::kFloat).contiguous();
  CompiledMask learned;
  if (spec) {
    learned = *spec;
  } else {
    learned.layout = layout;
    learned.name = "zero";
    learned.n = layout.size();
    learned.layers = m.size(0);
    learned.heads = m.size(1);
    learned.provenance.assign(static_cast<size_t>(m.numel()), 0);
  }
  learned.mask.assign(m.data_ptr<float>(), m.data_ptr<float>() + m.numel());
  write_mask_file(learned, path.string());
}

// ---------------------------------------------------------------------------------------------
// Progress on stderr: a bar with loss and ETA on a terminal, plain lines otherwise.

class Progress {
 public:
  Progress(bool enabled, int64_t total, int64_t start)
      : enabled_(enabled), tty_(isatty(fileno(stderr)) != 0), total_(total), start_(start) {}

  void update(int64_t step, double loss) {
    if (!enabled_) return;
    const auto now = Clock::now();
    const bool last = step == total_;
    if (tty_) {
      if (!last && now - last_print_ < std::chrono::milliseconds(200)) return;
      last_print_ = now;
      constexpr int kWidth = 30;
      const int filled = static_cast<int>(kWidth * step / std::max<int64_t>(1, total_));
      std::fprintf(stderr, "\r[%s%s] %lld/%lld loss %.5f ETA %s ",
                   std::string(static_cast<size_t>(filled), '#').c_str(),
                   std::string(static_cast<size_t>(kWidth - filled), '.').c_str(),
                   static_cast<long long>(step), static_cast<long long>(total_), loss,
                   eta(step, now).c_str());
      if (last) std::fprintf(stderr, "\n");
    } else {
      const int64_t every = std::max<int64_t>(1, total_ / 10);
      if (!last && step % every != 0) return;
      std::fprintf(stderr, "step %lld/%lld loss %.5f ETA %s\n", static_cast<long long>(step),
                   static_cast<long long>(total_), loss, eta(step, now).c_str());
    }
    std::fflush(stderr);
  }

  void note(const std::string& line) {
    if (!enabled_) return;
    std::fprintf(stderr, "%s%s\n", tty_ ? "\r\033[K" : "", line.c_str());
  }

 private:
  std::string eta(int64_t step, Clock::time_point now) const {
    const double elapsed = std::chrono::duration<double>(now - begin_).count();
    const double done = static_cast<double>(step - start_);
    if (done <= 0) return "--:--";
    const auto seconds = static_cast<int64_t>(elapsed / done * static_cast<double>(total_ - step));
    return fmt::format("{:02}:{:02}", seconds / 60, seconds % 60);
  }

  bool enabled_, tty_;
  int64_t total_, start_;
  Clock::time_point begin_ = Clock::now(), last_print_{};
};

// ---------------------------------------------------------------------------------------------
// The run.

struct RunState {
  int64_t step = 0;
  double loss_sum = 0;  // train loss since the last evaluation
  int64_t loss_count = 0;
  double wall_before = 0;  // seconds spent in earlier sessions of this run
};

void save_checkpoint(const fs::path& path, MaskedTransformer& model,
                     torch::optim::Optimizer& optimizer, const RunState& state) {
  torch::serialize::OutputArchive root, model_archive, optimizer_archive;
  model->save(model_archive);
  optimizer.save(optimizer_archive);
  root.write("model", model_archive);
  root.write("optimizer", optimizer_archive);
  root.write("step", torch::tensor({state.step}, torch::kLong));
  root.write("loss_sum", torch::tensor({state.loss_sum}, torch::kDouble));
  root.write("loss_count", torch::tensor({state.loss_count}, torch::kLong));
  root.write("wall_before", torch::tensor({state.wall_before}, torch::kDouble));
  std::ostringstream bytes;
  root.save_to(bytes);
  write_file_atomic(path.string(), bytes.str());  // temp file + rename: never a partial checkpoint
}

RunState load_checkpoint(const fs::path& path, MaskedTransformer& model,
                         torch::optim::Optimizer& optimizer, torch::Device device) {
  torch::serialize::InputArchive root, model_archive, optimizer_archive;
  try {
    root.load_from(path.string(), device);
    root.read("model", model_archive);
    root.read("optimizer", optimizer_archive);
    model->load(model_archive);
    optimizer.load(optimizer_archive);
    torch::Tensor step, loss_sum, loss_count, wall_before;
    root.read("step", step);
    root.read("loss_sum", loss_sum);
    root.read("loss_count", loss_count);
    root.read("wall_before", wall_before);
    return {step.item<int64_t>(), loss_sum.item<double>(), loss_count.item<int64_t>(),
            wall_before.item<double>()};
  } catch (const c10::Error& e) {
    throw InputError(
        fmt::format("cannot load checkpoint {}: {}", path.string(), e.what_without_backtrace()));
  }
}

json run(const TrainConfig& config, bool resuming) {
  const auto started = Clock::now();
  if (config.threads > 0) torch::set_num_threads(config.threads);
  const auto device = resolve_device(config.device);
  const auto method = parse_init_method(config.init);
  const fs::path out = config.out;

  auto experiment = make_experiment(experiment_config(config));
  const auto model_config = experiment->model_config(experiment_config(config));
  std::optional<CompiledMask> spec;
  if (!config.spec.empty()) {
    spec = load_spec(config);
    check_spec(*spec, config, experiment->layout(), model_config);
  }

  if (!resuming && !out.empty()) {  // the task and spec are good: start the run folder
    std::error_code error;
    fs::create_directories(out, error);
    if (error) {
      throw InputError(
          fmt::format("cannot create run folder {}: {}", out.string(), error.message()));
    }
    write_json(out / "config.json", to_json(config));
  }

  torch::manual_seed(config.seed);
  MaskedTransformer model(model_config);
  const auto probe_cpu = experiment->probe_inputs(config.probe_size);
  InitOptions init_options;
  init_options.seed = config.seed;
  init_options.qk_contrast = config.qk_contrast;
  init_options.qk_opt_steps = config.qk_opt_steps;
  init_options.qk_opt_lr = config.qk_opt_lr;
  init_options.probe_ids = probe_cpu;
  const json init_info = apply_init(model, method, spec ? &*spec : nullptr, init_options);
  model->to(device);
  experiment->to(device);
  const auto probe = probe_cpu.to(device);
  const auto open = spec ? open_cells(*spec).to(device) : torch::Tensor();
  auto optimizer = make_optimizer(config, model);

  const int64_t rows = experiment->train_size();
  const int64_t steps_per_epoch = (rows + config.batch_size - 1) / config.batch_size;
  const int64_t total_steps = steps_per_epoch * config.epochs;
  const int64_t eval_every = config.eval_every > 0 ? config.eval_every : steps_per_epoch;
  const int64_t checkpoint_every =
      config.checkpoint_every > 0 ? config.checkpoint_every : steps_per_epoch;

  auto measure = [&](int64_t step) {
    model->eval();
    json record = experiment->evaluate(model);
    record["step"] = step;
    record["epoch"] = static_cast<double>(step) / static_cast<double>(steps_per_epoch);
    record.update(persistence_metrics(model, probe, open));
    model->train();
    return record;
  };
  auto append_metrics = [&](const json& record) {
    if (out.empty()) return;
    std::ofstream file(out / "metrics.jsonl", std::ios::app);
    file << record.dump() << '\n';
  };

  RunState state;
  json init_record;
  if (resuming) {
    state = load_checkpoint(out / kCheckpointFile, model, *optimizer, device);
    init_record = read_json(out / "init.json");
    truncate_metrics(out / "metrics.jsonl", state.step);
  } else {
    init_record = measure(0);
    init_record["init_info"] = init_info;
    if (!out.empty()) {
      write_json(out / "init.json", init_record);
      append_metrics(init_record);
    }
  }

  Progress progress(config.progress, total_steps, state.step);
  progress.note(fmt::format("{} {} on {}: {} parameters, {} steps ({} per epoch){}", config.task,
                            config.init, device.str(), parameter_count(model), total_steps,
                            steps_per_epoch,
                            resuming ? fmt::format(", resuming at step {}", state.step) : ""));
  auto wall = [&] {
    return state.wall_before + std::chrono::duration<double>(Clock::now() - started).count();
  };
  auto checkpoint = [&] {
    if (out.empty()) return;
    RunState saved = state;
    saved.wall_before = wall();
    save_checkpoint(out / kCheckpointFile, model, *optimizer, saved);
  };

  InterruptScope interrupt_scope;
  model->train();
  torch::Tensor order;
  int64_t order_epoch = -1;
  json last_record;
  while (state.step < total_steps) {
    if (g_interrupted.load() || (config.stop_after > 0 && state.step >= config.stop_after)) {
      checkpoint();
      progress.note(fmt::format("stopped at step {}; continue with: maskc train --resume {}",
                                state.step, out.string()));
      return {{"interrupted", true}, {"steps", state.step}, {"wall_seconds", wall()}};
    }
    const int64_t epoch = state.step / steps_per_epoch;
    if (epoch != order_epoch) {
      order = epoch_order(config.seed, epoch, rows);
      order_epoch = epoch;
    }
    const int64_t first = (state.step % steps_per_epoch) * config.batch_size;
    const auto batch =
        experiment->train_batch(order.narrow(0, first, std::min(config.batch_size, rows - first)));
    const double lr = learning_rate(config, state.step, total_steps);
    for (auto& group : optimizer->param_groups()) group.options().set_lr(lr);
    optimizer->zero_grad();
    auto loss = experiment->loss(model->forward(batch.inputs), batch);
    loss.backward();
    optimizer->step();
    const double loss_value = loss.item<double>();
    state.loss_sum += loss_value;
    state.loss_count += 1;
    state.step += 1;
    progress.update(state.step, loss_value);

    if (state.step % eval_every == 0 || state.step == total_steps) {
      last_record = measure(state.step);
      last_record["train_loss"] = state.loss_sum / static_cast<double>(state.loss_count);
      last_record["lr"] = lr;
      state.loss_sum = 0;
      state.loss_count = 0;
      append_metrics(last_record);
      if (last_record.contains("accuracy")) {
        progress.note(fmt::format("step {}: train loss {:.5f}, accuracy {:.4f}", state.step,
                                  last_record["train_loss"].get<double>(),
                                  last_record["accuracy"].get<double>()));
      }
    }
    if (state.step % checkpoint_every == 0 && state.step < total_steps) checkpoint();
  }
  if (last_record.is_null()) {  // zero steps (resumed at the end, or epochs = 0)
    last_record = measure(state.step);
    last_record["train_loss"] = nullptr;
  }

  json summary = last_record;
  summary["task"] = config.task;
  summary["init"] = config.init;
  summary["seed"] = config.seed;
  summary["steps"] = state.step;
  summary["interrupted"] = false;
  summary["parameters"] = parameter_count(model);
  summary["init_info"] = init_record.value("init_info", json::object());
  for (const char* key : {"prior_mass", "attention_correlation", "accuracy", "unseen_accuracy"}) {
    if (init_record.contains(key)) summary[std::string(key) + "_init"] = init_record[key];
  }
  summary["wall_seconds"] = wall();
  if (!out.empty()) {
    checkpoint();
    write_weights(out / "weights.safetensors", model, config);
    if (model->has_mask()) {
      write_learned_mask(out / "mask.safetensors", model, spec ? &*spec : nullptr,
                         experiment->layout());
    }
    write_json(out / "summary.json", summary);
  }
  return summary;
}

}  // namespace

runtime::ExperimentConfig experiment_config(const TrainConfig& config) {
  runtime::ExperimentConfig e;
  e.task = config.task;
  e.seed = config.seed;
  e.n = config.n;
  e.train_fraction = config.train_fraction;
  e.test_size = config.test_size;
  e.dim = config.dim;
  e.depth = config.depth;
  e.heads = config.heads;
  e.head_dim = config.head_dim;
  e.mlp = config.mlp;
  return e;
}

json to_json(const TrainConfig& config) {
  json j = json::object();
  for_each_field(config, [&](const char* key, const auto& value) { j[key] = value; });
  return j;
}

TrainConfig config_from_json(const json& j) {
  if (!j.is_object()) throw InputError("a training config must be a JSON object");
  TrainConfig config;
  std::set<std::string> known;
  for_each_field(config, [&](const char* key, auto& value) {
    known.insert(key);
    if (!j.contains(key)) return;
    try {
      j.at(key).get_to(value);
    } catch (const json::exception&) {
      throw InputError(
          fmt::format("training config: key '{}' has the wrong type ({})", key, j.at(key).dump()));
    }
  });
  for (const auto& [key, value] : j.items()) {
    if (!known.contains(key))
      throw InputError(fmt::format("training config: unknown key '{}'", key));
  }
  return config;
}

TrainConfig resolve_config(const std::string& task, const std::string& preset,
                           const json& overrides) {
  json j = to_json(TrainConfig{});
  j["task"] = task;
  if (!preset.empty()) {
    merge_into(j, task_preset(task, preset), "preset");
    j["preset"] = preset;
  }
  merge_into(j, overrides, "overrides");
  auto config = config_from_json(j);
  check_config(config);
  return config;
}

void check_config(const TrainConfig& config) {
  auto positive = [](const char* name, auto value) {
    if (value <= 0) throw InputError(fmt::format("{} must be positive, got {}", name, value));
  };
  auto non_negative = [](const char* name, auto value) {
    if (value < 0) throw InputError(fmt::format("{} must not be negative, got {}", name, value));
  };
  auto one_of = [](const char* name, const std::string& value,
                   std::initializer_list<std::string> allowed) {
    for (const auto& a : allowed) {
      if (a == value) return;
    }
    throw InputError(
        fmt::format("{} must be one of {}, got '{}'", name, fmt::join(allowed, ", "), value));
  };
  if (config.task.empty()) throw InputError("no task given (--task NAME)");
  positive("n", config.n);
  positive("dim", config.dim);
  positive("depth", config.depth);
  positive("heads", config.heads);
  positive("head_dim", config.head_dim);
  positive("mlp", config.mlp);
  positive("lr", config.lr);
  positive("batch_size", config.batch_size);
  positive("probe_size", config.probe_size);
  non_negative("weight_decay", config.weight_decay);
  non_negative("epochs", config.epochs);
  non_negative("warmup", config.warmup);
  non_negative("threads", config.threads);
  non_negative("eval_every", config.eval_every);
  non_negative("checkpoint_every", config.checkpoint_every);
  non_negative("stop_after", config.stop_after);
  non_negative("qk_opt_steps", config.qk_opt_steps);
  if (!(config.train_fraction > 0 && config.train_fraction <= 1)) {
    throw InputError(
        fmt::format("train_fraction must be in (0, 1], got {}", config.train_fraction));
  }
  one_of("optimizer", config.optimizer, {"adam", "adamw"});
  one_of("schedule", config.schedule, {"constant", "cosine"});
  one_of("device", config.device, {"auto", "cpu", "cuda"});
  if (!config.preset.empty()) one_of("preset", config.preset, {kPresetQuick, kPresetPaper});
  const auto method = parse_init_method(config.init);
  if (init_requires_spec(method) && config.spec.empty()) {
    throw InputError(fmt::format("--init {} needs a spec (--spec FILE)", config.init));
  }
}

json train(const TrainConfig& config) {
  check_config(config);
  if (!config.out.empty()) {
    const fs::path out = config.out;
    if (fs::exists(out / "config.json")) {
      throw InputError(fmt::format(
          "{} already holds a run; continue it with `maskc train --resume {}` or choose another "
          "--out",
          out.string(), out.string()));
    }
  }
  return run(config, /*resuming=*/false);
}

json resume(const std::string& run_dir, const json& overrides) {
  const fs::path dir = run_dir;
  if (!fs::exists(dir / "config.json")) {
    throw InputError(fmt::format("{} is not a run folder (no config.json)", run_dir));
  }
  json j = read_json(dir / "config.json");
  j["stop_after"] = 0;
  if (!overrides.is_null()) {
    for (const auto& [key, value] : overrides.items()) {
      if (key != "threads" && key != "device" && key != "progress" && key != "stop_after") {
        throw InputError(fmt::format("--resume cannot change '{}' (only threads, device)", key));
      }
      j[key] = value;
    }
  }
  auto config = config_from_json(j);
  config.out = run_dir;
  check_config(config);
  if (fs::exists(dir / "summary.json")) return read_json(dir / "summary.json");  // finished
  if (!fs::exists(dir / kCheckpointFile)) {
    throw InputError(
        fmt::format("{} has no checkpoint to resume from ({} missing)", run_dir, kCheckpointFile));
  }
  return run(config, /*resuming=*/true);
}

void write_json_file(const std::string& path, const nlohmann::json& value) {
  write_file_atomic(path, value.dump(2) + "\n");
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(fmt::format("cannot read {}", path));
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

}  // namespace maskprior::training
