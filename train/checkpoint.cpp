#include "train/checkpoint.h"

#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/sha256.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "train/run_folder.h"

namespace maskprior::training {

namespace {

using nlohmann::json;

constexpr const char* kSumsFormat = "maskprior-checkpoint-sums/1";

/// The entries of checkpoint.json (newest first), or nullopt when there is none.
std::optional<json> read_sums(const std::string& sums_path) {
  if (!std::filesystem::exists(std::filesystem::symlink_status(sums_path))) return std::nullopt;
  json sums = read_json_file(sums_path);
  if (!sums.is_object() || sums.value("format", "") != kSumsFormat ||
      !sums.contains("checkpoints") || !sums["checkpoints"].is_array()) {
    throw InputError(
        fmt::format("{}: not a checkpoint.json of maskprior (expected \"format\": "
                    "\"{}\" and a list \"checkpoints\")",
                    sums_path, kSumsFormat));
  }
  return sums["checkpoints"];
}

/// Every tensor of `archive` (recursing into sub-archives, as Module::save nests its children), by
/// dotted name: the names of named_parameters() and named_buffers().
void archive_tensors(torch::serialize::InputArchive& archive, const std::string& prefix,
                     std::map<std::string, torch::Tensor>& out) {
  for (const std::string& key : archive.keys()) {
    torch::Tensor tensor;
    torch::serialize::InputArchive sub;
    if (archive.try_read(key, tensor)) {
      out.emplace(prefix + key, tensor);
    } else if (archive.try_read(key, sub)) {
      archive_tensors(sub, prefix + key + ".", out);
    }
  }
}

/// InputError naming the first tensor of the checkpoint's model that does not fit `model`: a
/// checkpoint of another architecture (dim, depth, heads, head_dim, mlp, vocabulary, length).
void check_architecture(const std::string& path, torch::serialize::InputArchive& model_archive,
                        runtime::MaskedTransformer& model) {
  std::map<std::string, torch::Tensor> saved;
  archive_tensors(model_archive, "", saved);
  std::map<std::string, torch::Tensor> expected;
  for (const auto& item : model->named_parameters()) expected.emplace(item.key(), item.value());
  for (const auto& item : model->named_buffers()) expected.emplace(item.key(), item.value());
  const auto fail = [&](const std::string& what) {
    throw InputError(fmt::format(
        "checkpoint {} was written by a model of another architecture: {}; this run's settings "
        "(dim, depth, heads, head_dim, mlp, the spec, the data's vocabulary) are not those of the "
        "run that wrote it",
        path, what));
  };
  for (const auto& [name, tensor] : expected) {
    const auto found = saved.find(name);
    if (found == saved.end()) fail(fmt::format("it has no '{}', which this run's model has", name));
    if (found->second.sizes() != tensor.sizes()) {
      fail(fmt::format("'{}' is {} there and {} in this run's model", name,
                       shape_text(found->second.sizes().vec()), shape_text(tensor.sizes().vec())));
    }
  }
  for (const auto& [name, tensor] : saved) {
    if (!expected.contains(name)) {
      fail(fmt::format("it holds '{}' {}, which this run's model does not have", name,
                       shape_text(tensor.sizes().vec())));
    }
  }
}

}  // namespace

std::string checkpoint_sums_path(const std::string& checkpoint_path) {
  return (std::filesystem::path(checkpoint_path).parent_path() / kCheckpointSumsFile).string();
}

std::string first_non_finite(runtime::MaskedTransformer& model) {
  torch::NoGradGuard no_grad;
  for (const auto& item : model->named_parameters()) {
    if (!torch::isfinite(item.value()).all().item<bool>()) return item.key();
  }
  for (const auto& item : model->named_buffers()) {
    if (item.value().is_floating_point() && !torch::isfinite(item.value()).all().item<bool>()) {
      return item.key();
    }
  }
  return "";
}

std::string save_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                            torch::optim::Optimizer& optimizer, const RunState& state,
                            const std::vector<int64_t>& evaluations,
                            const std::string& current_sha256) {
  if (const std::string bad = first_non_finite(model); !bad.empty()) {
    throw InputError(fmt::format(
        "step {}: the training diverged: parameter '{}' holds NaN or infinite values; {} was not "
        "written, so the last good checkpoint is kept. Resuming would diverge again: start a new "
        "run with a lower --lr or a longer --warmup",
        state.step, bad, path));
  }
  torch::serialize::OutputArchive root, model_archive, optimizer_archive;
  model->save(model_archive);
  optimizer.save(optimizer_archive);
  root.write("model", model_archive);
  root.write("optimizer", optimizer_archive);
  root.write("step", torch::tensor({state.step}, torch::kLong));
  root.write("loss_sum", torch::tensor({state.loss_sum}, torch::kDouble));
  root.write("loss_count", torch::tensor({state.loss_count}, torch::kLong));
  root.write("wall_before", torch::tensor({state.wall_before}, torch::kDouble));
  std::ostringstream out;
  root.save_to(out);
  const std::string bytes = std::move(out).str();
  // The new entry first, the current checkpoint's kept: until the rename below (and for good if
  // the write fails), checkpoint.pt is still the current one, and it must still match.
  const std::string sums_path = checkpoint_sums_path(path);
  const std::string sha256 = sha256_hex(bytes);
  json entries = json::array();
  entries.push_back({{"sha256", sha256}, {"step", state.step}, {"evaluations", evaluations}});
  if (const auto previous = read_sums(sums_path)) {
    for (const json& entry : *previous) {
      if (entry.is_object() && !current_sha256.empty() &&
          entry.value("sha256", "") == current_sha256 && current_sha256 != sha256) {
        entries.push_back(entry);
        break;
      }
    }
  }
  write_json_file(sums_path, {{"format", kSumsFormat}, {"checkpoints", entries}});
  write_file_atomic(path, bytes);
  return sha256;
}

