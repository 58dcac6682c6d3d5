#include "train/checkpoint.h"

#include <fmt/format.h>

#include <sstream>

#include "core/error.h"
#include "io/atomic_file.h"

namespace maskprior::training {

void save_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
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
  write_file_atomic(path, bytes.str());
}

RunState load_checkpoint(const std::string& path, runtime::MaskedTransformer& model,
                         torch::optim::Optimizer& optimizer, torch::Device device) {
  torch::serialize::InputArchive root, model_archive, optimizer_archive;
  try {
    root.load_from(path, device);
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
