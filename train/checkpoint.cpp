#include "train/checkpoint.h"

#include <fmt/format.h>

#include <sstream>

#include "core/error.h"
#include "core/regular_file.h"
#include "io/atomic_file.h"

namespace maskprior::training {

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

void save_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                     torch::optim::Optimizer& optimizer, const RunState& state) {
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
  std::ostringstream bytes;
  root.save_to(bytes);
  write_file_atomic(path, bytes.str());
}

RunState load_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                         torch::optim::Optimizer& optimizer, torch::Device device) {
  const std::string bytes = read_regular_file(path, kMaxCheckpointBytes, "checkpoint");
  torch::serialize::InputArchive root, model_archive, optimizer_archive;
  try {
    std::istringstream in(bytes);
    root.load_from(in, device);
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
        fmt::format("cannot load checkpoint {}: {}", path, e.what_without_backtrace()));
  }
}

}  // namespace maskprior::training
