#include "runtime/attention_kernels.h"

namespace maskprior::runtime::kernels {

// Every product here is one of two small matrix products over rows of d floats, written as
// register-blocked loops over 8-float vectors (GCC/Clang vector extensions): dot products of
// rows (C = A Bᵀ) and weighted sums of rows (C = W X). On x86-64 with GCC each kernel also gets
// an AVX2 + FMA clone, picked at load time on machines that have it (the rest of the build
// targets baseline x86-64, where a vector is two SSE registers).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define MASKPRIOR_KERNEL __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define MASKPRIOR_KERNEL
#endif
#define MASKPRIOR_INLINE inline __attribute__((always_inline))

namespace {

using Vec = float __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;
// Lanes of two vectors picked by index (0–7 from the first, 8–15 from the second): Clang's
// builtin, or GCC's (GCC has Clang's only from version 12).
#if defined(__clang__)
#define MASKPRIOR_SHUFFLE(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
using Lanes = int __attribute__((vector_size(32)));
#define MASKPRIOR_SHUFFLE(a, b, ...) __builtin_shuffle(a, b, Lanes{__VA_ARGS__})
#endif

MASKPRIOR_INLINE Vec load(const float* p) {
  Vec v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
MASKPRIOR_INLINE void store(float* p, Vec v) {
  __builtin_memcpy(p, &v, sizeof v);
}
MASKPRIOR_INLINE Vec splat(float x) {
  return Vec{} + x;
}
MASKPRIOR_INLINE float lane_sum(Vec v) {
  return ((v[0] + v[4]) + (v[1] + v[5])) + ((v[2] + v[6]) + (v[3] + v[7]));
}

/// The lane sums of eight vectors at once: result[c] = Σ lanes of v[c] (a transpose-and-add
/// tree, seven shuffle pairs instead of eight separate horizontal sums).
MASKPRIOR_INLINE Vec lane_sums(const Vec (&v)[8]) {
  auto pairs = [](Vec a, Vec b) {  // [a0+a1, b0+b1, a2+a3, b2+b3, ...]
    return MASKPRIOR_SHUFFLE(a, b, 0, 8, 2, 10, 4, 12, 6, 14) +
           MASKPRIOR_SHUFFLE(a, b, 1, 9, 3, 11, 5, 13, 7, 15);
  };
  auto quads = [](Vec a, Vec b) {
    return MASKPRIOR_SHUFFLE(a, b, 0, 1, 8, 9, 4, 5, 12, 13) +
           MASKPRIOR_SHUFFLE(a, b, 2, 3, 10, 11, 6, 7, 14, 15);
  };
  const Vec low = quads(pairs(v[0], v[1]), pairs(v[2], v[3]));
  const Vec high = quads(pairs(v[4], v[5]), pairs(v[6], v[7]));
  return MASKPRIOR_SHUFFLE(low, high, 0, 1, 2, 3, 8, 9, 10, 11) +
         MASKPRIOR_SHUFFLE(low, high, 4, 5, 6, 7, 12, 13, 14, 15);
}

/// A row-major block of floats: element (r, c) at at[r · rows + c · cols].
struct Matrix {
  const float* at;
  int64_t rows, cols;
  MASKPRIOR_INLINE float operator()(int64_t r, int64_t c) const { return at[r * rows + c * cols]; }
  MASKPRIOR_INLINE const float* row(int64_t r) const { return at + r * rows; }
};

/// Rows a_r, r < R (R = 1 or 2), dotted with rows b_c, c < C (C = 1 or 4), over n floats:
/// out[r][c] = Σ a_r[k] · b_c[k]. R · C independent accumulators hide the FMA latency.
template <int R, int C>
MASKPRIOR_INLINE void dot_block(const float* const* a, const float* const* b, int64_t n,
                                float (&out)[R][C]) {
  Vec acc[R][C] = {};
  const int64_t whole = n - n % kLanes;
  for (int64_t k = 0; k < whole; k += kLanes) {
    Vec av[R];
    for (int r = 0; r < R; ++r) av[r] = load(a[r] + k);
    for (int c = 0; c < C; ++c) {
      const Vec bv = load(b[c] + k);
      for (int r = 0; r < R; ++r) acc[r][c] += av[r] * bv;
    }
  }
  if constexpr (R * C == 8) {
    const Vec sums = lane_sums(
        {acc[0][0], acc[0][1], acc[0][2], acc[0][3], acc[1][0], acc[1][1], acc[1][2], acc[1][3]});
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < C; ++c) out[r][c] = sums[r * C + c];
    }
  } else {
    for (int r = 0; r < R; ++r) {
      for (int c = 0; c < C; ++c) out[r][c] = lane_sum(acc[r][c]);
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int c = 0; c < C; ++c) {
      for (int64_t k = whole; k < n; ++k) out[r][c] += a[r][k] * b[c][k];
    }
  }
}

/// out(i, j) = scale · a_i · b_j (+ bias(i, j)) for i < rows, j < cols; rows of n floats.
MASKPRIOR_INLINE void dots(Matrix a, int64_t rows, Matrix b, int64_t cols, int64_t n, float scale,
                           const float* bias, float* out) {
  auto put = [&](int64_t i, int64_t j, float value) {
    out[i * cols + j] = bias ? scale * value + bias[i * cols + j] : scale * value;
  };
  int64_t i = 0;
  for (; i + 2 <= rows; i += 2) {
    const float* ar[2] = {a.row(i), a.row(i + 1)};
    int64_t j = 0;
    for (; j + 4 <= cols; j += 4) {
      const float* br[4] = {b.row(j), b.row(j + 1), b.row(j + 2), b.row(j + 3)};
      float block[2][4];
      dot_block<2, 4>(ar, br, n, block);
      for (int r = 0; r < 2; ++r) {
        for (int c = 0; c < 4; ++c) put(i + r, j + c, block[r][c]);
      }
    }
    for (; j < cols; ++j) {
      const float* br[1] = {b.row(j)};
      float block[2][1];
      dot_block<2, 1>(ar, br, n, block);
      for (int r = 0; r < 2; ++r) put(i + r, j, block[r][0]);
    }
  }
  for (; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      const float* ar[1] = {a.row(i)};
      const float* br[1] = {b.row(j)};
      float block[1][1];
      dot_block<1, 1>(ar, br, n, block);
      put(i, j, block[0][0]);
    }
  }
}

