// Tests of the masked Transformer at sequence lengths below its longest (issue #48): any length
// T ≤ N through every entry point, and priors per size (set_sized_priors).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "runtime/model.h"

namespace maskprior::runtime {
namespace {

using Rows = MaskedTransformerImpl::Rows;
using KeyValueCache = MaskedTransformerImpl::KeyValueCache;

constexpr int64_t kVocab = 5, kLongest = 8;

ModelConfig tiny_config(Readout readout, PositionEmbedding position) {
  return ModelConfig{.vocab = kVocab,
                     .seq_len = kLongest,
                     .dim = 16,
                     .depth = 2,
                     .heads = 2,
                     .head_dim = 8,
                     .mlp = 16,
                     .readout = readout,
                     .position = position};
}

/// The message of the InputError that `f` throws ("" if it throws none).
template <typename F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// Copies `from`'s parameters and buffers into `to`'s, each cut to `to`'s shape (a model of
/// fewer positions gets the first rows of the position embedding).
void copy_weights(MaskedTransformer& from, MaskedTransformer& to) {
  torch::NoGradGuard no_grad;
  auto source = from->named_parameters();
  for (auto& item : to->named_parameters()) {
    auto value = source[item.key()];
    for (int64_t d = 0; d < value.dim(); ++d) value = value.narrow(d, 0, item.value().size(d));
    item.value().copy_(value);
  }
}

const std::vector<PositionEmbedding> kPositions = {
    PositionEmbedding::kLearned, PositionEmbedding::kSinusoidal, PositionEmbedding::kRope,
    PositionEmbedding::kAlibi};

std::string position_name(PositionEmbedding p) {
  switch (p) {
    case PositionEmbedding::kLearned:
      return "learned";
    case PositionEmbedding::kSinusoidal:
      return "sinusoidal";
    case PositionEmbedding::kRope:
      return "rope";
    case PositionEmbedding::kAlibi:
      return "alibi";
    case PositionEmbedding::kNone:
      break;
  }
  return "none";
}

// A causal decoder on the first T tokens computes what it computes on all N at those positions,
// through every entry point, on small batches (the general path) and large ones (the CPU
// kernels and the distinct-input shortcut).
TEST(AnyLength, CausalDecoderOnAPrefixEqualsTheFullPassThere) {
  for (const auto position : kPositions) {
    SCOPED_TRACE(position_name(position));
    torch::manual_seed(1);
    MaskedTransformer model(tiny_config(Readout::kCausalLm, position));
    model->eval();
    for (const int64_t batch : {int64_t{3}, int64_t{4 * kVocab}}) {
      const auto ids = torch::randint(0, kVocab, {batch, kLongest}, torch::kLong);
      const auto full = model->forward(ids);
      const auto maps = model->attention_maps(ids);
      for (const int64_t t : {int64_t{1}, int64_t{5}, kLongest}) {
        SCOPED_TRACE(fmt::format("batch {} T {}", batch, t));
        const auto head = ids.narrow(1, 0, t);
        const auto want = full.narrow(1, 0, t);
        EXPECT_TRUE(torch::allclose(model->forward(head), want, 1e-5, 1e-5));
        EXPECT_TRUE(torch::allclose(model->forward(head, Rows{t - 1, 1}), want.narrow(1, t - 1, 1),
                                    1e-5, 1e-5));
        KeyValueCache cache;
        EXPECT_TRUE(torch::allclose(model->forward_cached(head, cache), want, 1e-5, 1e-5));
        EXPECT_EQ(cache.length, t);
        EXPECT_EQ(cache.keys[0].size(2), t);
        // One more step at the last position, from the cache of the pass.
        EXPECT_TRUE(torch::allclose(model->forward_position(head.select(1, t - 1), t - 1, cache),
                                    want.select(1, t - 1), 1e-5, 1e-5));
        KeyValueCache rows_cache;
        EXPECT_TRUE(
            torch::allclose(model->forward_cached(head, rows_cache, Rows{0, t}), want, 1e-5, 1e-5));
        EXPECT_EQ(rows_cache.length, t);
        const auto head_maps = model->attention_maps(head);
        for (size_t l = 0; l < maps.size(); ++l) {
          EXPECT_TRUE(
              torch::allclose(head_maps[l], maps[l].narrow(2, 0, t).narrow(3, 0, t), 1e-5, 1e-6));
        }
        EXPECT_TRUE(torch::allclose(model->attention_input(head),
                                    model->attention_input(ids).narrow(1, 0, t), 1e-6, 1e-6));
        EXPECT_THROW(model->forward(head, Rows{t - 1, 2}), InputError);  // past T
      }
    }
  }
}

// Any readout: a model of N positions on T tokens is the model of T positions with the same
// weights (the position embedding's first T rows), in value and gradient.
TEST(AnyLength, ShortSequenceIsTheShorterModel) {
  for (const auto readout : {Readout::kClsRegression, Readout::kCausalLm}) {
    for (const auto position : kPositions) {
      SCOPED_TRACE(
          fmt::format("{} causal {}", position_name(position), readout == Readout::kCausalLm));
      torch::manual_seed(2);
      MaskedTransformer longest(tiny_config(readout, position));
      auto short_config = tiny_config(readout, position);
      short_config.seq_len = 5;
      MaskedTransformer shorter(short_config);
      copy_weights(longest, shorter);
      for (const int64_t batch : {int64_t{3}, int64_t{4 * kVocab}}) {
        const auto ids = torch::randint(0, kVocab, {batch, 5}, torch::kLong);
        const auto got = longest->forward(ids), want = shorter->forward(ids);
        EXPECT_TRUE(torch::allclose(got, want, 1e-5, 1e-6)) << batch;
        const auto wq = longest->blocks()[0]->wq->weight,
                   short_wq = shorter->blocks()[0]->wq->weight;
        const auto grad = torch::autograd::grad({got.square().sum()}, {wq})[0];
        const auto short_grad = torch::autograd::grad({want.square().sum()}, {short_wq})[0];
        EXPECT_TRUE(torch::allclose(grad, short_grad, 1e-4, 1e-6)) << batch;
      }
    }
  }
}

/// Layer 0's attention probabilities [H, T, T] of a one-layer pre-LN encoder on `ids` [1, T],
/// computed by hand in double from its weights: x = LN(token embedding), q = x Wqᵀ, k = x Wkᵀ per
/// head, with rope each coordinate pair (i, i + d/2) of the query at p and the key at j turned
/// by p·θ_i and j·θ_i (θ_i = 10000^(−2i/d)), with alibi the score plus −2^(−8h/H)·|p − j|.
std::vector<std::vector<std::vector<double>>> hand_attention(MaskedTransformer& model,
                                                             const torch::Tensor& ids,
                                                             PositionEmbedding position) {
  const auto& c = model->config();
  const int64_t t = ids.size(1), d = c.head_dim, half = d / 2;
  auto& block = model->blocks()[0];
  const auto x = block->ln_attention(model->token_embedding()(ids)).squeeze(0).to(torch::kDouble);
  const auto q = torch::matmul(x, block->wq->weight.to(torch::kDouble).t());  // [T, H·d]
  const auto k = torch::matmul(x, block->wk->weight.to(torch::kDouble).t());
  auto turned = [&](const torch::Tensor& v, int64_t p, int64_t h) {
    std::vector<double> out(static_cast<size_t>(d));
    for (int64_t i = 0; i < d; ++i) out[static_cast<size_t>(i)] = v[p][h * d + i].item<double>();
    if (position != PositionEmbedding::kRope) return out;
    for (int64_t i = 0; i < half; ++i) {
      const double angle =
          static_cast<double>(p) *
          std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(d));
      const double a = out[static_cast<size_t>(i)], b = out[static_cast<size_t>(i + half)];
      out[static_cast<size_t>(i)] = a * std::cos(angle) - b * std::sin(angle);
      out[static_cast<size_t>(i + half)] = b * std::cos(angle) + a * std::sin(angle);
    }
    return out;
  };
  std::vector<std::vector<std::vector<double>>> probs(static_cast<size_t>(c.heads));
  for (int64_t h = 0; h < c.heads; ++h) {
    const double slope =
        std::pow(2.0, -8.0 * static_cast<double>(h + 1) / static_cast<double>(c.heads));
    for (int64_t p = 0; p < t; ++p) {
      const auto qp = turned(q, p, h);
      std::vector<double> row;
      double total = 0;
      for (int64_t j = 0; j < t; ++j) {
        const auto kj = turned(k, j, h);
        double score = 0;
        for (int64_t i = 0; i < d; ++i) score += qp[size_t(i)] * kj[size_t(i)];
        score /= std::sqrt(static_cast<double>(d));
        if (position == PositionEmbedding::kAlibi)
          score -= slope * std::abs(static_cast<double>(p - j));
        row.push_back(std::exp(score));
        total += row.back();
      }
      for (auto& v : row) v /= total;
      probs[size_t(h)].push_back(row);
    }
  }
  return probs;
}

// rope and alibi against the formulas of docs/settings.md, computed by hand on a tiny model; a
// query/key rotation that depends on the offset only gives a translation-invariant pattern.
TEST(Positions, RopeAndAlibiMatchAHandComputation) {
  for (const auto position : {PositionEmbedding::kRope, PositionEmbedding::kAlibi}) {
    SCOPED_TRACE(position_name(position));
    torch::manual_seed(11);
    auto config = tiny_config(Readout::kClsRegression, position);
    config.depth = 1;
    config.head_dim = 4;
    MaskedTransformer model(config);
    model->eval();
    EXPECT_FALSE(model->named_parameters().contains("position_embedding"));
    EXPECT_EQ(model->position_embedding().abs().max().item<float>(), 0.0f);
    const auto ids = torch::randint(0, kVocab, {1, 6}, torch::kLong);
    const auto maps = model->attention_maps(ids)[0].squeeze(0).to(torch::kDouble);  // [H, T, T]
    torch::NoGradGuard no_grad;
    const auto want = hand_attention(model, ids, position);
    for (int64_t h = 0; h < config.heads; ++h) {
      for (int64_t p = 0; p < 6; ++p) {
        for (int64_t j = 0; j < 6; ++j) {
          EXPECT_NEAR(maps[h][p][j].item<double>(), want[size_t(h)][size_t(p)][size_t(j)], 1e-5)
              << h << " " << p << " " << j;
        }
      }
    }
  }
  // Odd head_dim has no coordinate pairs to turn.
  auto odd = tiny_config(Readout::kCausalLm, PositionEmbedding::kRope);
  odd.head_dim = 3;
  EXPECT_NE(input_error([&] { MaskedTransformer m(odd); }).find("head_dim must be even"),
            std::string::npos);
  EXPECT_NE(input_error([] { parse_position_embedding("abacus"); }).find("rope, alibi"),
            std::string::npos);
}

// A mask set for N tokens (set_mask, set_hard_mask) has no cells for another length.
TEST(AnyLength, PerCellMaskOfNTokensRefusesOtherLengths) {
  torch::manual_seed(3);
  MaskedTransformer masked(tiny_config(Readout::kCausalLm, PositionEmbedding::kLearned));
  masked->set_mask(torch::randn({1, 2, kLongest, kLongest}), /*learnable=*/false);
  const auto ids = torch::randint(0, kVocab, {2, kLongest}, torch::kLong);
  EXPECT_EQ(masked->forward(ids).size(1), kLongest);
  const auto head = ids.narrow(1, 0, 5);
  EXPECT_EQ(input_error([&] { masked->forward(head); }),
            "[model] a sequence of 5 tokens, but the mask was set for 8 tokens; a model that runs "
            "other lengths takes priors per size (set_sized_priors)");
  KeyValueCache cache;
  EXPECT_THROW(masked->forward_cached(head, cache), InputError);
  EXPECT_THROW(masked->forward_cached(head, cache, Rows{0, 2}), InputError);
  EXPECT_THROW(masked->forward(head, Rows{0, 2}), InputError);
  EXPECT_THROW(masked->attention_maps(head), InputError);
  EXPECT_THROW(masked->attention_input(head), InputError);

  MaskedTransformer hard(tiny_config(Readout::kClsRegression, PositionEmbedding::kLearned));
  hard->set_hard_mask(torch::eye(kLongest).logical_not().triu(2));
  EXPECT_NE(input_error([&] { hard->forward(head); }).find("the hard mask was set for 8 tokens"),
            std::string::npos);
  EXPECT_EQ(input_error([&] {
              hard->forward(torch::zeros({2, 9}, torch::kLong));
            }),
            "[model] expected token ids [B, T] with 1 <= T <= 8, got [2, 9]");
}

// ---------------------------------------------------------------------------------------------
// Priors per size

constexpr int64_t kRules = 4;

/// A prior of size t for a model of 2 heads: random values [1, 2, t, t], rules in [0, kRules)
/// (rule 3 at size 8 only), and with `hard`, a hard mask that excludes the key 1 of rows ≥ 2.
SizedPrior random_prior(int64_t t, bool hard) {
  SizedPrior prior;
  prior.values = torch::randn({1, 2, t, t});
  prior.rules = torch::randint(0, t == kLongest ? kRules : kRules - 1, {1, 2, t, t}, torch::kLong);
  if (hard) {
    prior.hard = torch::zeros({t, t}, torch::kBool);
    prior.hard.narrow(0, 2, t - 2).select(1, 1).fill_(true);
  }
  return prior;
}

/// The model of `length` positions with `from`'s weights and the per-cell mask `mask` (and
/// `hard`): what `from` with sized priors must compute at that length.
MaskedTransformer reference_model(MaskedTransformer& from, int64_t length,
                                  const torch::Tensor& mask, const torch::Tensor& hard) {
  auto config = from->config();
  config.seq_len = length;
  MaskedTransformer model(config);
  copy_weights(from, model);
  if (mask.defined()) model->set_mask(mask.detach(), /*learnable=*/true);
  if (hard.defined()) model->set_hard_mask(hard);
  return model;
}

struct SizedPriorsTest : ::testing::TestWithParam<Readout> {
  void SetUp() override {
    torch::manual_seed(4);
    model = MaskedTransformer(tiny_config(GetParam(), PositionEmbedding::kLearned));
    priors = {{5, random_prior(5, /*hard=*/false)}, {kLongest, random_prior(kLongest, true)}};
    model->set_sized_priors(priors, kRules, /*learnable=*/true);
    torch::NoGradGuard no_grad;
    model->rule_offsets().copy_(torch::randn({1, 2, kRules}));  // as after some training
  }
  MaskedTransformer model{nullptr};
  std::map<int64_t, SizedPrior> priors;
};

// At each size the model computes what the model of that length with M_T as its per-cell mask
// computes (the CPU kernels and the general path), and its bias is log σ(M_T).
TEST_P(SizedPriorsTest, EachSizeUsesItsPrior) {
  EXPECT_EQ(model->prior_sizes(), (std::vector<int64_t>{5, kLongest}));
  EXPECT_TRUE(model->has_sized_priors());
  for (const int64_t t : {int64_t{5}, kLongest}) {
    const auto& prior = priors.at(t);
    const auto offsets = model->rule_offsets().detach();
    auto expected_m = prior.values.clone();
    for (int64_t h = 0; h < 2; ++h) {
      for (int64_t i = 0; i < t; ++i) {
        for (int64_t j = 0; j < t; ++j) {
          expected_m[0][h][i][j] += offsets[0][h][prior.rules[0][h][i][j].item<int64_t>()];
        }
      }
    }
    const auto m = model->prior_at(t);
    EXPECT_TRUE(torch::allclose(m, expected_m, 1e-6, 1e-6)) << t;
    EXPECT_TRUE(m.requires_grad());
    auto reference = reference_model(model, t, m, prior.hard);
    for (const int64_t batch : {int64_t{3}, int64_t{4 * kVocab}}) {
      SCOPED_TRACE(fmt::format("T {} batch {}", t, batch));
      const auto ids = torch::randint(0, kVocab, {batch, t}, torch::kLong);
      EXPECT_TRUE(torch::allclose(model->forward(ids), reference->forward(ids), 1e-5, 1e-6));
      torch::NoGradGuard no_grad;  // the cached bias
      EXPECT_TRUE(torch::allclose(model->forward(ids), reference->forward(ids), 1e-5, 1e-6));
    }
  }
  const std::string want = "[model] no prior for sequences of 6 tokens: the priors have sizes 5, 8";
  EXPECT_EQ(input_error([&] { model->forward(torch::zeros({2, 6}, torch::kLong)); }), want);
  EXPECT_EQ(input_error([&] { model->prior_at(6); }), want);
}

// The rule offsets' gradient is the per-cell mask's summed over the cells of each rule, at
// every size; an optimizer step moves M the same way per rule at both sizes.
TEST_P(SizedPriorsTest, RuleOffsetsLearnOneLogitPerRule) {
  const auto ids = torch::randint(0, kVocab, {3, 5}, torch::kLong);
  auto reference = reference_model(model, 5, model->prior_at(5), {});
  model->forward(ids).square().sum().backward();
  reference->forward(ids).square().sum().backward();
  const auto cell_grad = reference->mask().grad().view({1, 2, 25});
  const auto want =
      torch::zeros({1, 2, kRules}).scatter_add(2, priors.at(5).rules.view({1, 2, 25}), cell_grad);
  const auto got = model->rule_offsets().grad();
  ASSERT_TRUE(got.defined());
  EXPECT_TRUE(torch::allclose(got, want, 1e-4, 1e-6)) << got << want;
  EXPECT_GT(got.abs().sum().item<double>(), 0.0);
  EXPECT_EQ(got.select(2, 3).abs().max().item<float>(), 0.0f);  // rule 3: no cell at size 5

  // The trainer's optimizer (SGD writes through Tensor::data(), which no version counter sees).
  torch::NoGradGuard no_grad;
  const auto before5 = model->prior_at(5).clone(), before8 = model->prior_at(kLongest).clone();
  const auto offsets_before = model->rule_offsets().clone();
  const auto long_ids = torch::randint(0, kVocab, {3, kLongest}, torch::kLong);
  const auto out_before = model->forward(long_ids);  // caches the fixed bias of size 8
  torch::optim::Adam adam({model->rule_offsets()}, torch::optim::AdamOptions(0.1));
  adam.step();
  const auto delta = model->rule_offsets() - offsets_before;
  EXPECT_GT(delta.narrow(2, 0, 3).abs().min().item<float>(), 0.05f);  // rules seen at size 5
  EXPECT_EQ(delta.select(2, 3).abs().max().item<float>(), 0.0f);
  for (const int64_t t : {int64_t{5}, kLongest}) {
    const auto moved = model->prior_at(t) - (t == 5 ? before5 : before8);
    const auto per_rule =
        delta.gather(2, priors.at(t).rules.view({1, 2, t * t})).view({1, 2, t, t});
    EXPECT_TRUE(torch::allclose(moved, per_rule, 1e-5, 1e-6)) << t;
  }
  // The size-8 bias is computed again after the step.
  auto after =
      reference_model(model, kLongest, model->prior_at(kLongest), priors.at(kLongest).hard);
  const auto out_after = model->forward(long_ids);
  EXPECT_FALSE(torch::allclose(out_after, out_before));
  EXPECT_TRUE(torch::allclose(out_after, after->forward(long_ids), 1e-5, 1e-6));
}

// Cached decoding at T < N reads the prior of T: forward_cached, forward_position (also from
// a cache of the first positions only) and forward(ids, rows) equal the full pass.
struct SizedPriorsDecoderTest : SizedPriorsTest {};

TEST_P(SizedPriorsDecoderTest, CachedDecodingAtAShorterSize) {
  torch::NoGradGuard no_grad;
  for (const int64_t batch : {int64_t{3}, int64_t{4 * kVocab}}) {
    SCOPED_TRACE(batch);
    const auto ids = torch::randint(0, kVocab, {batch, 5}, torch::kLong);
    const auto full = model->forward(ids);
    KeyValueCache cache;
    EXPECT_TRUE(torch::allclose(model->forward_cached(ids, cache), full, 1e-5, 1e-5));
    for (int64_t p = 0; p < 5; ++p) {
      EXPECT_TRUE(torch::allclose(model->forward_position(ids.select(1, p), p, cache),
                                  full.select(1, p), 1e-5, 1e-5))
          << p;
    }
    KeyValueCache first_rows;  // positions [0, 3) of the sequence of 5
    EXPECT_TRUE(torch::allclose(model->forward_cached(ids, first_rows, Rows{1, 2}),
                                full.narrow(1, 1, 2), 1e-5, 1e-5));
    EXPECT_EQ(first_rows.keys[0].size(2), 3);
    EXPECT_TRUE(torch::allclose(model->forward_position(ids.select(1, 2), 2, first_rows),
                                full.select(1, 2), 1e-5, 1e-5));
    EXPECT_TRUE(torch::allclose(model->forward(ids, Rows{3, 2}), full.narrow(1, 3, 2), 1e-5, 1e-5));
    first_rows.length = 0;  // a cache of 3 positions, by hand: size 3 has no prior
    EXPECT_THROW(model->forward_position(ids.select(1, 2), 2, first_rows), InputError);
  }
}

INSTANTIATE_TEST_SUITE_P(Readouts, SizedPriorsTest,
                         ::testing::Values(Readout::kCausalLm, Readout::kClsRegression));
INSTANTIATE_TEST_SUITE_P(Decoder, SizedPriorsDecoderTest, ::testing::Values(Readout::kCausalLm));

// Fixed priors: M_T = values_T, no parameter; a hard-only size has no M and uses its hard mask.
TEST(SizedPriors, FixedAndHardOnlySizes) {
  torch::manual_seed(5);
  MaskedTransformer model(tiny_config(Readout::kCausalLm, PositionEmbedding::kSinusoidal));
  const int64_t params = parameter_count(model);
  auto hard_only = random_prior(6, /*hard=*/true);
  hard_only.values = torch::Tensor();
  hard_only.rules = torch::Tensor();
  const auto sized = random_prior(kLongest, /*hard=*/false);
  model->set_sized_priors({{6, hard_only}, {kLongest, sized}}, /*rule_count=*/0,
                          /*learnable=*/false);
  EXPECT_EQ(parameter_count(model), params);
  EXPECT_FALSE(model->rule_offsets().defined());
  EXPECT_FALSE(model->prior_at(6).defined());
  EXPECT_TRUE(torch::equal(model->prior_at(kLongest), sized.values));
  EXPECT_TRUE(model->named_buffers().contains("prior_values_8"));
  EXPECT_FALSE(model->named_buffers().contains("prior_rules_8"));
  torch::NoGradGuard no_grad;
  for (const int64_t t : {int64_t{6}, kLongest}) {
    auto reference = t == 6 ? reference_model(model, t, {}, hard_only.hard)
                            : reference_model(model, t, sized.values, {});
    const auto ids = torch::randint(0, kVocab, {2, t}, torch::kLong);
    EXPECT_TRUE(torch::allclose(model->forward(ids), reference->forward(ids), 1e-5, 1e-6)) << t;
  }
  const auto maps = model->attention_maps(torch::randint(0, kVocab, {2, 6}, torch::kLong));
  EXPECT_EQ(maps[0].narrow(2, 2, 4).select(3, 1).abs().max().item<float>(), 0.0f);  // hard
}

// Shapes that do not fit are the caller's mistake; installing twice, or beside a per-cell mask,
// a bug.
TEST(SizedPriors, RefusesWhatDoesNotFit) {
  const auto config = tiny_config(Readout::kCausalLm, PositionEmbedding::kLearned);
  const auto refused = [&](std::map<int64_t, SizedPrior> priors, int64_t rules = kRules) {
    MaskedTransformer model(config);
    return input_error([&] { model->set_sized_priors(std::move(priors), rules, true); });
  };
  auto prior = random_prior(5, /*hard=*/false);
  EXPECT_EQ(refused({{9, random_prior(9, false)}}),
            "[set_sized_priors] size 9: the model runs lengths 1 to 8");
  EXPECT_NE(refused({{6, prior}}).find("size 6: values [1, 2, 5, 5] do not fit"),
            std::string::npos);
  EXPECT_NE(refused({{5, prior}}, /*rules=*/2).find("rules must lie in [0, rule_count = 2)"),
            std::string::npos);
  auto no_rules = prior;
  no_rules.rules = torch::Tensor();
  EXPECT_NE(refused({{5, no_rules}}).find("needs rules int64 [1, 2, 5, 5]"), std::string::npos);
  auto per_layer = random_prior(kLongest, false);
  per_layer.values = torch::randn({2, 2, kLongest, kLongest});
  per_layer.rules = torch::zeros({2, 2, kLongest, kLongest}, torch::kLong);
  EXPECT_NE(refused({{5, prior}, {kLongest, per_layer}}).find("other layers or heads"),
            std::string::npos);
  auto blocked = prior;
  blocked.hard = torch::zeros({5, 5}, torch::kBool);
  blocked.hard[0][0] = true;  // row 0 sees only key 0 in a causal decoder
  EXPECT_NE(refused({{5, blocked}}).find("excludes every key of query row 0"), std::string::npos);
  EXPECT_EQ(refused({}), "[set_sized_priors] no sizes given");

  MaskedTransformer twice(config);
  twice.ptr()->set_sized_priors({{5, prior}}, kRules, true);
  EXPECT_THROW(twice->set_sized_priors({{5, prior}}, kRules, true), InternalError);
  EXPECT_THROW(twice->set_mask(torch::zeros({1, 1, kLongest, kLongest}), false), InternalError);
  EXPECT_THROW(twice->set_hard_mask(torch::zeros({kLongest, kLongest}, torch::kBool)),
               InternalError);
  MaskedTransformer masked(config);
  masked->set_mask(torch::zeros({1, 1, kLongest, kLongest}), false);
  EXPECT_THROW(masked->set_sized_priors({{5, prior}}, kRules, true), InternalError);
}

// A checkpoint (Module::save, as train/checkpoint.cpp writes it) of a model with sized priors
// loads into a model given the same sizes: rule offsets restored, the same outputs.
TEST(SizedPriors, CheckpointRestoresTheRuleOffsets) {
  torch::manual_seed(6);
  const auto config = tiny_config(Readout::kCausalLm, PositionEmbedding::kLearned);
  const std::map<int64_t, SizedPrior> priors = {{5, random_prior(5, false)},
                                                {kLongest, random_prior(kLongest, true)}};
  MaskedTransformer saved(config);
  saved->set_sized_priors(priors, kRules, /*learnable=*/true);
  {
    torch::NoGradGuard no_grad;
    saved->rule_offsets().copy_(torch::randn({1, 2, kRules}));
  }
  torch::serialize::OutputArchive archive;
  saved->save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);

  MaskedTransformer resumed(config);
  resumed->set_sized_priors(priors, kRules, /*learnable=*/true);
  const auto ids = torch::randint(0, kVocab, {2, 5}, torch::kLong);
  resumed->forward(ids);  // a bias cached before the load must not survive it
  torch::serialize::InputArchive loaded;
  std::istringstream in(bytes.str());
  loaded.load_from(in);
  resumed->load(loaded);
  EXPECT_TRUE(torch::equal(resumed->rule_offsets(), saved->rule_offsets()));
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(resumed->forward(ids), saved->forward(ids)));
}

}  // namespace
}  // namespace maskprior::runtime
