// Tests of the LibTorch runtime: the masked Transformer, attention, autocast, host threads, the
// initialisations' names and open cells, and the experiments' metrics.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "runtime/attention.h"
#include "runtime/autocast.h"
#include "runtime/experiment.h"
#include "runtime/host.h"
#include "runtime/init.h"
#include "runtime/model.h"
#include "runtime/regression_experiment.h"
#include "tests/parity2_spec.h"

namespace maskprior::runtime {
namespace {

using maskprior::testing::parity2_spec;

// ---------------------------------------------------------------------------------------------
// Model

TEST(ModelTest, OutputShapesFollowTheReadout) {
  torch::manual_seed(0);
  ModelConfig config{.vocab = 5,
                     .seq_len = 7,
                     .dim = 16,
                     .depth = 2,
                     .heads = 2,
                     .head_dim = 8,
                     .mlp = 16,
                     .readout = Readout::kClsRegression};
  MaskedTransformer regression(config);
  auto ids = torch::randint(0, 5, {3, 7}, torch::kLong);
  EXPECT_EQ(regression->forward(ids).sizes(), (std::vector<int64_t>{3}));
  config.readout = Readout::kCausalLm;
  MaskedTransformer lm(config);
  EXPECT_EQ(lm->forward(ids).sizes(), (std::vector<int64_t>{3, 7, 5}));
  EXPECT_EQ(lm->forward(ids.narrow(1, 0, 6)).sizes(), (std::vector<int64_t>{3, 6, 5}));
  EXPECT_THROW(lm->forward(torch::zeros({3, 8}, torch::kLong)), InputError);  // longer than N
  EXPECT_THROW(lm->forward(torch::zeros({3, 0}, torch::kLong)), InputError);
}

TEST(ModelTest, CausalAttentionNeverLooksAhead) {
  torch::manual_seed(0);
  MaskedTransformer lm(ModelConfig{.vocab = 4,
                                   .seq_len = 5,
                                   .dim = 16,
                                   .depth = 1,
                                   .heads = 2,
                                   .head_dim = 8,
                                   .mlp = 16,
                                   .readout = Readout::kCausalLm});
  auto probs = lm->attention_maps(torch::randint(0, 4, {2, 5}, torch::kLong)).at(0);
  EXPECT_TRUE(torch::allclose(probs.sum(-1), torch::ones({2, 2, 5})));
  EXPECT_EQ(
      probs.masked_select(torch::ones({5, 5}, torch::kBool).triu(1)).abs().max().item<float>(),
      0.0f);
}

// Batches of at least 2 · vocab rows project layer 0's Q, K, V once per (token, position) and
// gather them; smaller ones project every row. Both give the same outputs and gradients.
TEST(ModelTest, DistinctInputRowsGiveTheSameOutputsAndGradients) {
  for (const int64_t depth : {1, 2}) {
    for (const auto readout : {Readout::kClsRegression, Readout::kCausalLm}) {
      SCOPED_TRACE(fmt::format("depth {} readout {}", depth, static_cast<int>(readout)));
      torch::manual_seed(depth);
      MaskedTransformer model(ModelConfig{.vocab = 3,
                                          .seq_len = 6,
                                          .dim = 16,
                                          .depth = depth,
                                          .heads = 2,
                                          .head_dim = 8,
                                          .mlp = 16,
                                          .readout = readout});
      model->set_mask(torch::randn({1, 2, 6, 6}), /*learnable=*/true);
      const auto ids = torch::randint(0, 3, {40, 6}, torch::kLong);
      auto loss_of = [&](const torch::Tensor& rows) { return model->forward(rows).pow(2).sum(); };
      const auto params = model->parameters();
      const auto whole = model->forward(ids);
      const auto want = torch::autograd::grad({loss_of(ids)}, params);
      std::vector<torch::Tensor> parts;
      std::vector<torch::Tensor> got(params.size());
      for (int64_t first = 0; first < 40; first += 5) {  // 5 < 2 · vocab rows: every row projected
        const auto chunk = ids.narrow(0, first, 5);
        parts.push_back(model->forward(chunk).detach());
        const auto grads = torch::autograd::grad({loss_of(chunk)}, params);
        for (size_t i = 0; i < params.size(); ++i) {
          got[i] = got[i].defined() ? got[i] + grads[i] : grads[i];
        }
      }
      EXPECT_TRUE(torch::allclose(whole, torch::cat(parts), 1e-5, 1e-5));
      for (size_t i = 0; i < params.size(); ++i) {
        EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-4, 1e-5)) << "parameter " << i;
      }
    }
  }
}