/// Columns [k, k + V · 8) of out_r = scale · Σ_t w(r, t) · x_t for rows r < R, terms t < terms.
template <int R, int V>
MASKPRIOR_INLINE void sum_block(Matrix w, int64_t r0, int64_t terms, Matrix x, int64_t k,
                                float scale, float* const* out) {
  Vec acc[R][V] = {};
  for (int64_t t = 0; t < terms; ++t) {
    Vec wv[R];
    bool any = false;
    for (int r = 0; r < R; ++r) {
      const float weight = w(r0 + r, t);
      any = any || weight != 0.0F;
      wv[r] = splat(weight);
    }
    if (!any) continue;  // causal and hard-masked cells: probability 0
    for (int v = 0; v < V; ++v) {
      const Vec xv = load(x.row(t) + k + v * kLanes);
      for (int r = 0; r < R; ++r) acc[r][v] += wv[r] * xv;
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < V; ++v) store(out[r] + k + v * kLanes, acc[r][v] * scale);
  }
}

/// Rows r0 .. r0 + R − 1 (R = 1 or 2) of out = scale · W X over rows of n floats.
template <int R>
MASKPRIOR_INLINE void sum_rows(Matrix w, int64_t r0, int64_t terms, Matrix x, int64_t n,
                               float scale, float* const* out) {
  int64_t k = 0;
  for (; k + 4 * kLanes <= n; k += 4 * kLanes) sum_block<R, 4>(w, r0, terms, x, k, scale, out);
  for (; k + kLanes <= n; k += kLanes) sum_block<R, 1>(w, r0, terms, x, k, scale, out);
  for (; k < n; ++k) {
    for (int r = 0; r < R; ++r) {
      float sum = 0.0F;
      for (int64_t t = 0; t < terms; ++t) sum += w(r0 + r, t) * x.row(t)[k];
      out[r][k] = scale * sum;
    }
  }
}

/// out_r = scale · Σ_t w(r, t) · x_t for r < rows (rows of `out` `out_stride` apart).
MASKPRIOR_INLINE void weighted_sums(Matrix w, int64_t rows, int64_t terms, Matrix x, int64_t n,
                                    float scale, float* out, int64_t out_stride) {
  int64_t r = 0;
  for (; r + 2 <= rows; r += 2) {
    float* const o[2] = {out + r * out_stride, out + (r + 1) * out_stride};
    sum_rows<2>(w, r, terms, x, n, scale, o);
  }
  if (r < rows) {
    float* const o[1] = {out + r * out_stride};
    sum_rows<1>(w, r, terms, x, n, scale, o);
  }
}

