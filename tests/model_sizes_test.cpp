// Tests of the masked Transformer at sequence lengths below its longest (issue #48): any length
// T ≤ N through every entry point.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
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

const std::vector<PositionEmbedding> kPositions = {PositionEmbedding::kLearned,
                                                   PositionEmbedding::kSinusoidal};

std::string position_name(PositionEmbedding p) {
  return p == PositionEmbedding::kLearned ? "learned" : "sinusoidal";
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

}  // namespace
}  // namespace maskprior::runtime
