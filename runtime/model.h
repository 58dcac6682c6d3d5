// The masked Transformer: an encoder (or causal decoder), pre- or post-LayerNorm, whose attention
// adds an optional learnable prior log σ(M) and an optional hard mask (docs/paper.md, "The
// method"; the architecture's settings: docs/settings.md):
//   A = softmax(Q Kᵀ / √d_head + log σ(M) + hard(−∞) [+ causal(−∞)]) V.
// M has shape [L', H', N, N] with L' ∈ {1, depth}, H' ∈ {1, heads}, broadcast over layers/heads.
// A token model runs sequences of any length T ≤ N (config.seq_len, the longest): positions
// 0..T−1, the causal mask's top-left T × T.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace maskprior::runtime {

/// How the model turns the last hidden states into outputs.
enum class Readout {
  kClsRegression,  // token 0 (CLS) → LayerNorm → Linear(1): one real number per sequence
  kCausalLm,       // every position → LayerNorm → Linear(vocab), causal attention
  kClsClassify,    // token 0 (CLS) → LayerNorm → Linear(classes): class logits per sequence
};

/// Position embedding: learned (a parameter, initialised ~ N(0, pos_init_std²)), the fixed
/// sinusoids of "Attention is all you need" (a buffer), none, or positions inside attention only:
/// rope (queries and keys rotated by their position, Su et al.) or alibi (a fixed bias −m_h ·
/// distance per head, Press et al.); the last three add nothing to the token embeddings.
enum class PositionEmbedding { kLearned, kSinusoidal, kNone, kRope, kAlibi };
/// The MLP's activation.
enum class Activation { kGelu, kRelu };

/// The enums by their setting names (runtime/experiment_config.h); InputError naming the setting
/// and its values otherwise.
PositionEmbedding parse_position_embedding(const std::string& name);
Activation parse_activation(const std::string& name);
/// norm = "pre" → false, "post" → true.
bool parse_post_norm(const std::string& name);
/// qk_norm = "none" → false, "layer" → true.
bool parse_qk_norm(const std::string& name);
/// A yes/no setting (qkv_bias, final_norm): "yes" → true, "no" → false; InputError naming
/// `setting` otherwise.
bool parse_yes_no(const std::string& setting, const std::string& value);
/// How Wq, Wk, Wv (and the attention's biases) start: kDefault, LibTorch's Linear default
/// (uniform ±1/√dim, Wo's bias uniform too); kTorch, nn.MultiheadAttention's (xavier-uniform on the
/// packed in-projection [Wq; Wk; Wv], in-projection and output biases zero).
enum class AttentionInit { kDefault, kTorch };
AttentionInit parse_attn_init(const std::string& name);

struct ModelConfig {
  int64_t vocab = 3;     // token ids 0..vocab-1 (Boolean: 0, 1 = (x+1)/2 and 2 = CLS)
  int64_t seq_len = 16;  // N, including CLS: the longest sequence (patch models: the only length)
  int64_t dim = 256;
  int64_t depth = 12;
  int64_t heads = 6;
  int64_t head_dim = 64;
  int64_t mlp = 256;
  Readout readout = Readout::kClsRegression;
  int64_t classes = 0;  // kClsClassify: number of classes
  // > 0: inputs are float patches [B, N − 1, patch_features] → Linear(patch_features, dim), a
  // learned CLS vector prepended as token 0 (vocab unused); 0: token ids [B, N].
  int64_t patch_features = 0;
  PositionEmbedding position = PositionEmbedding::kLearned;
  double pos_init_std = 1.0;  // kLearned: initial values ~ N(0, pos_init_std²)
  // Post-LN: x ← LN(x + Attn(x)), x ← LN(x + MLP(x)); pre-LN: x ← x + Attn(LN(x)), x ← x +
  // MLP(LN(x)). Either way the readout applies a final LayerNorm unless final_norm is off.
  bool post_norm = false;
  double attn_dropout = 0;   // on the attention probabilities, in training mode
  double resid_dropout = 0;  // on each sublayer's output before its residual, in training mode
  Activation activation = Activation::kGelu;
  // A LayerNorm over each head's d_head query and key values before their product (its gain and
  // bias shared by the heads of a layer, starting at 1 and 0), so that q·k / √d_head stays within
  // ±√d_head · gain²: the "QK normalisation" of several recent large models.
  bool qk_norm = false;
  double mlp_dropout = 0;  // on the MLP's hidden activations (after the activation), in training
  bool qkv_bias = false;   // biases on Wq, Wk, Wv (Wo always has one)
  AttentionInit attn_init = AttentionInit::kDefault;
  // A LayerNorm on the last layer's output before the readout (a plain stack of PyTorch's
  // nn.TransformerEncoderLayer has none).
  bool final_norm = true;
};