TEST(AutocastTest, MatrixProductsInBfloat16InsideTheGuardOnly) {
  namespace F = torch::nn::functional;
  const auto x = torch::randn({8, 16}), w = torch::randn({4, 16});
  const torch::Device cpu(torch::kCPU);
  {
    const Autocast off(cpu, false);
    EXPECT_FALSE(Autocast::active(cpu));
    EXPECT_EQ(F::linear(x, w).scalar_type(), torch::kFloat);
  }
  {
    const Autocast on(cpu, true);
    EXPECT_TRUE(Autocast::active(cpu));
    EXPECT_EQ(F::linear(x, w).scalar_type(), torch::kBFloat16);
    { const Autocast inner(cpu, true); }
    EXPECT_TRUE(Autocast::active(cpu));  // the outer guard still holds
    EXPECT_EQ(F::linear(x, w).scalar_type(), torch::kBFloat16);
  }
  EXPECT_FALSE(Autocast::active(cpu));
  EXPECT_EQ(F::linear(x, w).scalar_type(), torch::kFloat);
}

// Under bfloat16 autocast the model's CPU paths (fused attention on the projections autocast
// gives, the answer rows alone, the cached pass) run, stay close to float32, and hand float32
// gradients to float32 parameters.
TEST(AutocastTest, ModelRunsUnderBfloat16CloseToFloat32) {
  torch::manual_seed(3);
  const int64_t n = 9;
  MaskedTransformer model(ModelConfig{.vocab = 5,
                                      .seq_len = n,
                                      .dim = 32,
                                      .depth = 2,
                                      .heads = 2,
                                      .head_dim = 16,
                                      .mlp = 64,
                                      .readout = Readout::kCausalLm});
  model->set_mask(torch::randn({1, 2, n, n}), /*learnable=*/true);
  const auto ids = torch::randint(0, 5, {40, n}, torch::kLong);
  const auto want = model->forward(ids).detach();
  auto near = [](const torch::Tensor& got, const torch::Tensor& expected) {
    const auto error = (got.to(torch::kFloat) - expected).norm() / expected.norm();
    return error.item<double>();
  };
  const Autocast bf16(torch::kCPU, true);
  const auto rows = model->forward(ids, {4, 3});
  EXPECT_LT(near(model->forward(ids), want), 0.03);
  EXPECT_LT(near(rows, want.narrow(1, 4, 3)), 0.03);
  (rows.to(torch::kFloat).pow(2).mean()).backward();
  for (const auto& p : model->parameters()) {
    ASSERT_TRUE(p.grad().defined());
    EXPECT_EQ(p.scalar_type(), torch::kFloat);
    EXPECT_EQ(p.grad().scalar_type(), torch::kFloat);
    EXPECT_TRUE(torch::isfinite(p.grad()).all().item<bool>());
  }
  EXPECT_GT(model->mask().grad().abs().sum().item<double>(), 0.0);
  torch::NoGradGuard no_grad;
  MaskedTransformerImpl::KeyValueCache cache;
  EXPECT_LT(near(model->forward_cached(ids, cache, {4, 3}), want.narrow(1, 4, 3)), 0.03);
}

TEST(ModelTest, MaskAndHardMaskShapeAttention) {
  torch::manual_seed(0);
  MaskedTransformer model(ModelConfig{
      .vocab = 3, .seq_len = 3, .dim = 16, .depth = 2, .heads = 2, .head_dim = 8, .mlp = 16});
  // Row 0 open only to key 1; rows 1, 2 open everywhere; the hard mask removes 2 → 1.
  auto m = torch::full({1, 1, 3, 3}, 10.0f);
  m[0][0][0][0] = -30.0f;
  m[0][0][0][2] = -30.0f;
  model->set_mask(m, /*learnable=*/true);
  auto hard = torch::zeros({3, 3}, torch::kBool);
  hard[2][1] = true;
  model->set_hard_mask(hard);
  for (const auto& probs : model->attention_maps(torch::tensor({{2, 0, 1}}, torch::kLong))) {
    EXPECT_GT(probs[0][1][0][1].item<float>(), 0.999f);
    EXPECT_EQ(probs[0][0][2][1].item<float>(), 0.0f);
  }
  EXPECT_TRUE(model->mask().requires_grad());
  EXPECT_THROW(model->set_mask(torch::zeros({3, 1, 3, 3}), true), InputError);
}

TEST(ModelTest, RejectsWrongMaskShapesAndEmptyRows) {
  MaskedTransformer model(ModelConfig{
      .vocab = 3, .seq_len = 3, .dim = 8, .depth = 2, .heads = 2, .head_dim = 4, .mlp = 8});
  try {
    model->set_mask(torch::zeros({3, 1, 3, 3}), true);
    FAIL() << "a 3-layer mask on a 2-layer model was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("depth 2"), std::string::npos) << e.what();
  }
  auto hard = torch::zeros({3, 3}, torch::kBool);
  hard[1] = torch::ones({3}, torch::kBool);
  EXPECT_THROW(model->set_hard_mask(hard), InputError);
}

/// softmax(q kᵀ · scale + bias) v with LibTorch's batched matmuls: q [B, count, H, d], k and v
/// [B, N, H, d], [B, count, H · d] out. What fused_attention must equal.
torch::Tensor reference_attention(const torch::Tensor& q, const torch::Tensor& k,
                                  const torch::Tensor& v, const torch::Tensor& bias, double scale) {
  auto heads = [](const torch::Tensor& t) { return t.transpose(1, 2); };  // [B, H, positions, d]
  auto scores = torch::matmul(heads(q), heads(k).transpose(-2, -1)) * scale;
  if (bias.defined()) scores = scores + bias;
  auto out = torch::matmul(torch::softmax(scores, -1), heads(v));
  return out.transpose(1, 2).reshape({q.size(0), q.size(1), -1});
}

