// Helpers that the model (runtime/model.cpp) and the decoder's cached passes
// (runtime/decoder_cache.cpp) share. Private to runtime/.
#pragma once

#include <torch/torch.h>

#include <string>

namespace maskprior::runtime {

/// "[2, 3, 4]": a tensor's shape, for messages.
inline std::string shape_text(const torch::Tensor& t) {
  std::string text = "[";
  for (int64_t d = 0; d < t.dim(); ++d) text += (d ? ", " : "") + std::to_string(t.size(d));
  return text + "]";
}

/// The keys and the values [B, H, P, d_head] of a layer's packed projections kv [B, P, 2 or 3, H,
/// d_head] (the last two of dimension 2), as views.
inline torch::Tensor key_view(const torch::Tensor& kv) {
  return kv.select(2, kv.size(2) - 2).transpose(1, 2);
}
inline torch::Tensor value_view(const torch::Tensor& kv) {
  return kv.select(2, kv.size(2) - 1).transpose(1, 2);
}

}  // namespace maskprior::runtime