/// What training a model of `config` takes, counted from its shape before anything is allocated
/// (doubles: a size such as dim = 1e12 must not overflow the count).
struct ModelFootprint {
  double parameters = 0;   // the model's, without the mask M
  double mask_logits = 0;  // M at its largest: one N × N per layer and head
  /// float32 bytes of one training step: parameters, gradients and the optimizer's two moments,
  /// and the forward values the backward pass keeps for `batch` rows.
  double training_bytes = 0;
};
ModelFootprint estimate_footprint(const ModelConfig& config, int64_t batch);

/// One block, pre-LN (x + Attn(LN(x)), then + MLP(LN(x))) or post-LN (see ModelConfig). Wq, Wk,
/// Wv have a bias only with qkv_bias. ln_attention and ln_mlp are the LayerNorms before (pre) or
/// after (post) the attention and the MLP.
struct BlockImpl : torch::nn::Module {
  BlockImpl(const ModelConfig& config);

  /// What the projections Wq, Wk, Wv read of x: LN(x) (pre-LN) or x (post-LN).
  torch::Tensor attention_input(const torch::Tensor& x);
  /// The rest of the block after the attention: `residual` the block's input rows, `attended`
  /// the attention's output at those rows before Wo.
  torch::Tensor finish(const torch::Tensor& residual, const torch::Tensor& attended);
  /// The probability of dropping an attention probability now (0 in evaluation mode).
  double attention_dropout() const { return is_training() ? attn_dropout : 0.0; }
  /// Queries or keys [..., d_head] through q_norm or k_norm (ModelConfig::qk_norm); unchanged
  /// without it.
  torch::Tensor normed_queries(const torch::Tensor& q);
  torch::Tensor normed_keys(const torch::Tensor& k);

  torch::nn::LayerNorm ln_attention{nullptr}, ln_mlp{nullptr};
  torch::nn::Linear wq{nullptr}, wk{nullptr}, wv{nullptr}, wo{nullptr};
  torch::nn::Linear fc_in{nullptr}, fc_out{nullptr};
  torch::nn::LayerNorm q_norm{nullptr}, k_norm{nullptr};  // over d_head; only with qk_norm
  int64_t heads = 0;
  int64_t head_dim = 0;
  bool post_norm = false;
  double attn_dropout = 0, resid_dropout = 0, mlp_dropout = 0;
  Activation activation = Activation::kGelu;
};
TORCH_MODULE(Block);

/// The prior of one size T, the spec compiled at T (train/ compiles it; runtime/ has no compiler).
struct SizedPrior {
  torch::Tensor values;  // [L', H', T, T] float: M as the spec writes it at T; undefined: hard only
  torch::Tensor rules;   // [L', H', T, T] int64 in [0, rule_count): the rule that wrote each cell
                         // (undefined when the prior is not learnable)
  torch::Tensor hard;    // [T, T] bool (true = excluded), or undefined
};

/// The model. Inputs are token ids [B, T] (int64, 1 ≤ T ≤ N; T = N where set_mask or
/// set_hard_mask installed a mask of N tokens, T one of prior_sizes() with sized priors), or
/// float patches [B, N − 1, F] when
/// config.patch_features = F > 0; outputs are [B] (kClsRegression), [B, T, vocab] logits
/// (kCausalLm) or [B, classes] logits (kClsClassify). InputError for other shapes.
class MaskedTransformerImpl : public torch::nn::Module {
 public:
  explicit MaskedTransformerImpl(const ModelConfig& config);