/// The fused operation's output and gradients (inputs, then the bias) against the reference's.
void expect_same_attention(const torch::Tensor& fused, const torch::Tensor& reference,
                           const std::vector<torch::Tensor>& inputs) {
  ASSERT_EQ(fused.sizes(), reference.sizes());
  EXPECT_TRUE(torch::allclose(fused, reference, 1e-5, 1e-5));
  auto upstream = torch::randn(fused.sizes());
  auto got = torch::autograd::grad({fused}, inputs, {upstream});
  auto want = torch::autograd::grad({reference}, inputs, {upstream});
  for (size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(fmt::format("gradient of input {}", i));
    EXPECT_TRUE(torch::allclose(got[i], want[i], 1e-4, 1e-5));
    EXPECT_GT(got[i].abs().sum().item<float>(), 0.0f);
  }
}

TEST(AttentionTest, FusedEqualsTheMatmulPathInValueAndGradient) {
  struct Case {
    int64_t batch, positions, heads, head_dim, bias_heads;  // bias_heads 0: no bias
    int64_t first, count;                                   // the queries
    int threads;
  };
  const int before = torch::get_num_threads();
  for (const auto& c : {Case{3, 7, 2, 16, 0, 0, 7, 1}, Case{3, 7, 2, 12, 1, 0, 7, 1},
                        Case{5, 6, 3, 8, 3, 0, 6, 2}, Case{4, 7, 2, 20, 2, 4, 3, 1},
                        Case{4, 7, 2, 8, 1, 0, 1, 1}, Case{40, 5, 2, 8, 1, 0, 5, 2}}) {
    SCOPED_TRACE(fmt::format("B {} N {} H {} d {} bias heads {} queries {}+{} threads {}", c.batch,
                             c.positions, c.heads, c.head_dim, c.bias_heads, c.first, c.count,
                             c.threads));
    torch::set_num_threads(c.threads);
    torch::manual_seed(c.batch);
    auto qkv = torch::randn({c.batch, c.positions, 3, c.heads, c.head_dim}).requires_grad_();
    torch::Tensor bias;
    if (c.bias_heads > 0) {  // a learnable part and −∞ cells beyond each query row i + 2
      auto excluded = torch::ones({c.positions, c.positions}, torch::kBool).triu(3);
      bias = (torch::randn({c.bias_heads, c.positions, c.positions}) * 2)
                 .masked_fill(excluded, -std::numeric_limits<float>::infinity())
                 .narrow(1, c.first, c.count)
                 .detach()
                 .requires_grad_();
    }
    const double scale = 0.3;
    auto part = [&](int64_t i) { return qkv.select(2, i); };
    auto fused = fused_attention(qkv, bias, scale, c.first, c.count);
    std::vector<torch::Tensor> inputs = {qkv};
    if (bias.defined()) inputs.push_back(bias);
    {
      SCOPED_TRACE("packed q, k, v");
      expect_same_attention(
          fused,
          reference_attention(part(0).narrow(1, c.first, c.count), part(1), part(2), bias, scale),
          inputs);
    }
    {  // the queries apart, as a layer needed at a few positions computes them
      SCOPED_TRACE("q apart from k, v");
      auto q = part(0).narrow(1, c.first, c.count).detach().contiguous().requires_grad_();
      auto kv = qkv.narrow(2, 1, 2).detach().contiguous().requires_grad_();
      std::vector<torch::Tensor> apart = {q, kv};
      if (bias.defined()) apart.push_back(bias);
      expect_same_attention(fused_attention(q, kv, bias, scale),
                            reference_attention(q, kv.select(2, 0), kv.select(2, 1), bias, scale),
                            apart);
    }
    torch::Tensor probs;  // the probabilities, for attention maps, without a graph
    torch::NoGradGuard no_grad;
    auto again = fused_attention(qkv, bias, scale, c.first, c.count, &probs);
    EXPECT_TRUE(torch::equal(again, fused.detach()));
    EXPECT_EQ(probs.sizes(), (std::vector<int64_t>{c.batch, c.heads, c.count, c.positions}));
    EXPECT_TRUE(torch::allclose(probs.sum(-1), torch::ones({c.batch, c.heads, c.count})));
  }
  torch::set_num_threads(before);
}

// ---------------------------------------------------------------------------------------------
// Spec tensors and init names