LoadedCheckpoint load_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                                 torch::optim::Optimizer& optimizer, torch::Device device) {
  const std::string bytes = read_regular_file(path, kMaxCheckpointBytes, "checkpoint");
  LoadedCheckpoint loaded;
  loaded.sha256 = sha256_hex(bytes);
  const std::string& sha256 = loaded.sha256;
  const std::string sums_path = checkpoint_sums_path(path);
  if (const auto entries = read_sums(sums_path)) {
    for (const json& entry : *entries) {
      if (entry.is_object() && entry.value("sha256", "") == sha256 &&
          entry.contains("evaluations") && entry["evaluations"].is_array()) {
        loaded.evaluations = std::vector<int64_t>();
        for (const json& step : entry["evaluations"]) {
          if (step.is_number_integer()) loaded.evaluations->push_back(step.get<int64_t>());
        }
      }
    }
    if (!loaded.evaluations) {
      throw InputError(fmt::format(
          "corrupt checkpoint: {} (SHA-256 {}) is none of the checkpoints this run wrote, as {} "
          "lists them: it was damaged or replaced since. Restore it, or start a new run",
          path, sha256, sums_path));
    }
  }
  const auto corrupt = [&](const std::string& why) {
    return InputError(fmt::format("corrupt checkpoint: cannot load {}: {}", path, why));
  };
  torch::serialize::InputArchive root, model_archive, optimizer_archive;
  torch::Tensor step, loss_sum, loss_count, wall_before;
  try {
    std::istringstream in(bytes);
    root.load_from(in, device);
    root.read("model", model_archive);
    root.read("optimizer", optimizer_archive);
    check_architecture(path, model_archive, model);
    model->load(model_archive);
    optimizer.load(optimizer_archive);
    root.read("step", step);
    root.read("loss_sum", loss_sum);
    root.read("loss_count", loss_count);
    root.read("wall_before", wall_before);
  } catch (const c10::Error& e) {
    throw corrupt(e.what_without_backtrace());
  }
  // save_checkpoint never writes a non-finite model, so one here was damaged after it was written
  // (a checkpoint of a maskc without checkpoint.json, which cannot be checked by its SHA-256).
  if (const std::string bad = first_non_finite(model); !bad.empty()) {
    throw corrupt(
        fmt::format("parameter '{}' holds NaN or infinite values, which no checkpoint "
                    "is written with",
                    bad));
  }
  if (step.numel() != 1 || loss_count.numel() != 1 || loss_sum.numel() != 1 ||
      wall_before.numel() != 1 || step.item<int64_t>() < 0 || loss_count.item<int64_t>() < 0) {
    throw corrupt("its run state (step, loss sum, loss count, time) is not valid");
  }
  loaded.state = {step.item<int64_t>(), loss_sum.item<double>(), loss_count.item<int64_t>(),
                  wall_before.item<double>()};
  return loaded;
}

Checkpointer::Checkpointer(const std::string& run_dir, bool writes)
    : run_dir_(run_dir), path_(RunFolder(run_dir).file(kCheckpointFile)), writes_(writes) {}

LoadedCheckpoint Checkpointer::load(runtime::MaskedTransformer& model,
                                    torch::optim::Optimizer& optimizer, torch::Device device) {
  LoadedCheckpoint loaded = load_checkpoint(path_, model, optimizer, device);
  step_ = loaded.state.step;
  sha256_ = loaded.sha256;
  return loaded;
}

void Checkpointer::save(runtime::MaskedTransformer& model, torch::optim::Optimizer& optimizer,
                        const RunState& state, const std::vector<int64_t>& evaluations) {
  if (!writes_) return;
  sha256_ = save_checkpoint(path_, model, optimizer, state, evaluations, sha256_);
  step_ = state.step;
}

std::string Checkpointer::kept() const {
  if (!writes_) return "no --out, so nothing was saved";
  if (step_ < 0) return "no checkpoint had been written yet";
  return fmt::format("the last good checkpoint (step {}) is kept in {}", step_, run_dir_);
}

}  // namespace maskprior::training
