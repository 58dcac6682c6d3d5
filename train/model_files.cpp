#include "train/model_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

#include <cstring>

#include "core/error.h"

namespace maskprior::training {

namespace {

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

/// The file tensor `entry` as a CPU tensor of its dtype.
torch::Tensor torch_tensor(const Tensor& entry, const std::string& name, const std::string& path) {
  const torch::ScalarType type =
      entry.dtype == "F32"  ? torch::kFloat
      : entry.dtype == "U8" ? torch::kUInt8
      : entry.dtype == "I64"
          ? torch::kLong
          : throw InputError(fmt::format("{}: tensor '{}' has dtype {}; a run's weights are F32, "
                                         "U8 or I64",
                                         path, name, entry.dtype));
  auto t = torch::empty(entry.shape, torch::TensorOptions().dtype(type));
  if (static_cast<size_t>(t.numel() * t.element_size()) != entry.bytes.size()) {
    throw InputError(fmt::format("{}: tensor '{}' holds {} bytes, not the {} its shape needs", path,
                                 name, entry.bytes.size(), t.numel() * t.element_size()));
  }
  std::memcpy(t.data_ptr(), entry.bytes.data(), entry.bytes.size());
  return t;
}

}  // namespace

void load_model_tensors(runtime::MaskedTransformer& model, const SafetensorsData& data,
                        const std::string& path) {
  const auto entry = [&](const std::string& name) {
    const auto found = data.tensors.find(name);
    if (found == data.tensors.end()) {
      throw InputError(
          fmt::format("{} has no tensor '{}' (the weights of another model?)", path, name));
    }
    return torch_tensor(found->second, name, path);
  };
  if (data.tensors.count("mask") != 0 && !model->has_mask()) {
    model->set_mask(entry("mask").to(torch::kFloat), /*learnable=*/false);
  }
  if (data.tensors.count("hard") != 0 && !model->hard_mask().defined()) {
    model->set_hard_mask(entry("hard").to(torch::kBool));
  }
  torch::NoGradGuard no_grad;
  const auto copy = [&](const std::string& name, torch::Tensor& value) {
    const torch::Tensor stored = entry(name);
    if (stored.sizes() != value.sizes()) {
      throw InputError(fmt::format("{}: tensor '{}' has shape {}, the model's is {}", path, name,
                                   fmt::join(stored.sizes(), "x"), fmt::join(value.sizes(), "x")));
    }
    value.copy_(stored.to(value.scalar_type()));
  };
  for (auto& item : model->named_parameters()) copy(item.key(), item.value());
  for (auto& item : model->named_buffers()) copy(item.key(), item.value());
}

SafetensorsData model_tensors(runtime::MaskedTransformer& model) {
  SafetensorsData data;
  for (const auto& item : model->named_parameters()) {
    data.tensors[item.key()] = file_tensor(item.value());
  }
  for (const auto& item : model->named_buffers()) {
    data.tensors[item.key()] = file_tensor(item.value());
  }
  return data;
}

SafetensorsData test_rows_tensors(const runtime::TestRows& rows) {
  SafetensorsData data;
  for (const auto& [name, tensor] : rows.tensors) data.tensors[name] = file_tensor(tensor);
  data.metadata["format"] = "maskprior-test-rows/1";
  data.metadata["info"] = rows.info.dump();
  return data;
}

CompiledMask learned_mask(runtime::MaskedTransformer& model, const CompiledMask* spec,
                          const Layout& layout) {
  auto m = model->mask().detach().to(torch::kCPU, torch::kFloat).contiguous();
  CompiledMask learned;
  if (spec) {
    learned = *spec;
    if (m.size(0) != spec->layers || m.size(1) != spec->heads) {  // --mask-sharing layer or head
      learned.layers = m.size(0);
      learned.heads = m.size(1);
      learned.provenance.clear();
      for (int64_t l = 0; l < learned.layers; ++l) {
        for (int64_t h = 0; h < learned.heads; ++h) {
          for (int64_t cell = 0; cell < spec->n * spec->n; ++cell) {
            learned.provenance.push_back(
                spec->provenance[spec->index(spec->layers == 1 ? 0 : l, spec->heads == 1 ? 0 : h, 0,
                                             0) +
                                 static_cast<size_t>(cell)]);
          }
        }
      }
    }
  } else {
    learned.layout = layout;
    learned.name = "zero";
    learned.n = layout.size();
    learned.layers = m.size(0);
    learned.heads = m.size(1);
    learned.provenance.assign(static_cast<size_t>(m.numel()), 0);
  }
  learned.mask.assign(m.data_ptr<float>(), m.data_ptr<float>() + m.numel());
  return learned;
}

}  // namespace maskprior::training