TEST(HostTest, ThreadCountReachesLibTorchAndItsBlas) {
  // The BLAS's own thread count follows: MKL's in the PyTorch wheel's LibTorch (set by LibTorch),
  // OpenBLAS's where a LibTorch calls OpenBLAS (set by prepare_host).
  const int before = torch::get_num_threads();
  (void)torch::mm(torch::ones({64, 64}), torch::ones({64, 64}));  // the BLAS in use is loaded
  const bool known_blas = at::hasMKL() || !runtime::blas_core().empty();
  for (const int threads : {1, 2}) {
    EXPECT_EQ(runtime::prepare_host(threads), threads);
    EXPECT_EQ(torch::get_num_threads(), threads);
    const int blas = runtime::blas_threads();
    if (known_blas) {
      EXPECT_EQ(blas, threads) << runtime::blas_core();
    } else {
      EXPECT_EQ(blas, 0);
    }
  }
  if (at::hasMKL()) {
    EXPECT_NE(runtime::blas_core().find("Math Kernel Library"), std::string::npos);
  }
  EXPECT_EQ(runtime::prepare_host(0), runtime::all_cores());
  runtime::prepare_host(before);
}

TEST(InitTest, NamesRoundTripAndUnknownNamesAreRefused) {
  for (const auto& name : init_method_names())
    EXPECT_EQ(init_method_name(parse_init_method(name)), name);
  try {
    parse_init_method("maskk");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("qk-svd"), std::string::npos) << e.what();
  }
}

TEST(InitTest, OpenCellsOfASmallSpec) {
  auto spec = parity2_spec(2);                                  // N = 3
  spec.hard = std::vector<uint8_t>{0, 0, 1, 0, 0, 0, 0, 0, 0};  // cls → x[1] hard-excluded
  auto open = open_cells(spec).view({3, 3}).to(torch::kLong);
  auto expected = torch::tensor({{1, 1, 0}, {0, 1, 1}, {0, 1, 1}}, torch::kLong);
  EXPECT_TRUE(torch::equal(open, expected)) << open;
}

// ---------------------------------------------------------------------------------------------
// The architecture's settings (docs/settings.md): each changes the model as documented.

ModelConfig settings_model(Readout readout, bool post_norm, Activation activation) {
  return ModelConfig{.vocab = 3,
                     .seq_len = 6,
                     .dim = 16,
                     .depth = 2,
                     .heads = 2,
                     .head_dim = 8,
                     .mlp = 16,
                     .readout = readout,
                     .post_norm = post_norm,
                     .activation = activation};
}

/// The model's forward pass written out from its modules, as docs/settings.md describes it
/// (evaluation mode: no dropout).
torch::Tensor reference_forward(MaskedTransformer& model, const torch::Tensor& ids) {
  const auto& c = model->config();
  const int64_t batch = ids.size(0), n = ids.size(1);
  auto x = model->token_embedding()(ids) + model->position_embedding();
  auto bias = torch::zeros({n, n});
  if (c.readout == Readout::kCausalLm) {
    bias.masked_fill_(torch::ones({n, n}, torch::kBool).triu(1),
                      -std::numeric_limits<float>::infinity());
  }
  for (int64_t l = 0; l < c.depth; ++l) {
    auto& b = model->blocks()[static_cast<size_t>(l)];
    const auto h = c.post_norm ? x : b->ln_attention(x);
    auto split = [&](torch::nn::Linear& w) {
      return w(h).view({batch, n, c.heads, c.head_dim}).transpose(1, 2);
    };
    // qk_norm: (t − mean) / √(var + 1e-5) · gain + bias over each head's d_head values.
    auto normed = [&](const torch::Tensor& t, torch::nn::LayerNorm& norm) {
      if (!c.qk_norm) return t;
      const auto mean = t.mean(-1, /*keepdim=*/true);
      const auto var = (t - mean).pow(2).mean(-1, /*keepdim=*/true);
      return (t - mean) / torch::sqrt(var + 1e-5) * norm->weight + norm->bias;
    };
    auto scores = torch::matmul(normed(split(b->wq), b->q_norm),
                                normed(split(b->wk), b->k_norm).transpose(-2, -1)) /
                  std::sqrt(static_cast<double>(c.head_dim));
    if (model->has_mask()) {
      scores =
          scores + torch::log_sigmoid(model->mask().select(0, model->mask().size(0) == 1 ? 0 : l));
    }
    const auto mixed = torch::matmul(torch::softmax(scores + bias, -1), split(b->wv))
                           .transpose(1, 2)
                           .reshape({batch, n, -1});
    auto mlp = [&](const torch::Tensor& t) {  // mlp_dropout: none in evaluation mode
      const auto inner = b->fc_in(t);
      return b->fc_out(c.activation == Activation::kRelu ? torch::relu(inner) : torch::gelu(inner));
    };
    if (c.post_norm) {
      const auto y = b->ln_attention(x + b->wo(mixed));
      x = b->ln_mlp(y + mlp(y));
    } else {
      const auto y = x + b->wo(mixed);
      x = y + mlp(b->ln_mlp(y));
    }
  }
  const auto children = model->named_children();
  auto final_norm = [&](const torch::Tensor& t) {  // none without final_norm
    if (!c.final_norm) return t;
    return children["ln_final"]->as<torch::nn::LayerNormImpl>()->forward(t);
  };
  auto& head = *children["head"]->as<torch::nn::LinearImpl>();
  if (c.readout == Readout::kClsRegression)
    return head.forward(final_norm(x.select(1, 0))).squeeze(-1);
  return head.forward(final_norm(x));
}

