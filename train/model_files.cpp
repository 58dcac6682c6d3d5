#include "train/model_files.h"

#include <torch/torch.h>

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

}  // namespace

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
