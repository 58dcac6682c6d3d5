// The decoder's cached passes (runtime/decoder.h): a pass that keeps every layer's keys and
// values, one position at a time against them, and prompts that share a prefix computed once.
// Members of MaskedTransformerImpl (runtime/model.h declares them) kept here, beside the greedy
// decoding that uses them.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "runtime/decoder.h"
#include "runtime/model.h"
#include "runtime/model_parts.h"

namespace maskprior::runtime {

torch::Tensor MaskedTransformerImpl::forward_cached(const torch::Tensor& ids,
                                                    KeyValueCache& cache) {
  if (config_.readout != Readout::kCausalLm) {
    throw InputError("[forward_cached] needs a causal decoder");
  }
  torch::NoGradGuard no_grad;
  const int64_t length = sequence_length(ids);
  const auto depth = static_cast<size_t>(config_.depth);
  cache.keys.assign(depth, torch::Tensor());
  cache.values.assign(depth, torch::Tensor());
  cache.length = length;
  const auto distinct = distinct_inputs(ids);
  auto x = embed(ids, distinct);
  const auto bias = attention_bias(length);
  for (size_t l = 0; l < depth; ++l) {
    x = layer_forward(static_cast<int64_t>(l), x, 0, bias, nullptr, &cache.keys[l],
                      &cache.values[l], l == 0 && distinct ? &*distinct : nullptr);
  }
  return readout(x);
}

torch::Tensor MaskedTransformerImpl::forward_cached(const torch::Tensor& ids, KeyValueCache& cache,
                                                    Rows rows) {
  const int64_t length = rows_length("forward_cached", ids, rows);
  torch::NoGradGuard no_grad;
  if (!fused(position_embedding_) || !ids.device().is_cpu() || config_.patch_features > 0 ||
      ids.size(0) == 0 || ids.scalar_type() != torch::kLong || ids.min().item<int64_t>() < 0 ||
      ids.max().item<int64_t>() >= config_.vocab) {
    return forward_cached(ids, cache).narrow(1, rows.first, rows.count);  // it reports bad ids
  }
  const auto bias = attention_bias(length);
  const int64_t end = rows.first + rows.count;
  const auto head = ids.narrow(1, 0, end);
  const auto shared = shared_prefix(head, rows.first);
  const int64_t p = shared.length;
  std::vector<torch::Tensor> prefix, kv;
  if (p > 0) {  // the distinct prefixes once, their keys and values handed to every row
    segment_pass(head.index_select(0, shared.representatives).narrow(1, 0, p), 0, {}, bias, {p, 0},
                 kv);
    for (const auto& t : kv)
      prefix.push_back(t.narrow(2, t.size(2) - 2, 2).index_select(0, shared.group));
  }
  const auto x = segment_pass(head.narrow(1, p, end - p), p, prefix, bias, rows, kv);
  cache.keys.clear();
  cache.values.clear();
  cache.length = length;
  for (const auto& t : kv) {
    cache.keys.push_back(key_view(t));
    cache.values.push_back(value_view(t));
  }
  return readout(x);
}

torch::Tensor MaskedTransformerImpl::forward_position(const torch::Tensor& tokens, int64_t position,
                                                      KeyValueCache& cache) {
  const auto depth = static_cast<size_t>(config_.depth);
  const bool cache_fits =
      cache.keys.size() == depth && cache.values.size() == depth && cache.keys[0].dim() == 4 &&
      tokens.dim() == 1 && cache.keys[0].size(0) == tokens.size(0) && position >= 0 &&
      position < cache.keys[0].size(2) && (cache.length == 0 || position < cache.length);
  if (config_.readout != Readout::kCausalLm || !cache_fits) {
    std::string got = fmt::format("a cache of {} layers", cache.keys.size());
    if (!cache.keys.empty()) got += fmt::format(" {}", shape_text(cache.keys[0]));
    if (cache.length > 0) got += fmt::format(" of a sequence of {} tokens", cache.length);
    throw InputError(fmt::format(
        "[forward_position] needs a causal decoder, tokens [B] and a key/value cache of {} layers "
        "[B, {}, > {}, {}]; got tokens {}, {}",
        config_.depth, config_.heads, position, config_.head_dim, shape_text(tokens), got));
  }
  torch::NoGradGuard no_grad;
  auto x = token_embedding_(tokens.unsqueeze(1)) + position_embedding_.narrow(0, position, 1);
  // The bias of the sequence the cache was filled from: rows of the prior of its size.
  const int64_t length = mask_.defined() || hard_.defined() ? config_.seq_len
                         : cache.length > 0                 ? cache.length
                                                            : cache.keys[0].size(2);
  const auto bias = attention_bias(length);
  for (int64_t l = 0; l < config_.depth; ++l) {  // position's keys and values replaced
    const auto i = static_cast<size_t>(l);
    x = layer_forward(l, x, position, bias, nullptr, &cache.keys[i], &cache.values[i]);
  }
  return readout(x.select(1, 0));
}

SharedPrefix shared_prefix(const torch::Tensor& ids, int64_t limit) {
  if (ids.dim() != 2 || ids.scalar_type() != torch::kLong || !ids.device().is_cpu()) {
    throw InputError(
        fmt::format("[shared_prefix] needs int64 ids [B, E] on the CPU, got {}", shape_text(ids)));
  }
  const int64_t rows = ids.size(0), e = ids.size(1);
  limit = std::min(limit, e - 1);
  SharedPrefix out;
  if (rows < 2 || limit < 1) return out;
  const auto tokens = ids.contiguous();
  const int64_t* t = tokens.data_ptr<int64_t>();
  auto row = [&](int64_t r) { return t + r * e; };
  std::vector<int64_t> order(static_cast<size_t>(rows));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::lexicographical_compare(row(a), row(a) + limit, row(b), row(b) + limit);
  });
  // common[i]: the common prefix of sorted rows i − 1 and i (≤ limit); distinct[P] = U_P.
  std::vector<int64_t> common(order.size(), 0), distinct(static_cast<size_t>(limit) + 1, 1);
  for (size_t i = 1; i < order.size(); ++i) {
    const int64_t *a = row(order[i - 1]), *b = row(order[i]);
    common[i] = std::mismatch(a, a + limit, b).first - a;
    for (int64_t p = common[i] + 1; p <= limit; ++p) ++distinct[static_cast<size_t>(p)];
  }
  const int64_t full = rows * e;
  int64_t best = full;
  for (int64_t p = 1; p <= limit; ++p) {
    const int64_t cost = distinct[static_cast<size_t>(p)] * p + rows * (e - p);
    if (cost < best) {
      best = cost;
      out.length = p;
    }
  }
  if (10 * best > 9 * full) return SharedPrefix{};
  std::vector<int64_t> representatives, group(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || common[i] < out.length) representatives.push_back(order[i]);
    group[static_cast<size_t>(order[i])] = static_cast<int64_t>(representatives.size()) - 1;
  }
  out.representatives = torch::tensor(representatives, torch::kLong);
  out.group = torch::tensor(group, torch::kLong);
  return out;
}

}  // namespace maskprior::runtime