/// The model's passes (the CPU kernels on large batches, the matmul path on small ones, rows
/// only, cached decoding, one position) against reference_forward, with a random learnable M.
void expect_passes_follow_reference(MaskedTransformer& model) {
  const bool causal = model->config().readout == Readout::kCausalLm;
  model->set_mask(torch::randn({2, 1, 6, 6}), /*learnable=*/true);
  model->eval();
  torch::NoGradGuard no_grad;
  for (const int64_t rows : {int64_t{2}, int64_t{40}}) {  // below and above 2 · vocab
    const auto ids = torch::randint(0, 3, {rows, 6}, torch::kLong);
    const auto expected = reference_forward(model, ids);
    EXPECT_TRUE(torch::allclose(model->forward(ids), expected, 1e-4, 1e-5)) << rows;
    if (!causal) continue;
    EXPECT_TRUE(torch::allclose(model->forward(ids, MaskedTransformerImpl::Rows{3, 2}),
                                expected.narrow(1, 3, 2), 1e-4, 1e-5));
    MaskedTransformerImpl::KeyValueCache cache;
    EXPECT_TRUE(torch::allclose(model->forward_cached(ids, cache, {3, 2}), expected.narrow(1, 3, 2),
                                1e-4, 1e-5));
    MaskedTransformerImpl::KeyValueCache whole;  // every position, then position 4 again
    EXPECT_TRUE(torch::allclose(model->forward_cached(ids, whole), expected, 1e-4, 1e-5));
    const auto step = model->forward_position(ids.select(1, 4), 4, whole);
    EXPECT_TRUE(torch::allclose(step, expected.select(1, 4), 1e-4, 1e-5));
  }
}

// Pre- and post-LN, GELU and ReLU, encoder and decoder: the model's passes (the CPU kernels on
// large batches, the matmul path on small ones, rows only, cached decoding) equal the forward
// pass written out from the modules.
TEST(ModelSettingsTest, NormPlacementAndActivationFollowTheirDefinitions) {
  for (const bool post : {false, true}) {
    for (const auto activation : {Activation::kGelu, Activation::kRelu}) {
      for (const auto readout : {Readout::kClsRegression, Readout::kCausalLm}) {
        SCOPED_TRACE(fmt::format("post {} relu {} causal {}", post, activation == Activation::kRelu,
                                 readout == Readout::kCausalLm));
        torch::manual_seed(3);
        MaskedTransformer model(settings_model(readout, post, activation));
        expect_passes_follow_reference(model);
      }
    }
  }
  // Post-LN is a different model: the same weights give other outputs.
  torch::manual_seed(3);
  MaskedTransformer pre(settings_model(Readout::kClsRegression, false, Activation::kGelu));
  torch::manual_seed(3);
  MaskedTransformer post(settings_model(Readout::kClsRegression, true, Activation::kGelu));
  const auto ids = torch::randint(0, 3, {4, 6}, torch::kLong);
  EXPECT_FALSE(torch::allclose(pre->forward(ids), post->forward(ids)));
}

// qk_norm: each head's queries and keys go through a LayerNorm over d_head (gain and bias per
// layer, shared by the heads) before their product, in every pass; without it there are no such
// parameters. Random gains and biases, so that the norm's affine part is checked too.
TEST(ModelSettingsTest, QkNormNormalisesEachHeadsQueriesAndKeys) {
  for (const auto readout : {Readout::kClsRegression, Readout::kCausalLm}) {
    for (const bool post : {false, true}) {
      SCOPED_TRACE(fmt::format("causal {} post {}", readout == Readout::kCausalLm, post));
      auto config = settings_model(readout, post, Activation::kGelu);
      config.qk_norm = true;
      torch::manual_seed(5);
      MaskedTransformer model(config);
      {
        torch::NoGradGuard no_grad;
        for (auto& block : model->blocks()) {
          for (auto* norm : {&block->q_norm, &block->k_norm}) {
            (*norm)->weight.copy_(torch::rand({config.head_dim}) + 0.5);
            (*norm)->bias.copy_(torch::randn({config.head_dim}) * 0.3);
          }
        }
      }
      expect_passes_follow_reference(model);
      const auto names = model->named_parameters();
      EXPECT_TRUE(names.contains("block1.q_norm.weight") && names.contains("block0.k_norm.bias"));
      // The same weights without the norm give other outputs.
      config.qk_norm = false;
      torch::manual_seed(5);
      MaskedTransformer plain(config);
      EXPECT_FALSE(plain->named_parameters().contains("block0.q_norm.weight"));
      plain->set_mask(model->mask().detach().clone(), /*learnable=*/true);
      const auto ids = torch::randint(0, 3, {4, 6}, torch::kLong);
      torch::NoGradGuard no_grad;
      plain->eval();
      EXPECT_FALSE(torch::allclose(plain->forward(ids), model->forward(ids), 1e-3, 1e-4));
    }
  }
}

