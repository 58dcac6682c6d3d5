// The training loop: build the experiment, model and optimizer from a TrainConfig, then step,
// evaluate and checkpoint until the run ends or is stopped.
#include "train/train.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <functional>
#include <iostream>
#include <iterator>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "core/text.h"
#include "io/json_file.h"
#include "io/lock_file.h"
#include "runtime/autocast.h"
#include "runtime/experiment.h"
#include "runtime/host.h"
#include "runtime/init.h"
#include "runtime/metrics.h"
#include "runtime/model.h"
#include "train/build_info.h"
#include "train/checkpoint.h"
#include "train/data_order.h"
#include "train/evaluation_history.h"
#include "train/fingerprints.h"
#include "train/interrupt.h"
#include "train/milestones.h"
#include "train/model_files.h"
#include "train/progress.h"
#include "train/run_experiment.h"
#include "train/run_folder.h"
#include "train/run_spec.h"
#include "train/session_clock.h"
#include "train/sized_prior.h"
#include "train/step_log.h"

namespace maskprior::training {

using namespace runtime;  // NOLINT(google-build-using-namespace): the layer below

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

/// The progress line of an evaluation record: the mean train loss over the `steps` steps since the
/// last evaluation (none at step 0), every metric of the task family the record has, and the
/// seconds the evaluation took.
std::string evaluation_line(const json& record, const tasks::TaskFamily& family, int64_t steps,
                            double seconds) {
  const auto step = record["step"].get<int64_t>();
  std::vector<std::string> parts;
  if (const auto loss = record.find("train_loss"); loss != record.end() && loss->is_number()) {
    parts.push_back(fmt::format("mean train loss {:.5f} over steps {}-{}", loss->get<double>(),
                                step - steps + 1, step));
  }
  for (const tasks::Metric& metric : family.metrics) {
    const auto value = record.find(metric.key);
    if (value == record.end()) continue;
    // null: the metric has no rows to measure (no unseen row in the table), not 0
    if (value->is_number()) {
      parts.push_back(fmt::format("{} {:.4f}", metric.label, value->get<double>()));
    } else if (value->is_null()) {
      parts.push_back(fmt::format("{} n/a", metric.label));
    }
  }
  parts.push_back(fmt::format("evaluated in {:.1f} s", seconds));
  return fmt::format("step {}: {}", step, fmt::join(parts, ", "));
}

/// The L2 norm of the gradients of every parameter of `model` (those without one count 0).
double gradient_norm(MaskedTransformer& model) {
  const torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> norms;
  for (const auto& p : model->parameters()) {
    if (p.grad().defined()) norms.push_back(p.grad().detach().to(torch::kFloat).norm());
  }
  return norms.empty() ? 0.0 : torch::stack(norms).norm().item<double>();
}

torch::Device resolve_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  check_device_available(name);
  return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

/// Adam or AdamW over every parameter; a learnable M gets its own group when
/// `mask_weight_decay` is set and differs from the rest's weight decay.
std::unique_ptr<torch::optim::Optimizer> make_optimizer(const TrainConfig& config,
                                                        MaskedTransformer& model) {
  const double mask_decay = config.mask_weight_decay.value_or(config.weight_decay);
  std::vector<torch::Tensor> rest, mask;
  for (const auto& p : model->named_parameters()) {
    const bool is_mask = p.key() == "mask" || p.key() == "rule_offsets";
    (is_mask && mask_decay != config.weight_decay ? mask : rest).push_back(p.value());
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

/// Refuses, before a run folder is made, a model whose training would not fit in this machine's
/// memory (estimate_footprint against MemAvailable; on a GPU the limit is the host's too, as the
/// device's memory is not known here), naming the sizes that make it. `extra_bytes`: what else
/// the run holds (a run over several sizes: the prior of each size).
void check_footprint(const ModelConfig& model, const TrainConfig& config, double extra_bytes = 0) {
  ModelFootprint f = estimate_footprint(model, config.batch_size);
  f.training_bytes += extra_bytes;
  const std::optional<double> available = available_memory_bytes();
  constexpr double kNoMachine = 1e15;  // 1 PB: past any machine, even when the memory is unknown
  const double limit = std::min(available.value_or(kNoMachine), kNoMachine);
  if (f.training_bytes <= limit) return;
  auto size = [](double bytes) {  // saturated past uint64_t: "more than 16 EiB"
    constexpr double kLargest = static_cast<double>(std::numeric_limits<uint64_t>::max());
    return human_bytes(bytes >= kLargest ? std::numeric_limits<uint64_t>::max()
                                         : static_cast<uint64_t>(bytes));
  };
  auto count = [](double n) {
    return n < 1e6 ? fmt::format("{:.0f}", n) : fmt::format("{:.3g}", n);
  };
  throw InputError(fmt::format(
      "training this model would take about {} of memory, more than {} ({} parameters and {} "
      "mask logits: --dim {}, --depth {}, --heads {} × --head-dim {}, --mlp {}, "
      "vocabulary {}, {} tokens per example; and the activations of --batch-size {}); choose "
      "smaller sizes{}",
      size(f.training_bytes),
      available ? fmt::format("the {} this machine has available", size(*available))
                : std::string("any machine has"),
      count(f.parameters), count(f.mask_logits), model.dim, model.depth, model.heads,
      model.head_dim, model.mlp, model.vocab, model.seq_len, config.batch_size,
      config.task.empty() ? " (a data file's vocabulary is every distinct symbol or value in it)"
                          : ""));
}

/// Memory a data file takes once read, per byte of the file: the text, a code and a column per
/// symbol, the int64 token ids and the train/test copies of the rows.
constexpr double kDataBytesPerFileByte = 16;

/// Refuses, before a data file is read, files whose reading would not fit in this machine's
/// memory (kDataBytesPerFileByte × their size against MemAvailable). A file that cannot be sized
/// is left to its reader, which names the problem.
void check_data_footprint(const TrainConfig& config) {
  const std::optional<double> available = available_memory_bytes();
  if (!available) return;
  double bytes = 0;
  std::vector<std::string> files;
  for (const auto* path : {&config.data, &config.test_data, &config.truth_table}) {
    if (path->empty()) continue;
    std::error_code error;
    const auto size = std::filesystem::file_size(*path, error);
    if (error) continue;
    bytes += static_cast<double>(size);
    files.push_back(fmt::format("{} ({})", printable_utf8(*path), human_bytes(size)));
  }
  const double needed = bytes * kDataBytesPerFileByte;
  if (needed <= *available) return;
  throw InputError(fmt::format(
      "reading {} would take about {} of memory ({:.0f}× the file size: its symbols, token ids "
      "and the train/test rows), more than the {} this machine has available; use a smaller "
      "file or a machine with more memory",
      fmt::join(files, " and "), human_bytes(static_cast<uint64_t>(needed)), kDataBytesPerFileByte,
      human_bytes(static_cast<uint64_t>(*available))));
}

/// Starts the run folder of a new run: config.json (with what the run made of its settings,
/// The user's data files of a run (`data`, `test_data`, `truth_table`) as it read them: each
/// key's absolute path and the SHA-256 of its content, so that the run folder can be read from
/// any working folder and a moved or changed file is recognised (config.json's `resolved`).
json data_files(const TrainConfig& config) {
  json files = json::object();
  for (const auto& [key, member] : kDataFileSettings) {
    const std::string& path = config.*member;
    if (path.empty()) continue;
    files[key] = {{"path", std::filesystem::absolute(path).lexically_normal().string()},
                  {"sha256", sha256_file(path, std::numeric_limits<uint64_t>::max(), key)}};
  }
  return files;
}

/// `resolved`) and a copy of the spec. A run that never reached a checkpoint (killed while setting
/// up or before its first checkpoint) is replaced: there is nothing in it to resume.
void start_folder(const RunFolder& folder, const TrainConfig& config, const json& resolved) {
  if (folder.never_checkpointed()) {
    std::cerr << fmt::format(
        "maskc: {} holds a run that never reached a checkpoint; starting it again\n",
        folder.path());
    folder.clear_run();
  }
  folder.create(config, resolved);
  if (!config.spec.empty()) folder.copy_spec(config.spec);
  // What --resume checks: config.json as written, and the files the run read.
  if (folder.enabled()) {
    folder.write_json(kFingerprintsFile, run_fingerprints(folder.read_json(kConfigFile), config));
  }
}

// ---------------------------------------------------------------------------------------------
// The run.

/// One session of a run (a fresh start or a resume): built from the config, then `execute`.
class Run {
 public:
  /// `group`: the ranks of a data-parallel run (train/distributed.h), null for one process.
  /// `check_only`: set up no further than the checks before the model is built (check_run).
  Run(const TrainConfig& config, bool resuming, ProcessGroup* group, bool check_only = false);
  /// Trains to the end or until stopped; returns the summary (see train()).
  json execute();

 private:
  void build_model();
  void start();
  /// `seconds`: set to the time the evaluation took.
  json measure(int64_t step, double* seconds = nullptr);
  double train_step();
  void record_evaluation(double lr);
  /// What the run made of its settings, for config.json (kResolvedKey).
  json resolved() const;
  /// Evaluations after step 0 in the whole run.
  int64_t evaluations() const;
  /// Seconds this run has trained, over all its sessions.
  double wall() const { return state_.wall_before + clock_.elapsed(); }
  void checkpoint();
  json stop(int received);
  json finish();
  [[noreturn]] void diverged(double loss, double lr) const;
  /// Training rows per size group (one group: every row).
  std::vector<int64_t> group_rows() const;
  /// Rank 0 (or the only process) evaluates and writes; the other ranks wait for it.
  bool writer() const { return group_ == nullptr || group_->rank() == 0; }
  void on_rank0(const std::function<void()>& work);

  const TrainConfig& config_;
  const tasks::TaskFamily& family_;
  ProcessGroup* const group_;
  const bool resuming_;
  SessionClock clock_;
  const RunFolder folder_;
  torch::Device device_ = torch::kCPU;
  std::unique_ptr<Experiment> experiment_;
  ModelConfig model_config_;
  std::optional<CompiledMask> spec_;  // a run over several sizes: at its longest trained size
  // A run over several sizes (train/sized_prior.h): its sizes, its spec at each, M at installation.
  std::vector<SizeGroup> groups_;
  std::optional<SizedSpec> sized_spec_;
  std::map<int64_t, torch::Tensor> initial_priors_;
  int64_t probe_tokens_ = 0;  // tokens of the probe rows (the longest trained size)
  MaskedTransformer model_{nullptr};
  json init_info_;
  torch::Tensor probe_, open_;
  std::unique_ptr<torch::optim::Optimizer> optimizer_;
  int64_t rows_ = 0, total_steps_ = 0;
  int64_t eval_every_ = 0, checkpoint_every_ = 0;
  RunState state_;
  Checkpointer checkpoints_;
  EvaluationHistory history_;
  StepLog step_log_;
  std::optional<Progress> progress_;
  std::optional<BatchOrder> order_;
};

Run::Run(const TrainConfig& config, bool resuming, ProcessGroup* group, bool check_only)
    : config_(config),
      family_(family_of(config)),
      group_(group),
      resuming_(resuming),
      folder_(group == nullptr || group->rank() == 0 ? config.out : std::string()),
      checkpoints_(config.out, folder_.enabled()),
      history_(folder_),
      step_log_(folder_, config.log_every) {
  // --threads 0: every core (LibTorch's own default may be fewer); OpenBLAS's threads and the
  // allocator too.
  runtime::prepare_host(config_.threads);
  check_stop_requested("starting threads");
  device_ = resolve_device(config_.device);
  if (group_ != nullptr && device_.is_cuda()) {  // one GPU per rank of a machine
    device_ = torch::Device(torch::kCUDA, static_cast<torch::DeviceIndex>(
                                              group_->local_rank() % torch::cuda::device_count()));
  }
  if (!config_.spec.empty()) spec_ = load_spec(config_);  // --data, --truth-table: the layout
  check_stop_requested("compiling the spec");
  check_data_footprint(config_);
  experiment_ = make_run_experiment(config_, spec_);  // polls while it reads data files
  check_stop_requested("reading the data");
  model_config_ = experiment_->model_config(experiment_config(config_));
  groups_ = experiment_->size_groups();
  if (!groups_.empty()) {
    check_sized_run(config_, groups_);
    if (spec_) {
      sized_spec_ = compile_sizes(config_, groups_, model_config_);
      spec_ = sized_spec_->by_tokens.at(experiment_->layout().size());
    }
  } else if (const int64_t value = experiment_->length_value();
             value > 0 && spec_ && config_.spec.ends_with(".mask") &&
             spec_->params.contains(config_.length_param) &&
             !config_.defines.contains(config_.length_param)) {
    TrainConfig at = config_;  // one size that is not the spec's default: compiled at it
    at.defines[config_.length_param] = std::to_string(value);
    spec_ = load_spec(at);
  }
  if (spec_ && groups_.empty()) {
    check_spec(*spec_, config_, experiment_->layout(), model_config_);
    if (model_config_.readout == Readout::kCausalLm && add_hard_causal(*spec_)) {
      std::cerr << fmt::format(
          "maskc: warning: spec {} has no `hard causal`; training adds it (a decoder must not "
          "see the tokens it predicts)\n",
          config_.spec);
    }
  }
  if (init_requires_grid(parse_init_method(config_.init))) {
    impulse_pattern(experiment_->layout(), /*heads=*/1);  // refuses a task without a grid now
  }
  if (groups_.empty()) {
    check_footprint(model_config_, config_);
  } else {  // training runs at the trained sizes only; every size's prior is a buffer
    ModelConfig trained = model_config_;
    trained.seq_len = longest_trained(groups_);
    double priors = 0;
    for (const auto& size : groups_) {
      const auto t = static_cast<double>(size.layout.size());
      // values (float) and rules (int64) per layer and head, the hard mask (bool)
      priors += static_cast<double>(model_config_.depth * model_config_.heads) * t * t * 12 + t * t;
    }
    check_footprint(trained, config_, priors);
  }
  if (check_only) return;
  build_model();  // qk-opt polls between its fitting steps
  check_stop_requested("building the model");
  rows_ = experiment_->train_size();
  order_.emplace(config_.seed, group_rows(), config_.batch_size);
  const int64_t steps_per_epoch = order_->steps_per_epoch();
  total_steps_ = config_.steps > 0 ? config_.steps : steps_per_epoch * config_.epochs;
  eval_every_ = config_.eval_every > 0 ? config_.eval_every : steps_per_epoch;
  checkpoint_every_ = config_.checkpoint_every > 0 ? config_.checkpoint_every : steps_per_epoch;
  // The task, spec, sizes and model are good: only now is the folder written, so a run that fails
  // or is stopped while setting up leaves none.
  if (!resuming_) start_folder(folder_, config_, resolved());
  keep_run_files(folder_, *experiment_, resuming_);
}

json Run::resolved() const {
  json values = {{"device", device_.str()},   {"threads", torch::get_num_threads()},
                 {"steps", total_steps_},     {"steps_per_epoch", order_->steps_per_epoch()},
                 {"eval_every", eval_every_}, {"checkpoint_every", checkpoint_every_}};
  if (spec_) {  // the values the spec's `open` and `close` wrote, after --mask-open/--mask-close
    values["mask_open"] = spec_->open_value;
    values["mask_close"] = spec_->close_value;
  }
  if (json files = data_files(config_); !files.empty()) values["data_files"] = std::move(files);
  return values;
}

std::vector<int64_t> Run::group_rows() const {
  if (groups_.empty()) return {rows_};
  std::vector<int64_t> rows;
  for (const SizeGroup& group : groups_) rows.push_back(group.train_rows);
  return rows;
}

int64_t Run::evaluations() const {
  return total_steps_ / eval_every_ + (total_steps_ % eval_every_ != 0 ? 1 : 0);
}

/// The model, initialised as configured (seeded, so the same config gives the same model), on
/// the device, and its optimizer.
void Run::build_model() {
  torch::manual_seed(config_.seed);
  model_ = MaskedTransformer(model_config_);
  const auto probe_cpu = experiment_->probe_inputs(config_.probe_size);
  InitOptions init_options;
  init_options.seed = config_.seed;
  init_options.qk_contrast = config_.qk_contrast;
  init_options.qk_opt_steps = config_.qk_opt_steps;
  init_options.qk_opt_lr = config_.qk_opt_lr;
  init_options.qk_opt_sequences = config_.qk_opt_sequences;
  init_options.probe_ids = probe_cpu;
  init_options.layout = experiment_->layout();
  init_options.mask_sharing = parse_mask_sharing(config_.mask_sharing);
  if (groups_.empty()) {
    init_info_ = apply_init(model_, parse_init_method(config_.init), spec_ ? &*spec_ : nullptr,
                            init_options);
  } else {
    init_info_ = install_sized_priors(model_, config_, sized_spec_ ? &*sized_spec_ : nullptr,
                                      groups_, initial_priors_);
  }
  probe_tokens_ = probe_cpu.size(1);
  model_->to(device_);
  experiment_->to(device_);
  probe_ = probe_cpu.to(device_);
  open_ = spec_ ? open_cells(*spec_).to(device_) : torch::Tensor();
  optimizer_ = make_optimizer(config_, model_);
}

/// Loads the checkpoint (resume) or measures step 0 and writes init.json; starts the progress.
void Run::start() {
  if (resuming_) {  // every rank reads the checkpoint (the folder must be shared)
    const LoadedCheckpoint loaded = checkpoints_.load(model_, *optimizer_, device_);
    state_ = loaded.state;
    history_.resume(state_.step, loaded.evaluations);
    step_log_.truncate(state_.step);
  }
  progress_.emplace(config_.progress && writer(), total_steps_, state_.step);
  if (const auto about = experiment_->description(); !about.empty()) progress_->note(about);
  progress_->note(fmt::format("{} {} on {}: {} parameters, {} steps ({} per epoch){}",
                              learned_label(config_), config_.init, device_.str(),
                              parameter_count(model_), total_steps_, order_->steps_per_epoch(),
                              resuming_ ? fmt::format(", resuming at step {}", state_.step) : ""));
  if (const json data = experiment_->data_info(); data.contains("note")) {
    progress_->note(data["note"].get<std::string>());
  }
  if (!family_.input_key.empty()) {  // your own data: the settings that can decide the answer
    progress_->note(fmt::format(
        "position embedding {} (init std {}), {}-LN: settings that can decide whether a prior "
        "helps; compare both inits at --pos-init-std 1 and 0.02 (docs/your-data.md)",
        config_.pos_embedding, config_.pos_init_std, config_.norm));
  }
  // Step 0 is measured after the header and says so, so a long first evaluation (a minute or
  // more at the paper's sizes on a CPU) is not silence.
  if (!resuming_) {
    on_rank0([&] {
      progress_->note("step 0: evaluating the initial model");
      double seconds = 0;
      json record = measure(0, &seconds);
      clock_.set_evaluation_seconds(seconds);
      progress_->note(evaluation_line(record, family_, 0, seconds));
      record["init_info"] = init_info_;
      record["data_info"] = experiment_->data_info();
      history_.start(record);
    });
  }
  if (group_ != nullptr) group_->broadcast(model_->parameters());  // start identical
  clock_.begin_steps(state_.step);
  progress_->begin_steps();
}

/// The task's metrics and the persistence metrics at `step`.
json Run::measure(int64_t step, double* seconds) {
  const auto begin = Clock::now();
  model_->eval();
  json record;
  {
    const Autocast autocast(device_, config_.precision == "bf16");
    record = experiment_->evaluate(model_);
  }
  if (seconds != nullptr) *seconds = std::chrono::duration<double>(Clock::now() - begin).count();
  record["step"] = step;
  record["epoch"] = static_cast<double>(step) / static_cast<double>(order_->steps_per_epoch());
  record.update(persistence_metrics(model_, probe_, open_));
  if (model_->has_sized_priors() && initial_priors_.contains(probe_tokens_)) {
    const auto drift = sized_mask_drift(model_, probe_tokens_, initial_priors_.at(probe_tokens_));
    if (!drift.empty()) record["mask_drift"] = drift;
  }
  model_->train();
  return record;
}

/// One optimizer step on the next batch of the epoch's order; returns the learning rate used.
double Run::train_step() {
  const std::vector<int64_t> batch_rows = order_->rows(state_.step);
  const auto count = static_cast<int64_t>(batch_rows.size());
  auto rows = torch::tensor(batch_rows, torch::kLong);
  // Data-parallel: this rank's shard, its mean loss weighted by its share of the global batch, so
  // that the summed gradients are those of the global mean (a rank without rows weighs one row 0).
  double weight = 1.0;
  if (group_ != nullptr) {
    const Shard shard = shard_of(count, group_->rank(), group_->size());
    rows = rows.narrow(0, shard.size > 0 ? shard.offset : 0, std::max<int64_t>(shard.size, 1));
    weight = static_cast<double>(shard.size) / static_cast<double>(count);
  }
  const auto batch = experiment_->train_batch(rows);
  const double lr = learning_rate(config_, state_.step, total_steps_);
  for (auto& group : optimizer_->param_groups()) group.options().set_lr(lr);
  clear_gradients(*model_);
  torch::Tensor loss;
  {
    const Autocast autocast(device_, config_.precision == "bf16");
    loss = experiment_->train_loss(model_, batch);
  }
  (group_ != nullptr ? loss * weight : loss).backward();
  double loss_value = loss.item<double>();
  if (group_ != nullptr) {
    loss_value = group_->sum_gradients(model_->parameters(), loss_value * weight);
  }
  // Before the optimizer step: the model and the state stay those of the last good step (every
  // rank sees the same summed loss, so all stop together).
  if (!std::isfinite(loss_value)) diverged(loss_value, lr);
  // Read before the step (Adam leaves the gradients as they are); only on logged steps, as it
  // waits for the device.
  const bool logged = writer() && step_log_.due(state_.step + 1, total_steps_);
  const double grad_norm = logged ? gradient_norm(model_) : 0.0;
  optimizer_->step();
  state_.loss_sum += loss_value;
  state_.loss_count += 1;
  state_.step += 1;
  if (logged) step_log_.append({state_.step, loss_value, lr, grad_norm, wall()});
  if (progress_->due(state_.step)) progress_->update(state_.step, loss_value);
  return lr;
}

/// Evaluates, with the mean train loss since the last evaluation, into metrics.jsonl.
void Run::record_evaluation(double lr) {
  on_rank0([&] {
    progress_->status(fmt::format("step {}: evaluating", state_.step));
    double seconds = 0;
    json record = measure(state_.step, &seconds);
    record["train_loss"] = state_.loss_sum / static_cast<double>(state_.loss_count);
    record["lr"] = lr;
    history_.append(record);
    progress_->note(evaluation_line(record, family_, state_.loss_count, seconds));
  });
  state_.loss_sum = 0;
  state_.loss_count = 0;
}

void Run::on_rank0(const std::function<void()>& work) {
  if (group_ != nullptr) {
    group_->on_rank0(work);
  } else {
    work();
  }
}

void Run::checkpoint() {
  RunState saved = state_;
  saved.wall_before = wall();
  checkpoints_.save(model_, *optimizer_, saved, history_.steps());
}

/// A non-finite training loss: stop without saving the broken state (the last checkpoint stays).
void Run::diverged(double loss, double lr) const {
  throw InputError(fmt::format(
      "step {}: the training loss is {}: the training diverged. The run stopped without saving "
      "this state; {}. Resuming would diverge again: start a new run with a lower --lr (this "
      "run's is {:g} at this step) or a longer --warmup",
      state_.step + 1, loss, checkpoints_.kept(), lr));
}

json Run::execute() {
  start();
  model_->train();
  while (state_.step < total_steps_) {
    int received = InterruptScope::stop_signal();
    // Every rank stops at the same step: the largest signal any rank received.
    if (group_ != nullptr) received = static_cast<int>(group_->max(received));
    if (received != 0 || (config_.stop_after > 0 && state_.step >= config_.stop_after)) {
      return stop(received);
    }
    const auto begin = SessionClock::Clock::now();
    const double lr = train_step();
    clock_.step_done(state_.step, begin);
    if (state_.step % eval_every_ == 0 || state_.step == total_steps_) record_evaluation(lr);
    if (state_.step % checkpoint_every_ == 0 && state_.step < total_steps_) checkpoint();
  }
  return finish();
}

/// Stopped by the signal `received` (0: by stop_after): checkpoint and say how to continue.
json Run::stop(int received) {
  checkpoint();
  progress_->note(fmt::format("stopped at step {}{}; continue with: maskc train --resume {}",
                              state_.step, received == SIGTERM ? " (SIGTERM)" : "",
                              folder_.path()));
  json summary = {{"interrupted", true},
                  {"steps", state_.step},
                  {"total_steps", total_steps_},
                  {"wall_seconds", wall()}};
  if (received != 0) summary["signal"] = received;
  if (!writer()) summary["rank"] = group_->rank();
  // What the whole run would take, as this session measured it (the dry runs of
  // experiments/run_plan.h).
  summary["timing"] = clock_.timing();
  summary["timing"]["evaluations"] = evaluations();
  summary["timing"]["device"] = device_.str();
  return summary;
}

/// The summary of a finished run; with a run folder also the last checkpoint, weights, the
/// learned M and summary.json.
json Run::finish() {
  if (!writer()) {  // rank 0 evaluates and writes the run's files
    return {{"rank", group_->rank()},
            {"world_size", group_->size()},
            {"steps", state_.step},
            {"interrupted", false}};
  }
  json summary = history_.last_record();
  if (summary.is_null()) {  // zero steps (resumed at the end, or epochs = 0)
    summary = measure(state_.step);
    summary["train_loss"] = nullptr;
  }
  summary["task"] = config_.task;
  summary["family"] = family_.name;
  if (!config_.data.empty()) summary["data"] = config_.data;  // config.json's key
  if (!config_.truth_table.empty()) summary["truth_table"] = config_.truth_table;
  // The spec as compiled: `maskc report` pools runs only of the same spec's source.
  if (spec_ && !spec_->source_sha256.empty()) summary["spec_sha256"] = spec_->source_sha256;
  summary["init"] = config_.init;
  summary["seed"] = config_.seed;
  summary["device"] = device_.str();     // the one used: config.json may say "auto"
  summary["provenance"] = provenance();  // the commit, build and machine
  summary["steps"] = state_.step;
  summary["interrupted"] = false;
  summary["parameters"] = parameter_count(model_);
  const json& init_record = history_.init_record();
  summary["init_info"] = init_record.value("init_info", json::object());
  summary["data_info"] = experiment_->data_info();
  // Where the run started: the step-0 value of what it learns and of what its prior measures.
  std::vector<std::string> start_keys(runtime::kPriorStartKeys.begin(),
                                      runtime::kPriorStartKeys.end());
  for (const tasks::Metric& metric : family_.metrics) start_keys.push_back(metric.key);
  for (const std::string& key : start_keys) {
    if (init_record.contains(key)) summary[key + "_init"] = init_record[key];
  }
  summary["wall_seconds"] = wall();
  if (!history_.lost().empty()) summary["missing_evaluations"] = history_.lost();
  // Every evaluation of the run, earlier sessions included.
  summary.update(milestones(history_.records(), family_.headline()));
  if (folder_.enabled()) {
    checkpoint();
    folder_.write_weights(model_tensors(model_), config_);
    if (config_.save_test_rows)
      folder_.write_test_rows(test_rows_tensors(experiment_->test_rows()));
    if (model_->has_mask()) {
      folder_.write_mask(learned_mask(model_, spec_ ? &*spec_ : nullptr, experiment_->layout()));
    }
    if (sized_spec_ && model_->rule_offsets().defined()) {
      summary["learned_rules"] = learned_rules(
          model_, *sized_spec_, read_regular_file(config_.spec, kMaxSpecBytes, "spec"),
          experiment_->layout().size());
    }
    folder_.write_json(kSummaryFile, summary);
  }
  return summary;
}

json run(const TrainConfig& config, bool resuming, ProcessGroup* group) {
  // From the start: a signal while setting up ends the run (Interrupted, before the folder is
  // created when it comes that early); one after set-up stops it with a checkpoint.
  InterruptScope interrupts;
  Run session(config, resuming, group);
  return session.execute();
}

/// Joins the group of a data-parallel run (null: one process).
std::unique_ptr<ProcessGroup> join(const World* world, const TrainConfig& config) {
  if (world == nullptr || world->size <= 1) return nullptr;
  return std::make_unique<ProcessGroup>(*world, resolve_device(config.device).is_cuda());
}

}  // namespace

json train(const TrainConfig& config, const World* world) {
  check_config(config);
  const auto group = join(world, config);  // first, so that rank 0's errors reach the others
  const bool writer = group == nullptr || group->rank() == 0;
  const FolderLock lock(writer ? config.out : std::string());  // one process per run folder
  const RunFolder folder(writer ? config.out : std::string());
  // A run killed before its first checkpoint cannot be resumed: a new run takes its folder over
  // (start_folder), rather than leave it stuck.
  if (const auto left = folder.files_without_config(); !left.empty()) {
    throw InputError(fmt::format(
        "{} holds {} but no {}: what is left of another run, which a new run does not take over "
        "(nor append to); remove those files or choose another --out",
        folder.path(), fmt::join(left, ", "), kConfigFile));
  }
  if (folder.has(kConfigFile) && !folder.never_checkpointed()) {
    throw InputError(fmt::format(
        "{} already holds a run; continue it with `maskc train --resume {}` or choose another "
        "--out",
        folder.path(), folder.path()));
  }
  return run(config, /*resuming=*/false, group.get());
}

void check_run(const TrainConfig& config) {
  check_config(config);
  TrainConfig unwritten = config;
  unwritten.out.clear();
  const Run setup(unwritten, /*resuming=*/false, /*group=*/nullptr, /*check_only=*/true);
}

json resume(const std::string& run_dir, const json& overrides, const World* world) {
  check_resume_overrides(overrides);
  // One process per run folder (a missing folder is reported below, not created); of the ranks
  // of a data-parallel run, rank 0 holds it.
  const bool writer = world == nullptr || world->size <= 1 || world->rank == 0;
  const FolderLock lock(writer && std::filesystem::is_directory(run_dir) ? run_dir : std::string());
  const RunFolder folder(run_dir);
  json settings = {{"stop_after", 0}};
  if (!overrides.is_null()) settings.update(overrides);
  json written;
  TrainConfig config = folder.read_config(settings, &written);
  const std::string config_path = folder.file(kConfigFile);
  config.out = run_dir;
  check_config(config);
  if (folder.has(kSummaryFile)) return folder.read_json(kSummaryFile);  // finished
  if (folder.has(kFingerprintsFile)) {
    check_fingerprints(folder.read_json(kFingerprintsFile), written, config, config_path);
  } else if (folder.has(kCheckpointFile)) {
    std::cerr << fmt::format(
        "maskc: warning: {} has no {} (a run of an older maskc): its config, spec and data are "
        "not checked against those it was created with\n",
        run_dir, kFingerprintsFile);
  }
  if (!folder.has(kCheckpointFile)) {
    throw InputError(fmt::format(
        "{} holds a run that never reached a checkpoint ({} missing), so there is nothing to "
        "resume; start it again with the same flags (`maskc train ... --out {}`): a new run takes "
        "over such a folder",
        run_dir, kCheckpointFile, run_dir));
  }
  const auto group = join(world, config);
  return run(config, /*resuming=*/true, group.get());
}

void check_device_available(const std::string& device) {
  if (device != "cuda" || torch::cuda::is_available()) return;
  if (!at::Context::hasCUDART()) {  // libtorch_cuda is not loaded: a CPU-only LibTorch
    throw InputError(fmt::format(
        "--device cuda: this maskc was built against a LibTorch without CUDA support (LibTorch "
        "{}); use --device cpu (or auto), or rebuild with scripts/build.sh, which uses the "
        "PyTorch wheel's CUDA-enabled LibTorch",
        TORCH_VERSION));
  }
  throw InputError(fmt::format(
      "--device cuda: no GPU is present (this maskc's LibTorch {} has CUDA support, but the "
      "CUDA driver reports no device); use --device cpu, or --device auto to take a GPU only "
      "where there is one",
      TORCH_VERSION));
}

}  // namespace maskprior::training