  torch::Tensor forward(const torch::Tensor& ids);
  /// Query positions [first, first + count).
  struct Rows {
    int64_t first, count;
  };
  /// Causal decoders: the logits at positions `rows` only, [B, rows.count, vocab], equal to
  /// forward(ids).narrow(1, rows.first, rows.count); on the CPU the last layer is computed at
  /// those positions only and no layer after the last of them (a loss that reads a few rows
  /// costs less). InputError for other readouts or rows outside [0, T).
  torch::Tensor forward(const torch::Tensor& ids, Rows rows);
  /// Runs the model without gradients and returns each layer's attention probabilities
  /// [B, heads, T, T] (row = query, column = key).
  std::vector<torch::Tensor> attention_maps(const torch::Tensor& ids);
  /// The keys and values [B, H, P, d_head] of every layer that a pass over token ids [B, T]
  /// computed (P ≤ T positions), and T: forward_position reads the attention bias of length T
  /// (0, as in a cache put together by hand: P).
  struct KeyValueCache {
    std::vector<torch::Tensor> keys, values;
    int64_t length = 0;
  };
  /// Causal decoders (kCausalLm) only, no gradients: forward(ids), keeping every layer's keys and
  /// values in `cache` for forward_position (greedy_complete, runtime/decoder.h).
  torch::Tensor forward_cached(const torch::Tensor& ids, KeyValueCache& cache);
  /// The same for the logits at `rows` only: forward(ids, rows). The cache holds positions
  /// [0, rows.first + rows.count): later ones are not computed, since no row before them sees
  /// them. On the CPU the rows of `ids` that share their first P tokens (P ≤ rows.first, chosen by
  /// shared_prefix where sharing saves work) run through positions [0, P) once, and the rest of
  /// the pass reads those positions' keys and values.
  torch::Tensor forward_cached(const torch::Tensor& ids, KeyValueCache& cache, Rows rows);
  /// Causal decoders only, no gradients: one step of cached decoding. The logits [B, vocab] at
  /// `position` of tokens [B] (int64) there, attending to `cache`'s keys and values of positions
  /// [0, position) (from forward_cached, positions [0, position] at least); this position's keys
  /// and values are written into the cache. InputError for shapes that do not fit.
  torch::Tensor forward_position(const torch::Tensor& tokens, int64_t position,
                                 KeyValueCache& cache);
  /// What layer 0's attention sees: LayerNorm_0(token or patch + position), [B, T, dim]. No
  /// gradients.
  torch::Tensor attention_input(const torch::Tensor& ids);

  /// Installs the prior M ([L', H', N, N] float, checked against the model's shape; InputError
  /// otherwise) as a parameter (`learnable`) or a buffer; also keeps a copy as buffer `mask_init`.
  void set_mask(const torch::Tensor& mask, bool learnable);
  /// Installs a hard mask [N, N] (bool or uint8, true = excluded), a buffer.
  void set_hard_mask(const torch::Tensor& hard);

  /// Installs priors for the sizes in `priors` (keys = T). learnable: a parameter "rule_offsets"
  /// [L', H', rule_count], zeros, and M_T = values_T + rule_offsets.gather over rules_T (one
  /// learnable logit per rule per layer and head, the same at every size); else M_T = values_T,
  /// fixed. Each size's tensors become buffers prior_values_T, prior_rules_T, prior_hard_T (they
  /// move with the module, and a checkpoint holds them: a resumed run installs the same sizes
  /// before loading it). InputError for shapes that do not fit; InternalError if set_mask or
  /// set_hard_mask was called or this is called twice.
  void set_sized_priors(std::map<int64_t, SizedPrior> priors, int64_t rule_count, bool learnable);
  bool has_sized_priors() const { return !priors_.empty(); }
  /// M at size T ([L', H', T, T], with gradient to rule_offsets when learnable); undefined when the
  /// size has no values (hard only). InputError for a size with no prior.
  torch::Tensor prior_at(int64_t T);
  /// The sizes that have a prior, ascending.
  std::vector<int64_t> prior_sizes() const;
  const torch::Tensor& rule_offsets() const { return rule_offsets_; }  // undefined unless learnable