// Learned at init std s: a parameter whose values have standard deviation s (the default 1 draws
// the same values as before the setting existed); sinusoidal: the fixed sines and cosines, a
// buffer; none: zeros, a buffer. Neither of the last two is trained.
TEST(ModelSettingsTest, PositionEmbeddings) {
  auto config = settings_model(Readout::kClsRegression, false, Activation::kGelu);
  config.seq_len = 64;
  config.dim = 32;
  auto is_parameter = [](MaskedTransformer& m) {
    return m->named_parameters().contains("position_embedding");
  };
  torch::Tensor unit;  // std 1, the default: the values the model drew before the setting existed
  for (const double std : {1.0, 0.02}) {
    config.pos_init_std = std;
    torch::manual_seed(5);
    MaskedTransformer m(config);
    EXPECT_TRUE(is_parameter(m));
    if (!unit.defined()) unit = m->position_embedding().detach().clone();
    EXPECT_TRUE(torch::allclose(m->position_embedding(), unit * std)) << std;
    EXPECT_NEAR(m->position_embedding().std().item<double>(), std, 0.1 * std);
  }
  config.position = PositionEmbedding::kSinusoidal;
  MaskedTransformer sinusoidal(config);
  EXPECT_FALSE(is_parameter(sinusoidal));
  const auto pe = sinusoidal->position_embedding();
  for (const int64_t p : {0, 1, 7, 63}) {
    for (const int64_t i : {0, 3, 15}) {
      const double angle =
          static_cast<double>(p) / std::pow(10000.0, 2.0 * static_cast<double>(i) / 32.0);
      EXPECT_NEAR(pe[p][2 * i].item<double>(), std::sin(angle), 1e-5) << p << " " << i;
      EXPECT_NEAR(pe[p][2 * i + 1].item<double>(), std::cos(angle), 1e-5) << p << " " << i;
    }
  }
  config.position = PositionEmbedding::kNone;
  MaskedTransformer none(config);
  EXPECT_FALSE(is_parameter(none));
  EXPECT_EQ(none->position_embedding().abs().max().item<float>(), 0.0f);
  EXPECT_EQ(parse_position_embedding("sinusoidal"), PositionEmbedding::kSinusoidal);
  EXPECT_EQ(parse_position_embedding("rope"), PositionEmbedding::kRope);
  EXPECT_THROW(parse_position_embedding("abacus"), InputError);
  config.pos_init_std = -1;
  EXPECT_THROW(MaskedTransformer{config}, InputError);
}

// Dropout acts in training mode only: evaluation gives the model without it, training passes
// differ from it and from each other, and each kind alone does so (on the CPU kernels' batch
// sizes too: attention dropout takes the matmul path).
TEST(ModelSettingsTest, DropoutActsWhileTrainingOnly) {
  for (double ModelConfig::*kind :
       {&ModelConfig::attn_dropout, &ModelConfig::resid_dropout, &ModelConfig::mlp_dropout}) {
    const bool attention = kind == &ModelConfig::attn_dropout;
    for (const auto readout : {Readout::kClsRegression, Readout::kCausalLm}) {
      auto config = settings_model(readout, false, Activation::kGelu);
      config.*kind = 0.5;
      torch::manual_seed(7);
      MaskedTransformer model(config);
      const auto ids = torch::randint(0, 3, {40, 6}, torch::kLong);
      model->eval();
      const auto evaluated = model->forward(ids);
      EXPECT_TRUE(torch::allclose(evaluated, reference_forward(model, ids), 1e-4, 1e-5));
      model->train();
      const auto a = model->forward(ids), b = model->forward(ids);
      EXPECT_FALSE(torch::allclose(a, evaluated)) << attention;
      EXPECT_FALSE(torch::allclose(a, b)) << attention;
      if (readout == Readout::kCausalLm) {
        EXPECT_FALSE(torch::allclose(model->forward(ids, MaskedTransformerImpl::Rows{3, 2}),
                                     evaluated.narrow(1, 3, 2)));
      }
    }
  }
  auto config = settings_model(Readout::kClsRegression, false, Activation::kGelu);
  config.attn_dropout = 1.0;
  EXPECT_THROW(MaskedTransformer{config}, InputError);
  config.attn_dropout = 0;
  config.mlp_dropout = -0.1;
  EXPECT_THROW(MaskedTransformer{config}, InputError);
}

// qkv_bias and final_norm: every pass (the CPU kernels' one projection GEMM, rows only, cached
// decoding, one position) follows the forward pass written out from the modules, with random
// biases; the biases are parameters and the final norm is gone.
TEST(FaithfulLayerTest, QkvBiasAndNoFinalNormFollowTheirDefinitions) {
  for (const auto readout : {Readout::kClsRegression, Readout::kCausalLm}) {
    auto config = settings_model(readout, true, Activation::kRelu);
    config.qkv_bias = true;
    config.final_norm = false;
    torch::manual_seed(11);
    MaskedTransformer model(config);
    {
      torch::NoGradGuard no_grad;
      for (auto& block : model->blocks()) {
        for (auto* w : {&block->wq, &block->wk, &block->wv}) (*w)->bias.normal_(0, 0.5);
      }
    }
    expect_passes_follow_reference(model);
    const auto names = model->named_parameters();
    EXPECT_TRUE(names.contains("block1.wk.bias"));
    EXPECT_FALSE(names.contains("ln_final.weight"));
  }
}