/// Where pair p = b · H + h starts in a [B, positions, H, d] tensor whose batch rows are `batch`
/// values apart.
MASKPRIOR_INLINE int64_t pair_offset(const AttentionShape& s, int64_t p, int64_t batch) {
  return (p / s.heads) * batch + (p % s.heads) * s.head_dim;
}

/// Row i of pair p's queries, keys / values and output.
MASKPRIOR_INLINE Matrix q_rows(const AttentionShape& s, const float* q, int64_t p) {
  return {q + pair_offset(s, p, s.q_batch), s.q_stride, 1};
}
MASKPRIOR_INLINE Matrix kv_rows(const AttentionShape& s, const float* kv, int64_t p) {
  return {kv + pair_offset(s, p, s.keys * s.kv_stride), s.kv_stride, 1};
}
MASKPRIOR_INLINE int64_t out_offset(const AttentionShape& s, int64_t p) {
  return pair_offset(s, p, s.queries * s.heads * s.head_dim);
}

MASKPRIOR_INLINE const float* pair_bias(const AttentionShape& s, const float* bias, int64_t p) {
  if (bias == nullptr) return nullptr;
  const int64_t h = s.bias_heads == 1 ? 0 : p % s.heads;
  return bias + h * s.queries * s.keys;
}

}  // namespace

MASKPRIOR_KERNEL void attention_scores(const AttentionShape& s, const float* q, const float* k,
                                       const float* bias, float scale, float* scores, int64_t first,
                                       int64_t last) {
  const int64_t nq = s.queries, nk = s.keys;
  for (int64_t p = first; p < last; ++p) {
    dots(q_rows(s, q, p), nq, kv_rows(s, k, p), nk, s.head_dim, scale, pair_bias(s, bias, p),
         scores + p * nq * nk);
  }
}

MASKPRIOR_KERNEL void attention_mix(const AttentionShape& s, const float* probs, const float* v,
                                    float* out, int64_t first, int64_t last) {
  const int64_t d = s.head_dim, out_stride = s.heads * d, nq = s.queries, nk = s.keys;
  for (int64_t p = first; p < last; ++p) {
    const Matrix pp{probs + p * nq * nk, nk, 1};
    weighted_sums(pp, nq, nk, kv_rows(s, v, p), d, 1.0F, out + out_offset(s, p), out_stride);
  }
}

MASKPRIOR_KERNEL void attention_mix_backward(const AttentionShape& s, const float* probs,
                                             const float* v, const float* grad_out,
                                             float* grad_probs, float* grad_v, int64_t first,
                                             int64_t last) {
  const int64_t d = s.head_dim, out_stride = s.heads * d, nq = s.queries, nk = s.keys;
  for (int64_t p = first; p < last; ++p) {
    const Matrix gop{grad_out + out_offset(s, p), out_stride, 1};
    dots(gop, nq, kv_rows(s, v, p), nk, d, 1.0F, nullptr, grad_probs + p * nq * nk);
    const Matrix pt{probs + p * nq * nk, 1, nk};  // Pᵀ: dV_j = Σ_i P_ij dO_i
    float* gv = grad_v + pair_offset(s, p, nk * s.kv_stride);
    weighted_sums(pt, nk, nq, gop, d, 1.0F, gv, s.kv_stride);
  }
}

MASKPRIOR_KERNEL void attention_scores_backward(const AttentionShape& s, const float* grad_scores,
                                                const float* q, const float* k, float scale,
                                                float* grad_q, float* grad_k, int64_t first,
                                                int64_t last) {
  const int64_t d = s.head_dim, nq = s.queries, nk = s.keys;
  for (int64_t p = first; p < last; ++p) {
    const float* gsp = grad_scores + p * nq * nk;
    float* gq = grad_q + pair_offset(s, p, s.q_batch);
    float* gk = grad_k + pair_offset(s, p, nk * s.kv_stride);
    weighted_sums({gsp, nk, 1}, nq, nk, kv_rows(s, k, p), d, scale, gq, s.q_stride);
    weighted_sums({gsp, 1, nk}, nk, nq, q_rows(s, q, p), d, scale, gk, s.kv_stride);
  }
}

}  // namespace maskprior::runtime::kernels