  bool has_mask() const { return mask_.defined(); }
  bool mask_learnable() const { return mask_learnable_; }
  /// M now / at installation ([L', H', N, N]); undefined tensors when there is no mask.
  const torch::Tensor& mask() const { return mask_; }
  const torch::Tensor& mask_init() const { return mask_init_; }
  const torch::Tensor& hard_mask() const { return hard_; }

  const ModelConfig& config() const { return config_; }
  std::vector<Block>& blocks() { return blocks_; }
  /// Null for a patch model.
  torch::nn::Embedding& token_embedding() { return token_embedding_; }
  /// [N, dim]: a parameter (learned), or a buffer (sinusoidal; zeros for none); a sequence of T
  /// tokens adds its first T rows.
  torch::Tensor& position_embedding() { return position_embedding_; }

 private:
  /// Layer 0's input for token models on the CPU whose batch is larger than twice the vocabulary:
  /// token + position embedding takes vocab · N values only, `embedded` [vocab · N, dim], and
  /// row r of the batch is row index[r] of it ([B · N] int64). Layer 0 then projects Q, K, V of
  /// those vocab · N rows alone and gathers them (instead of projecting all B · N).
  struct Distinct {
    torch::Tensor embedded, index;
  };
  /// The length T of `ids`: token ids [B, T] with 1 ≤ T ≤ N, or N for patches [B, N − 1, F].
  /// InputError for other shapes, and for T ≠ N where set_mask or set_hard_mask installed a mask
  /// of N tokens.
  int64_t sequence_length(const torch::Tensor& ids) const;
  /// sequence_length(ids) after checking that the model is a causal decoder and `rows` lie in
  /// [0, T); InputError naming `operation` otherwise.
  int64_t rows_length(const char* operation, const torch::Tensor& ids, Rows rows) const;
  /// The readout of the last layer's `rows` (all of them if undefined: count 0).
  torch::Tensor run(const torch::Tensor& ids, std::vector<torch::Tensor>* attention,
                    Rows rows = {0, 0});
  /// Block `layer` on x [B, P, dim] at positions [first, first + P), with `bias` the whole
  /// [L' or 1, H' or 1, T, T] attention bias of the sequence (or undefined). With `keys`/`values`:
  /// undefined, they get this pass's keys and values; else a cache [B, H, ≥ first + P, d_head]
  /// whose positions [first, first + P) are overwritten and [0, first + P) attended to.
  torch::Tensor layer_forward(int64_t layer, const torch::Tensor& x, int64_t first,
                              const torch::Tensor& bias, std::vector<torch::Tensor>* attention,
                              torch::Tensor* keys, torch::Tensor* values,
                              const Distinct* distinct = nullptr);
  /// The Distinct inputs of token ids [B, S] at positions [first, first + S), or nothing where
  /// they do not pay (patch models, other devices, batches of fewer than 2 · vocab rows) or a
  /// token is out of range (embed reports it).
  std::optional<Distinct> distinct_inputs(const torch::Tensor& ids, int64_t first = 0);
  /// embed(ids), from `distinct` if it has a value.
  torch::Tensor embed(const torch::Tensor& ids, const std::optional<Distinct>& distinct);
  /// The CPU pass of a causal decoder over the tokens ids [B, S] at positions [first, first + S)
  /// of a sequence whose attention bias is `bias` (attention_bias(T), T ≥ first + S), given
  /// `prefix[l]`, layer l's keys and values of positions [0, first) ([B, first, 2, H,
  /// d_head]; empty when first = 0). Sets kv[l] to layer l's keys and values of positions
  /// [0, first + S) ([B, first + S, 2 or 3, H, d_head], the last two of dimension 2) and returns
  /// the last layer's output at positions `rows` ([B, rows.count, dim]; count 0: keys and values
  /// only).
  torch::Tensor segment_pass(const torch::Tensor& ids, int64_t first,
                             const std::vector<torch::Tensor>& prefix, const torch::Tensor& bias,
                             Rows rows, std::vector<torch::Tensor>& kv);
  /// Block `layer` on the CPU (segment_pass's, and layer_forward's for a whole sequence) on
  /// x [B, S, dim] (or `distinct`'s rows) at positions [first, first + S) after `prefix` (layer
  /// `layer`'s keys and values [B, first, 2, H, d_head], or undefined): one GEMM for the
  /// projections and fused_attention (runtime/attention.h). Returns the block's output at `rows`
  /// only ([B, rows.count, dim]: the rows a readout needs of the last layer), sets `kv` as
  /// segment_pass does, and with `attention` appends the probabilities.
  torch::Tensor segment_layer(int64_t layer, const torch::Tensor& x, int64_t first,
                              const torch::Tensor& prefix, const torch::Tensor& bias, Rows rows,
                              torch::Tensor& kv, const Distinct* distinct,
                              std::vector<torch::Tensor>* attention = nullptr);
  torch::Tensor embed(const torch::Tensor& ids);
  /// The readout of the last layer's output rows x: head(LN_final(x)), or head(x) without
  /// final_norm.
  torch::Tensor readout(const torch::Tensor& x);
  /// Whether the CPU kernels (runtime/attention.h) may run a pass on x: fused_attention_applies,
  /// and no attention dropout now (the kernels have none).
  bool fused(const torch::Tensor& x) const;
  /// The additive attention bias of every layer for a sequence of `length` T tokens, log σ(M)
  /// (M = mask(), or prior_at(T) with sized priors) plus −∞ on hard-excluded and causal cells,
  /// plus alibi_bias(T) with alibi positions: [L' or 1, H' or 1, T, T], or undefined if there is
  /// none. Computed once per forward pass, and cached per T while it cannot change (M fixed or no
  /// gradient wanted, same versions).
  torch::Tensor attention_bias(int64_t length);
  /// attention_bias without alibi's distances.
  torch::Tensor prior_bias(int64_t length);
  /// attention_bias with sized priors, given excluded_bias(length).
  torch::Tensor sized_bias(int64_t length, const torch::Tensor& excluded);
  /// 0 / −∞ [T, T] for the hard and causal masks together (undefined if neither), cached per T.
  torch::Tensor excluded_bias(int64_t length);
  /// The sized prior of T; InputError naming T and the sizes that have one if there is none.
  const SizedPrior& prior_of(int64_t length) const;