// attn_init torch: nn.MultiheadAttention's init, xavier-uniform over the packed [3 · inner, dim]
// in-projection (bound √(6 / (dim + 3 · inner)), wider than Linear's 1/√dim here) and zero
// biases; the default keeps LibTorch's Linear init.
TEST(FaithfulLayerTest, TorchAttentionInitIsMultiheadAttentions) {
  auto config = settings_model(Readout::kClsRegression, true, Activation::kRelu);
  config.dim = 64;
  config.heads = 4;
  config.head_dim = 16;
  config.qkv_bias = true;
  const double xavier = std::sqrt(6.0 / (64 + 3 * 64)), linear = 1.0 / std::sqrt(64.0);
  for (const auto init : {AttentionInit::kDefault, AttentionInit::kTorch}) {
    config.attn_init = init;
    torch::manual_seed(2);
    MaskedTransformer model(config);
    const double bound = init == AttentionInit::kTorch ? xavier : linear;
    for (auto& block : model->blocks()) {
      for (auto* w : {&block->wq, &block->wk, &block->wv}) {
        const double largest = (*w)->weight.abs().max().item<double>();
        EXPECT_LE(largest, bound);
        EXPECT_GT(largest, 0.95 * bound);  // 4,096 draws: the largest is near the bound
        EXPECT_EQ((*w)->bias.abs().max().item<double>() == 0, init == AttentionInit::kTorch);
      }
      EXPECT_EQ(block->wo->bias.abs().max().item<double>() == 0, init == AttentionInit::kTorch);
    }
  }
  EXPECT_EQ(parse_attn_init("torch"), AttentionInit::kTorch);
  EXPECT_THROW(parse_attn_init("xavier"), InputError);
  EXPECT_THROW(parse_yes_no("qkv_bias", "true"), InputError);
}

// The faithful layer: a one-layer model with nn.TransformerEncoderLayer's settings (post-LN,
// ReLU, biases on Q, K, V, dropout 0.1 in three places, no final norm) given the weights of
// LibTorch's own torch::nn::TransformerEncoderLayer computes what it computes, in evaluation
// mode, as an encoder and as a causal decoder (the layer given the causal mask).
TEST(FaithfulLayerTest, MatchesLibTorchsTransformerEncoderLayer) {
  const int64_t dim = 16, heads = 2, ffn = 40, n = 6;
  for (const auto readout : {Readout::kClsRegression, Readout::kCausalLm}) {
    SCOPED_TRACE(readout == Readout::kCausalLm ? "decoder" : "encoder");
    torch::manual_seed(4);
    torch::nn::TransformerEncoderLayer layer(
        torch::nn::TransformerEncoderLayerOptions(dim, heads).dim_feedforward(ffn).dropout(0.1));
    ModelConfig config{.vocab = 5,
                       .seq_len = n,
                       .dim = dim,
                       .depth = 1,
                       .heads = heads,
                       .head_dim = dim / heads,
                       .mlp = ffn,
                       .readout = readout,
                       .position = PositionEmbedding::kNone,
                       .post_norm = true,
                       .attn_dropout = 0.1,
                       .resid_dropout = 0.1,
                       .activation = Activation::kRelu,
                       .mlp_dropout = 0.1,
                       .qkv_bias = true,
                       .attn_init = AttentionInit::kTorch,
                       .final_norm = false};
    MaskedTransformer model(config);
    auto& block = model->blocks()[0];
    {
      torch::NoGradGuard no_grad;
      const auto in_weight = layer->self_attn->in_proj_weight.chunk(3);
      const auto in_bias = layer->self_attn->in_proj_bias.chunk(3);
      const std::array<torch::nn::Linear*, 3> targets{&block->wq, &block->wk, &block->wv};
      for (size_t i = 0; i < 3; ++i) {
        (*targets[i])->weight.copy_(in_weight[i]);
        (*targets[i])->bias.copy_(in_bias[i] + 0.1 * torch::randn({dim}));  // not only zeros
        layer->self_attn->in_proj_bias.narrow(0, static_cast<int64_t>(i) * dim, dim)
            .copy_((*targets[i])->bias);
      }
      block->wo->weight.copy_(layer->self_attn->out_proj->weight);
      layer->self_attn->out_proj->bias.normal_(0, 0.1);
      block->wo->bias.copy_(layer->self_attn->out_proj->bias);
      block->fc_in->weight.copy_(layer->linear1->weight);
      block->fc_in->bias.copy_(layer->linear1->bias);
      block->fc_out->weight.copy_(layer->linear2->weight);
      block->fc_out->bias.copy_(layer->linear2->bias);
      for (auto [ours, theirs] : {std::pair{&block->ln_attention, &layer->norm1},
                                  std::pair{&block->ln_mlp, &layer->norm2}}) {
        (*theirs)->weight.normal_(1, 0.2);
        (*theirs)->bias.normal_(0, 0.2);
        (*ours)->weight.copy_((*theirs)->weight);
        (*ours)->bias.copy_((*theirs)->bias);
      }
    }
    model->eval();
    layer->eval();
    torch::NoGradGuard no_grad;
    const auto ids = torch::randint(0, 5, {7, n}, torch::kLong);
    const auto embedded = model->token_embedding()(ids).transpose(0, 1);  // [N, B, dim]
    const bool causal = readout == Readout::kCausalLm;
    const auto src_mask =
        causal ? torch::full({n, n}, -std::numeric_limits<float>::infinity()).triu(/*diagonal=*/1)
               : torch::Tensor();
    const auto out = layer(embedded, src_mask).transpose(0, 1);  // [B, N, dim]
    const auto params = model->named_parameters();
    auto head = [&](const torch::Tensor& x) {
      return torch::nn::functional::linear(x, params["head.weight"], params["head.bias"]);
    };
    const auto expected = causal ? head(out) : head(out.select(1, 0)).squeeze(-1);
    EXPECT_TRUE(torch::allclose(model->forward(ids), expected, 1e-4, 1e-5));
    if (causal) {
      MaskedTransformerImpl::KeyValueCache cache;
      EXPECT_TRUE(torch::allclose(model->forward_cached(ids, cache), expected, 1e-4, 1e-5));
    }
  }
}

