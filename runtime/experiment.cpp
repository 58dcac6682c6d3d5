#include "runtime/experiment.h"

#include <algorithm>
#include <vector>

namespace maskprior::runtime {

torch::Tensor map_in_chunks(const torch::Tensor& inputs, int64_t chunk,
                            const std::function<torch::Tensor(const torch::Tensor&)>& fn) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> parts;
  for (int64_t start = 0; start < inputs.size(0); start += chunk) {
    parts.push_back(fn(inputs.narrow(0, start, std::min(chunk, inputs.size(0) - start))));
  }
  return torch::cat(parts, 0);
}

ModelConfig sized_model_config(const ExperimentConfig& config, int64_t vocab, int64_t seq_len,
                               Readout readout) {
  ModelConfig model;
  model.vocab = vocab;
  model.seq_len = seq_len;
  model.dim = config.dim;
  model.depth = config.depth;
  model.heads = config.heads;
  model.head_dim = config.head_dim;
  model.mlp = config.mlp;
  model.readout = readout;
  model.position = parse_position_embedding(config.pos_embedding);
  model.pos_init_std = config.pos_init_std;
  model.post_norm = parse_post_norm(config.norm);
  model.attn_dropout = config.attn_dropout;
  model.resid_dropout = config.resid_dropout;
  model.activation = parse_activation(config.activation);
  model.qk_norm = parse_qk_norm(config.qk_norm);
  model.mlp_dropout = config.mlp_dropout;
  model.qkv_bias = parse_yes_no("qkv_bias", config.qkv_bias);
  model.attn_init = parse_attn_init(config.attn_init);
  model.final_norm = parse_yes_no("final_norm", config.final_norm);
  return model;
}

}  // namespace maskprior::runtime