  /// A cached tensor and what it was computed from: each source's storage and version counter.
  struct Cached {
    torch::Tensor value;
    std::vector<std::pair<const void*, int64_t>> key;
  };

  ModelConfig config_;
  torch::nn::Embedding token_embedding_{nullptr};  // token models
  torch::nn::Linear patch_embedding_{nullptr};     // patch models: Linear(F, dim)
  torch::Tensor cls_embedding_;                    // patch models: [dim], randn
  torch::Tensor position_embedding_;               // [N, dim] (ModelConfig::position)
  std::vector<Block> blocks_;
  torch::nn::LayerNorm ln_final_{nullptr};  // only with final_norm
  torch::nn::Linear head_{nullptr};
  torch::Tensor mask_, mask_init_, hard_, causal_;
  bool mask_learnable_ = false;
  std::map<int64_t, SizedPrior> priors_;  // by T; tensors registered as buffers
  torch::Tensor rule_offsets_;            // [L', H', rule_count], learnable sized priors only
  std::map<int64_t, Cached> excluded_cache_, prior_bias_cache_, alibi_cache_;  // by T
  Cached bias_cache_;
  std::map<int64_t, torch::Tensor> alibi_sources_;  // by T: the bias alibi_cache_ adds to
};
TORCH_MODULE(MaskedTransformer);

/// Number of trainable scalars.
int64_t parameter_count(MaskedTransformer& model);

/// Drops every parameter's gradient, as LibTorch ≥ 2's zero_grad does by default: the next
/// backward pass hands each parameter a fresh gradient instead of adding it to a zeroed one (one
/// fill and one addition over every parameter fewer per step; 1.13's zero_grad zeroes).
void clear_gradients(torch::nn::Module& module);

}  // namespace maskprior::runtime