// Mask sharing: M spread to one per layer or one per layer and head, each a copy of the spec's
// M for its place, learned apart (their gradients differ); a spec's own per-layer M is kept.
TEST(ModelSettingsTest, MaskSharingGivesEachLayerAndHeadItsOwnM) {
  const auto m = torch::randn({1, 1, 6, 6});
  EXPECT_TRUE(torch::equal(shared_mask(m, MaskSharing::kSpec, 2, 2), m));
  const auto per_layer = shared_mask(m, MaskSharing::kLayer, 2, 2);
  ASSERT_EQ(per_layer.sizes(), (std::vector<int64_t>{2, 1, 6, 6}));
  const auto per_head = shared_mask(m, MaskSharing::kHead, 2, 2);
  ASSERT_EQ(per_head.sizes(), (std::vector<int64_t>{2, 2, 6, 6}));
  for (int64_t l = 0; l < 2; ++l) {
    EXPECT_TRUE(torch::equal(per_layer[l][0], m[0][0]));
    for (int64_t h = 0; h < 2; ++h) EXPECT_TRUE(torch::equal(per_head[l][h], m[0][0]));
  }
  const auto spec_layers = torch::randn({2, 1, 6, 6});
  const auto kept = shared_mask(spec_layers, MaskSharing::kHead, 2, 2);
  ASSERT_EQ(kept.sizes(), (std::vector<int64_t>{2, 2, 6, 6}));
  EXPECT_TRUE(torch::equal(kept[1][1], spec_layers[1][0]));
  EXPECT_FALSE(torch::equal(kept[0][1], kept[1][1]));
  EXPECT_EQ(parse_mask_sharing("head"), MaskSharing::kHead);
  EXPECT_THROW(parse_mask_sharing("model"), InputError);

  // Through apply_init, as a run installs it: one learnable M per layer and head.
  torch::manual_seed(1);
  MaskedTransformer model(settings_model(Readout::kClsRegression, false, Activation::kGelu));
  auto spec = parity2_spec(5);  // N = 6
  InitOptions options;
  options.mask_sharing = MaskSharing::kHead;
  apply_init(model, InitMethod::kMask, &spec, options);
  ASSERT_EQ(model->mask().sizes(), (std::vector<int64_t>{2, 2, 6, 6}));
  model->forward(torch::randint(0, 3, {8, 6}, torch::kLong)).pow(2).sum().backward();
  const auto grad = model->mask().grad();
  EXPECT_GT((grad[0][0] - grad[1][0]).abs().max().item<double>(), 0.0);
  EXPECT_GT((grad[0][0] - grad[0][1]).abs().max().item<double>(), 0.0);
}

TEST(ExperimentTest, RoundingMarginIsTheSignedDistanceToTheRoundingBoundary) {
  // Targets ±1: the boundary is 0. threesym's values: cells of 0.75 are [−1.5, 1.0].
  const auto binary = torch::tensor({-1.0, 1.0});
  const auto m = rounding_margin(torch::tensor({-3.0, 0.25, 2.0, -0.5}),
                                 torch::tensor({1.0, 1.0, 1.0, -1.0}), binary);
  EXPECT_TRUE(torch::allclose(m, torch::tensor({-3.0, 0.25, 2.0, 0.5}, torch::kDouble)));
  const auto values = torch::tensor({-3.75, 0.75, 1.25, 1.75});
  const auto t =
      rounding_margin(torch::tensor({-0.75, 0.9, 1.1}), torch::tensor({0.75, 0.75, 1.25}), values);
  EXPECT_TRUE(torch::allclose(t, torch::tensor({0.75, 0.1, 0.1}, torch::kDouble))) << t;
}

}  // namespace
}  // namespace maskprior::runtime
