// Every pass-corpus spec (tests/data/pass/*.mask) and every shipped spec (specs/**/*.mask) compiled
// and checked cell for cell against a reference written by hand from the spec text and
// docs/language-reference.md: one small function per spec over (layer, head, query, key), with the
// token offsets worked out here, never read from the compiled layout. Nothing here calls the
// compiler's selectors or shapes, so a lowering bug cannot hide in both sides. Specs with
// parameters are also checked at a second value through CompileOptions::defines. A spec without a
// reference fails SpecReferenceCoverage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "compiler/compile.h"
#include "core/compiled_mask.h"
#include "core/layout.h"

namespace maskprior {
namespace {

namespace fs = std::filesystem;
using Defines = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------------------------
// The reference and the comparison.

/// One span as the reference expects it; the offset is the reference's own arithmetic.
struct SpanRef {
  std::string name;
  int64_t offset = 0;
  int64_t length = 0;
  std::optional<std::pair<int64_t, int64_t>> grid = std::nullopt;
  std::optional<DigitOrder> digits = std::nullopt;
};

/// What one spec (at one set of parameter values) must compile to.
struct Reference {
  std::string name;  // `mask NAME`
  int64_t layers = 1;
  int64_t heads = 1;
  double open = 10.0;  // `scale` (defaults 10 / -10)
  double close = -10.0;
  std::vector<SpanRef> spans;
  std::map<std::string, double> params;  // resolved parameter values
  std::function<double(int64_t layer, int64_t head, int64_t q, int64_t k)> value;
  std::function<bool(int64_t q, int64_t k)> hard;  // empty: the spec has no `hard` rule
};

/// One compile: a spec (path relative to the source tree), its -D overrides, its reference.
struct Case {
  std::string spec;
  Defines defines;
  Reference reference;
};

bool within(int64_t t, int64_t offset, int64_t length) {
  return t >= offset && t < offset + length;
}

/// `cls`, `x[3]` from the reference's spans (a length-1 span prints bare).
std::string label(const std::vector<SpanRef>& spans, int64_t t) {
  for (const SpanRef& s : spans) {
    if (!within(t, s.offset, s.length)) continue;
    return s.length == 1 ? s.name : s.name + "[" + std::to_string(t - s.offset) + "]";
  }
  return "#" + std::to_string(t);
}

/// Counts mismatching cells and keeps the first few, labelled, for the failure message.
class Mismatches {
 public:
  explicit Mismatches(std::string what) : what_(std::move(what)) {}
  void add(const std::string& cell) {
    if (++count_ <= 12) first_ << "\n  " << cell;
  }
  void report() const {
    if (count_ > 0) {
      ADD_FAILURE() << count_ << " " << what_ << " cell(s) differ from the reference; first "
                    << std::min<int64_t>(count_, 12) << ":" << first_.str();
    }
  }

 private:
  std::string what_;
  int64_t count_ = 0;
  std::ostringstream first_;
};

bool same_value(float actual, double expected) {
  const double want = static_cast<float>(expected);
  return std::abs(actual - want) <= 1e-6 * std::max(1.0, std::abs(want));
}

void expect_layout(const CompiledMask& m, const Reference& r) {
  int64_t next = 0;  // the reference's spans must tile 0..N in order
  for (const SpanRef& s : r.spans) {
    EXPECT_EQ(s.offset, next) << "reference span " << s.name << " is misplaced";
    next += s.length;
  }
  ASSERT_EQ(m.n, next);
  ASSERT_EQ(m.layout.spans.size(), r.spans.size());
  for (size_t i = 0; i < r.spans.size(); ++i) {
    const Span& got = m.layout.spans[i];
    const SpanRef& want = r.spans[i];
    EXPECT_EQ(got.name, want.name) << "span " << i;
    EXPECT_EQ(got.offset, want.offset) << want.name;
    EXPECT_EQ(got.length, want.length) << want.name;
    EXPECT_EQ(got.grid, want.grid) << want.name;
    EXPECT_EQ(got.digits, want.digits) << want.name;
  }
}

void expect_cells(const CompiledMask& m, const Reference& r) {
  const int64_t n = m.n;
  ASSERT_EQ(m.mask.size(), static_cast<size_t>(r.layers * r.heads * n * n));
  Mismatches bad("mask");
  for (int64_t l = 0; l < r.layers; ++l) {
    for (int64_t h = 0; h < r.heads; ++h) {
      for (int64_t q = 0; q < n; ++q) {
        for (int64_t k = 0; k < n; ++k) {
          const double want = r.value(l, h, q, k);
          const float got = m.at(l, h, q, k);
          if (same_value(got, want)) continue;
          std::ostringstream cell;
          cell << "layer " << l << " head " << h << " " << label(r.spans, q) << " -> "
               << label(r.spans, k) << " (" << q << ", " << k << "): got " << got << ", want "
               << static_cast<float>(want);
          bad.add(cell.str());
        }
      }
    }
  }
  bad.report();
}

void expect_hard(const CompiledMask& m, const Reference& r) {
  ASSERT_EQ(m.hard.has_value(), static_cast<bool>(r.hard)) << "presence of the hard mask";
  if (!r.hard) return;
  ASSERT_EQ(m.hard->size(), static_cast<size_t>(m.n * m.n));
  Mismatches bad("hard");
  for (int64_t q = 0; q < m.n; ++q) {
    for (int64_t k = 0; k < m.n; ++k) {
      const bool want = r.hard(q, k);
      if (m.is_hard(q, k) == want) continue;
      std::ostringstream cell;
      cell << label(r.spans, q) << " -> " << label(r.spans, k) << " (" << q << ", " << k
           << "): got " << (want ? "soft" : "hard") << ", want " << (want ? "hard" : "soft");
      bad.add(cell.str());
    }
  }
  bad.report();
}

void expect_matches(const CompiledMask& m, const Reference& r) {
  EXPECT_EQ(m.name, r.name);
  ASSERT_EQ(m.layers, r.layers);
  ASSERT_EQ(m.heads, r.heads);
  EXPECT_EQ(m.open_value, r.open);
  EXPECT_EQ(m.close_value, r.close);
  EXPECT_EQ(m.params, r.params);
  ASSERT_NO_FATAL_FAILURE(expect_layout(m, r));
  ASSERT_NO_FATAL_FAILURE(expect_cells(m, r));
  expect_hard(m, r);
}

// ---------------------------------------------------------------------------------------------
// Small helpers the references share (written from docs/language-reference.md, not from the
// compiler).

/// `tokens cls, x[n]`: cls is token 0, x[i] is token 1 + i.
Reference cls_x(const std::string& name, int64_t n) {
  Reference r;
  r.name = name;
  r.spans = {{"cls", 0, 1}, {"x", 1, n}};
  r.params = {{"n", static_cast<double>(n)}};
  return r;
}

/// `open cycle X window w` over places 0..len-1: a and b lie together in some window
/// {i, i+1, ..., i+w-1} (mod len) — docs/language-reference.md's definition, tried window by
/// window.
bool in_one_window(int64_t a, int64_t b, int64_t len, int64_t w) {
  for (int64_t i = 0; i < len; ++i) {
    const int64_t da = ((a - i) % len + len) % len;
    const int64_t db = ((b - i) % len + len) % len;
    if (da < w && db < w) return true;
  }
  return false;
}

/// Grid coordinates of token t of a grid span at `offset` with `width` columns (row-major).
std::pair<int64_t, int64_t> cell_of(int64_t t, int64_t offset, int64_t width) {
  return {(t - offset) / width, (t - offset) % width};
}

// ---------------------------------------------------------------------------------------------
// GOTU specs: tokens cls, x[n]; open 10, close -10; default close.

/// parity2: open the diagonal, cls -> x[0], x[1], and x[0] <-> x[1]; all else closed.
Reference parity2(const std::string& name, int64_t n) {
  Reference r = cls_x(name, n);
  r.value = [](int64_t, int64_t, int64_t q, int64_t k) {
    const int64_t cls = 0, x0 = 1, x1 = 2;
    const bool open = q == k || (q == cls && (k == x0 || k == x1)) || (q == x0 && k == x1) ||
                      (q == x1 && k == x0);
    return open ? 10.0 : -10.0;
  };
  return r;
}

/// parity2_misspecified: the parity2 pattern moved one bit: cls -> x[1], x[2]; x[1] <-> x[2].
Reference parity2_misspecified(int64_t n) {
  Reference r = cls_x("parity2_misspecified", n);
  r.value = [](int64_t, int64_t, int64_t q, int64_t k) {
    const int64_t cls = 0, x1 = 2, x2 = 3;
    const bool open = q == k || (q == cls && (k == x1 || k == x2)) || (q == x1 && k == x2) ||
                      (q == x2 && k == x1);
    return open ? 10.0 : -10.0;
  };
  return r;
}

// ---------------------------------------------------------------------------------------------
// specs/designs: other masks for the parity2 and maj3 targets (maskc reproduce designs).

/// A GOTU design: cells open where `open(q, k)` says (token 0 = cls, x[i] = 1 + i), else closed.
Reference design(const std::string& name, int64_t n, std::function<bool(int64_t, int64_t)> open) {
  Reference r = cls_x(name, n);
  r.value = [open](int64_t, int64_t, int64_t q, int64_t k) { return open(q, k) ? 10.0 : -10.0; };
  return r;
}

/// `voters` relevant bits x[0..voters): the hard designs open the paper's pattern (readout +
/// clique of the voters + diagonal) and exclude every other cell hard.
Reference hard_design(const std::string& name, int64_t n, int64_t voters) {
  auto voter = [voters](int64_t t) { return t >= 1 && t <= voters; };
  auto open = [voter](int64_t q, int64_t k) {
    return q == k || (q == 0 && voter(k)) || (voter(q) && voter(k));
  };
  Reference r = design(name, n, open);
  r.hard = [open](int64_t q, int64_t k) { return !open(q, k); };
  return r;
}

Reference parity2_layers(int64_t n, int64_t depth) {
  Reference r = cls_x("parity2_layers", n);
  r.layers = depth;
  r.params["depth"] = static_cast<double>(depth);
  r.value = [depth](int64_t layer, int64_t, int64_t q, int64_t k) {
    const int64_t x0 = 1, x1 = 2;
    bool open = q == k;
    if (layer == 0) open = open || (q == x0 && k == x1) || (q == x1 && k == x0);
    if (layer == depth - 1) open = open || (q == 0 && (k == x0 || k == x1));
    return open ? 10.0 : -10.0;
  };
  return r;
}

std::vector<Case> design_cases() {
  const std::string d = "specs/designs/";
  const auto readout2 = [](int64_t q, int64_t k) {
    return q == k || (q == 0 && (k == 1 || k == 2));
  };
  const auto noself = [](int64_t q, int64_t k) {
    const bool relevant = q == 1 || q == 2;
    return (q == k && !relevant) || (q == 0 && (k == 1 || k == 2)) || (q == 1 && k == 2) ||
           (q == 2 && k == 1);
  };
  const auto twohop2 = [](int64_t q, int64_t k) {
    return q == k || (q == 0 && k == 1) || (q == 1 && k == 2);
  };
  const auto readout3 = [](int64_t q, int64_t k) { return q == k || (q == 0 && k >= 1 && k <= 3); };
  const auto twohop3 = [](int64_t q, int64_t k) {
    return q == k || (q == 0 && k == 1) || (q == 1 && (k == 2 || k == 3));
  };
  return {
      {d + "parity2_readout.mask", {}, design("parity2_readout", 15, readout2)},
      {d + "parity2_readout.mask", {{"n", "3"}}, design("parity2_readout", 3, readout2)},
      {d + "parity2_noself.mask", {}, design("parity2_noself", 15, noself)},
      {d + "parity2_noself.mask", {{"n", "4"}}, design("parity2_noself", 4, noself)},
      {d + "parity2_twohop.mask", {}, design("parity2_twohop", 15, twohop2)},
      {d + "parity2_twohop.mask", {{"n", "4"}}, design("parity2_twohop", 4, twohop2)},
      {d + "parity2_hard.mask", {}, hard_design("parity2_hard", 15, 2)},
      {d + "parity2_hard.mask", {{"n", "5"}}, hard_design("parity2_hard", 5, 2)},
      {d + "parity2_layers.mask", {}, parity2_layers(15, 2)},
      {d + "parity2_layers.mask", {{"depth", "4"}}, parity2_layers(15, 4)},
      {d + "maj3_readout.mask", {}, design("maj3_readout", 15, readout3)},
      {d + "maj3_readout.mask", {{"n", "5"}}, design("maj3_readout", 5, readout3)},
      {d + "maj3_twohop.mask", {}, design("maj3_twohop", 15, twohop3)},
      {d + "maj3_twohop.mask", {{"n", "4"}}, design("maj3_twohop", 4, twohop3)},
      {d + "maj3_hard.mask", {}, hard_design("maj3_hard", 15, 3)},
      {d + "maj3_hard.mask", {{"n", "6"}}, hard_design("maj3_hard", 6, 3)},
  };
}

/// maj3 and threesym: diagonal; cls -> x[0], x[1], x[2]; every pair of x[0..3] (self included).
Reference three_voters(const std::string& name, int64_t n) {
  Reference r = cls_x(name, n);
  r.value = [](int64_t, int64_t, int64_t q, int64_t k) {
    const auto voter = [](int64_t t) { return t >= 1 && t <= 3; };  // x[0], x[1], x[2]
    const bool open = q == k || (q == 0 && voter(k)) || (voter(q) && voter(k));
    return open ? 10.0 : -10.0;
  };
  return r;
}

/// cyclic3: diagonal; x[a] <-> x[b] when both lie in one cyclic window of 3; cls -> every x.
Reference cyclic3(int64_t n) {
  Reference r = cls_x("cyclic3", n);
  r.value = [n](int64_t, int64_t, int64_t q, int64_t k) {
    const bool both_x = q >= 1 && k >= 1;
    const bool open = q == k || (q == 0 && k >= 1) || (both_x && in_one_window(q - 1, k - 1, n, 3));
    return open ? 10.0 : -10.0;
  };
  return r;
}

// ---------------------------------------------------------------------------------------------
// Arithmetic specs of n-digit operands (`param n`, 3 by default): a[n] (tokens 0..n-1), op (n),
// b[n] (n+1..2n), eq (2n+1), c[len] (2n+2..). Operands are msb_first, so place i of a is token
// n-1-i and of b is token 2n-i; c is lsb_first, so c[j] is place j and the row that predicts it
// (`before c`) is token 2n+1+j. Open 5, close -5; hard causal. `param_n`: the spec declares n
// (the shipped specs do; the pass corpus's 3-digit copy does not).

Reference arithmetic(const std::string& name, const std::string& op, int64_t n, int64_t c_len,
                     bool param_n) {
  Reference r;
  r.name = name;
  r.open = 5.0;
  r.close = -5.0;
  r.spans = {{"a", 0, n, std::nullopt, DigitOrder::kMsbFirst},
             {op, n, 1},
             {"b", n + 1, n, std::nullopt, DigitOrder::kMsbFirst},
             {"eq", 2 * n + 1, 1},
             {"c", 2 * n + 2, c_len, std::nullopt, DigitOrder::kLsbFirst}};
  if (param_n) r.params = {{"n", static_cast<double>(n)}};
  r.hard = [](int64_t q, int64_t k) { return k > q; };  // hard causal
  return r;
}

/// addition (carry = true): diagonal; the row predicting c[j] (2n+1+j) -> places i <= j of a and
/// b (align ... carry; a and b have no place n); the answer rows see each other (before c ->
/// before c). addition_nocarry (carry = false): diagonal; row 2n+1+j -> place j of a and b only.
Reference addition(bool carry, int64_t n = 3) {
  Reference r = arithmetic(carry ? "addition" : "addition_nocarry", "plus", n, n + 1, true);
  r.value = [carry, n](int64_t, int64_t, int64_t q, int64_t k) {
    const int64_t rows = 2 * n + 1;  // the row predicting c[0]
    bool open = q == k;
    for (int64_t j = 0; j <= n; ++j) {
      if (q != rows + j) continue;
      for (int64_t i = 0; i < n; ++i) {
        const bool place = carry ? i <= j : i == j;
        if (place && (k == n - 1 - i || k == 2 * n - i)) open = true;
      }
    }
    if (carry && within(q, rows, n + 1) && within(k, rows, n + 1)) open = true;
    return open ? 5.0 : -5.0;
  };
  return r;
}

/// addition_lag1: diagonal; the row predicting c[j] (2n+1+j) -> place j - 1 of a and b only
/// (c[0]'s row gets none); the answer rows see each other.
Reference addition_lag1(int64_t n) {
  Reference r = arithmetic("addition_lag1", "plus", n, n + 1, true);
  r.value = [n](int64_t, int64_t, int64_t q, int64_t k) {
    const int64_t rows = 2 * n + 1;  // the row predicting c[0]
    const int64_t place = q - rows - 1;
    bool open = q == k || (within(q, rows, n + 1) && within(k, rows, n + 1));
    if (place >= 0 && place < n && (k == n - 1 - place || k == 2 * n - place)) open = true;
    return open ? 5.0 : -5.0;
  };
  return r;
}

/// addition_scaled: addition's cells with close = -(5 + log N), N = 3n + 3 tokens.
Reference addition_scaled(int64_t n) {
  Reference r = addition(true, n);
  r.name = "addition_scaled";
  r.close = -(5.0 + std::log(static_cast<double>(3 * n + 3)));
  const auto value = r.value;
  const double close = r.close;
  r.value = [value, close](int64_t l, int64_t h, int64_t q, int64_t k) {
    return value(l, h, q, k) > 0 ? 5.0 : close;
  };
  return r;
}

/// addition_local (4 heads): diagonal; the row predicting c[j] (2n+1+j) -> place j of a and b in
/// heads 0 and 2, place j - 1 in heads 1 and 3 (`lag 1`: c[0]'s row gets nothing there); a and b
/// have no place n. `scaled`: addition_local_scaled, close = -(5 + log(3n + 3)).
Reference addition_local(int64_t n, bool scaled) {
  Reference r =
      arithmetic(scaled ? "addition_local_scaled" : "addition_local", "plus", n, n + 1, true);
  r.heads = 4;
  if (scaled) r.close = -(5.0 + std::log(static_cast<double>(3 * n + 3)));
  const double close = r.close;
  r.value = [n, close](int64_t, int64_t head, int64_t q, int64_t k) {
    const int64_t rows = 2 * n + 1;  // the row predicting c[0]
    bool open = q == k;
    const int64_t j = q - rows;
    const int64_t place = head % 2 == 0 ? j : j - 1;
    if (j >= 0 && j <= n && place >= 0 && place < n && (k == n - 1 - place || k == 2 * n - place))
      open = true;
    return open ? 5.0 : close;
  };
  return r;
}

/// addition_distance: over the whole layout, d = q - k; the value is max(-5, 5 (1 - d / width))
/// (the future is hard-excluded; there d < 0 and the value is above 5).
Reference addition_distance(int64_t n, int64_t width) {
  Reference r = arithmetic("addition_distance", "plus", n, n + 1, true);
  r.params["width"] = static_cast<double>(width);
  r.value = [width](int64_t, int64_t, int64_t q, int64_t k) {
    const double d = static_cast<double>(q - k);
    return std::max(-5.0, 5.0 * (1.0 - d / static_cast<double>(width)));
  };
  return r;
}

/// The tighter multiplication designs: diagonal; the answer rows see each other; the row
/// predicting answer place j -> a place i and b place k for the pairs with i + k = j -
/// offset(head): multiplication_nocarry has one head, offset 0; multiplication_heads n + 1, head
/// h offset h. As declared, the operands are stored msb first (a place i is token n-1-i, b place
/// k token 2n-k) and the answer lsb first (place j is c[j], predicted by token 2n+1+j);
/// `operands` and `answer` give other orders, as --digits (or train's
/// --operand-order/--answer-order) would.
Reference multiplication_design(const std::string& name, int64_t heads,
                                DigitOrder operands = DigitOrder::kMsbFirst,
                                DigitOrder answer = DigitOrder::kLsbFirst, int64_t n = 3) {
  Reference r = arithmetic(name, "times", n, 2 * n, true);
  r.heads = heads;
  r.spans[0].digits = operands;
  r.spans[2].digits = operands;
  r.spans[4].digits = answer;
  const bool msb = operands == DigitOrder::kMsbFirst;
  const bool lsb_answer = answer == DigitOrder::kLsbFirst;
  r.value = [msb, lsb_answer, n](int64_t, int64_t head, int64_t q, int64_t k) {
    const int64_t rows = 2 * n + 1;
    bool open = q == k || (within(q, rows, 2 * n) && within(k, rows, 2 * n));
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t kk = 0; kk < n; ++kk) {
        const int64_t j = i + kk + head;
        const int64_t a_token = msb ? n - 1 - i : i;
        const int64_t b_token = msb ? 2 * n - kk : n + 1 + kk;
        const int64_t row = rows + (lsb_answer ? j : 2 * n - 1 - j);
        if (j < 2 * n && q == row && (k == a_token || k == b_token)) open = true;
      }
    }
    return open ? 5.0 : -5.0;
  };
  return r;
}

/// multiplication: diagonal; the row predicting c[j] (2n+1+j, j < 2n) -> a place i and b place k
/// for every pair with i + k <= j (product ... carry); the answer rows see each other. The
/// pass-corpus copy (3 digits, no parameter) adds `hard c -> c`: every answer token excluded from
/// every answer token, itself included.
Reference multiplication(bool hard_answers, int64_t n = 3) {
  Reference r = arithmetic("multiplication", "times", n, 2 * n, !hard_answers);
  r.value = [n](int64_t, int64_t, int64_t q, int64_t k) {
    const int64_t rows = 2 * n + 1;
    bool open = q == k;
    for (int64_t j = 0; j < 2 * n; ++j) {
      if (q != rows + j) continue;
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t kk = 0; kk < n; ++kk) {
          if (i + kk <= j && (k == n - 1 - i || k == 2 * n - kk)) open = true;
        }
      }
    }
    if (within(q, rows, 2 * n) && within(k, rows, 2 * n)) open = true;
    return open ? 5.0 : -5.0;
  };
  if (hard_answers) {
    r.hard = [n](int64_t q, int64_t k) {
      return k > q || (within(q, 2 * n + 2, 2 * n) && within(k, 2 * n + 2, 2 * n));
    };
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Language: tokens t[n]; hard causal; every cell set to max(-s, s * (1 - |d| / width)), d = q - k.

Reference distance(int64_t n, int64_t s, int64_t width, bool width_is_param) {
  Reference r;
  r.name = "distance";
  r.spans = {{"t", 0, n}};
  r.params = {{"n", static_cast<double>(n)}, {"s", static_cast<double>(s)}};
  if (width_is_param) r.params["width"] = static_cast<double>(width);
  r.value = [s, width](int64_t, int64_t, int64_t q, int64_t k) {
    const double d = static_cast<double>(q - k);
    return std::max(static_cast<double>(-s),
                    static_cast<double>(s) * (1.0 - std::abs(d) / static_cast<double>(width)));
  };
  r.hard = [](int64_t q, int64_t k) { return k > q; };
  return r;
}

// ---------------------------------------------------------------------------------------------
// Vision: tokens cls (0), p[side * side] (1..) on a side x side grid; heads 4; open 10 / close -10.

Reference grid_cls_p(const std::string& name, int64_t side) {
  Reference r;
  r.name = name;
  r.heads = 4;
  r.spans = {{"cls", 0, 1}, {"p", 1, side * side, std::make_pair(side, side)}};
  r.params = {{"side", static_cast<double>(side)}};
  return r;
}

/// Key offset (dy, dx) from query patch q to key patch k.
std::pair<int64_t, int64_t> offset_of(int64_t q, int64_t k, int64_t side) {
  const auto [qy, qx] = cell_of(q, 1, side);
  const auto [ky, kx] = cell_of(k, 1, side);
  return {ky - qy, kx - qx};
}

/// tests/data/pass/vision.mask. Patch -> patch, in rule order: chebyshev offset <= 1 -> 2;
/// chebyshev <= 4 with both components even -> 10 (includes the cell itself); head h's shift
/// (0,1), (0,-1), (1,0), (1-side,0) -> 10. cls -> every patch and every patch -> cls open;
/// cls -> cls is written by no rule and stays closed.
Reference vision(int64_t side) {
  Reference r = grid_cls_p("vision", side);
  r.value = [side](int64_t, int64_t h, int64_t q, int64_t k) {
    if (q == 0 && k == 0) return -10.0;
    if (q == 0 || k == 0) return 10.0;
    const auto [dy, dx] = offset_of(q, k, side);
    const int64_t cheb = std::max(std::abs(dy), std::abs(dx));
    const std::pair<int64_t, int64_t> shifts[4] = {{0, 1}, {0, -1}, {1, 0}, {1 - side, 0}};
    double v = -10.0;
    if (cheb <= 1) v = 2.0;
    if (cheb <= 4 && dy % 2 == 0 && dx % 2 == 0) v = 10.0;
    if (std::make_pair(dy, dx) == shifts[h]) v = 10.0;
    return v;
  };
  return r;
}

/// specs/vision/local7x7.mask, in rule order: diagonal -> 10; patch chebyshev offset <= 1 -> 2
/// (this overwrites each patch's own cell); head h's shift (0,1), (0,-1), (1,0), (-1,0) -> 10;
/// cls -> every patch and every patch -> cls -> 10. So cls -> cls is 10, patch -> itself is 2.
Reference local7x7(int64_t side) {
  Reference r = grid_cls_p("local7x7", side);
  r.value = [side](int64_t, int64_t h, int64_t q, int64_t k) {
    if (q == 0 || k == 0) return 10.0;  // cls -> cls (diagonal), cls -> p, p -> cls
    const auto [dy, dx] = offset_of(q, k, side);
    const std::pair<int64_t, int64_t> shifts[4] = {{0, 1}, {0, -1}, {1, 0}, {-1, 0}};
    double v = q == k ? 10.0 : -10.0;
    if (std::max(std::abs(dy), std::abs(dx)) <= 1) v = 2.0;
    if (std::make_pair(dy, dx) == shifts[h]) v = 10.0;
    return v;
  };
  return r;
}

// ---------------------------------------------------------------------------------------------
// tests/data/pass/blocks.mask: x[n], 3 layers, 4 heads, open 10 / close -10.

/// In rule order: row i -> x[0..i] open (lower triangle with diagonal) everywhere; heads 0, 1:
/// diagonal open, and in layer 1 column x[0] closed; layers 1, 2 head 3: x[i] -> x[j] = i - j for
/// j < i; head 2 (every layer): row x[n-1] open.
Reference blocks(int64_t n) {
  Reference r;
  r.name = "blocks";
  r.layers = 3;
  r.heads = 4;
  r.spans = {{"x", 0, n}};
  r.params = {{"n", static_cast<double>(n)}};
  r.value = [n](int64_t l, int64_t h, int64_t q, int64_t k) {
    double v = k <= q ? 10.0 : -10.0;
    if (h <= 1 && q == k) v = 10.0;
    if (h <= 1 && l == 1 && k == 0) v = -10.0;
    if (l >= 1 && h == 3 && k < q) v = static_cast<double>(q - k);
    if (h == 2 && q == n - 1) v = 10.0;
    return v;
  };
  return r;
}

// ---------------------------------------------------------------------------------------------
// tests/data/pass/every_rule.mask: cls (0), x[n] (1..n), a[2] lsb_first, b[3] msb_first,
// c[4] lsb_first, p[12] on a 3 x 4 grid; open 4, close -4, default -1.5; `k` = half.

class EveryRule {
 public:
  EveryRule(int64_t n, int64_t half)
      : n_(n), half_(half), a_(1 + n), b_(a_ + 2), c_(b_ + 3), p_(c_ + 4) {}

  std::vector<SpanRef> spans() const {
    return {{"cls", 0, 1},
            {"x", 1, n_},
            {"a", a_, 2, std::nullopt, DigitOrder::kLsbFirst},
            {"b", b_, 3, std::nullopt, DigitOrder::kMsbFirst},
            {"c", c_, 4, std::nullopt, DigitOrder::kLsbFirst},
            {"p", p_, 12, std::make_pair(int64_t{3}, int64_t{4})}};
  }

  /// The rules of the spec in file order; each later rule overwrites the cells it selects.
  double value(int64_t q, int64_t k) const {
    const bool xx = is_x(q) && is_x(k);
    const int64_t xq = q - 1, xk = k - 1;                       // places in x when xx
    double v = -1.5;                                            // default -1.5
    if (q == k) v = 4;                                          // open diagonal
    if (q == k && is_x(q) && q - 1 < half_) v = 4;              // open diagonal x[0..k]
    if (q == 0 && (is_x(k) || k == a_ + 1)) v = 4;              // open cls -> x, a[-1]
    if (xx && close_pair(xq, xk)) v = -4;                       // close pair (x0, x1), x[-1]
    if (xx && within(xq, 2, 3) && within(xk, 2, 3)) v = 2.5;    // open clique x[2..5] at 2.5
    if (xx && in_one_window(xq, xk, n_, 3)) v = 4;              // open cycle x window 3
    if (align_carry(q, k)) v = 4;                               // open align a, b -> c carry
    if (product(q, k)) v = 1;                                   // set product ... = 1
    if (is_p(q) && is_p(k)) v = grid_rules(q, k, v);            // local, local, shift
    if (xx && xq < half_ && xk < half_) v = distance(xq - xk);  // set distance x[..k]
    if (q == 0 && k == p_ + 11) v = -2;                         // set cls -> p[-1] = 3 + 1 - 6
    return v;
  }

  /// hard causal cls, x (cls and x are tokens 0..n in order); hard c -> c[1..].
  bool hard(int64_t q, int64_t k) const {
    if (q <= n_ && k <= n_ && k > q) return true;
    return within(q, c_, 4) && within(k, c_ + 1, 3);
  }

 private:
  bool is_x(int64_t t) const { return within(t, 1, n_); }
  bool is_p(int64_t t) const { return within(t, p_, 12); }
  int64_t a_place(int64_t i) const { return a_ + i; }      // lsb_first
  int64_t b_place(int64_t i) const { return b_ + 2 - i; }  // msb_first

  bool close_pair(int64_t a, int64_t b) const {
    const auto first_two = [](int64_t t) { return t == 0 || t == 1; };
    return (first_two(a) && b == n_ - 1) || (a == n_ - 1 && first_two(b));
  }

  /// c[j] (row c + j) -> a place i and b place i for every i <= j the operand has.
  bool align_carry(int64_t q, int64_t k) const {
    for (int64_t j = 0; j < 4; ++j) {
      if (q != c_ + j) continue;
      for (int64_t i = 0; i <= j; ++i) {
        if ((i < 2 && k == a_place(i)) || (i < 3 && k == b_place(i))) return true;
      }
    }
    return false;
  }

  /// The row before c[j] (c + j - 1; for j = 0 that is b[2]) -> a place i, b place kk, i + kk = j.
  bool product(int64_t q, int64_t k) const {
    for (int64_t j = 0; j < 4; ++j) {
      if (q != c_ + j - 1) continue;
      for (int64_t i = 0; i < 2; ++i) {
        for (int64_t kk = 0; kk < 3; ++kk) {
          if (i + kk == j && (k == a_place(i) || k == b_place(kk))) return true;
        }
      }
    }
    return false;
  }

  /// open local manhattan <= 1 (dilation 1); close local chebyshev <= 2 with both offset components
  /// multiples of 2 (the cell itself included); open shift by (1, -1).
  double grid_rules(int64_t q, int64_t k, double v) const {
    const auto [qy, qx] = cell_of(q, p_, 4);
    const auto [ky, kx] = cell_of(k, p_, 4);
    const int64_t dy = ky - qy, dx = kx - qx;
    if (std::abs(dy) + std::abs(dx) <= 1) v = 4;
    if (std::max(std::abs(dy), std::abs(dx)) <= 2 && dy % 2 == 0 && dx % 2 == 0) v = -4;
    if (dy == 1 && dx == -1) v = 4;
    return v;
  }

  static double distance(int64_t d) {
    return std::max(-4.0, std::min(4.0, 2.0 - 0.5 * std::abs(static_cast<double>(d))));
  }

  int64_t n_, half_, a_, b_, c_, p_;
};

Reference every_rule(int64_t n, int64_t half) {
  const EveryRule spec(n, half);
  Reference r;
  r.name = "every_rule";
  r.open = 4.0;
  r.close = -4.0;
  r.spans = spec.spans();
  r.params = {{"n", static_cast<double>(n)}, {"k", static_cast<double>(half)}};
  r.value = [spec](int64_t, int64_t, int64_t q, int64_t k) { return spec.value(q, k); };
  r.hard = [spec](int64_t q, int64_t k) { return spec.hard(q, k); };
  return r;
}

// ---------------------------------------------------------------------------------------------
// The cases: every spec at its defaults, and again with other parameter values where it has any.

std::vector<Case> pass_corpus_cases() {
  const std::string d = "tests/data/pass/";
  return {
      {d + "arithmetic.mask", {}, multiplication(true)},
      {d + "blocks.mask", {}, blocks(6)},
      {d + "blocks.mask", {{"n", "4"}}, blocks(4)},
      {d + "every_rule.mask", {}, every_rule(8, 4)},
      {d + "every_rule.mask", {{"n", "10"}}, every_rule(10, 5)},
      {d + "every_rule.mask", {{"n", "6"}, {"k", "2"}}, every_rule(6, 2)},
      {d + "language.mask", {}, distance(32, 10, 8, false)},
      {d + "language.mask", {{"n", "9"}, {"s", "3"}}, distance(9, 3, 8, false)},
      {d + "parity2.mask", {}, parity2("parity2", 15)},
      {d + "parity2.mask", {{"n", "5"}}, parity2("parity2", 5)},
      {d + "vision.mask", {}, vision(6)},
      {d + "vision.mask", {{"side", "4"}}, vision(4)},
  };
}

std::vector<Case> shipped_cases() {
  return {
      // The arithmetic specs at their declared 3 digits (the tensors every study ran on) and at
      // other sizes: one file serves every operand length.
      {"specs/arith/addition.mask", {}, addition(true)},
      {"specs/arith/addition.mask", {{"n", "1"}}, addition(true, 1)},
      {"specs/arith/addition.mask", {{"n", "7"}}, addition(true, 7)},
      {"specs/arith/addition_scaled.mask", {}, addition_scaled(3)},
      {"specs/arith/addition_scaled.mask", {{"n", "9"}}, addition_scaled(9)},
      {"specs/arith/addition_local.mask", {}, addition_local(3, false)},
      {"specs/arith/addition_local.mask", {{"n", "8"}}, addition_local(8, false)},
      {"specs/arith/addition_local_scaled.mask", {}, addition_local(3, true)},
      {"specs/arith/addition_local_scaled.mask", {{"n", "6"}}, addition_local(6, true)},
      {"specs/arith/addition_distance.mask", {}, addition_distance(3, 4)},
      {"specs/arith/addition_distance.mask", {{"n", "7"}, {"width", "2"}}, addition_distance(7, 2)},
      {"specs/arith/addition_lag1.mask", {}, addition_lag1(3)},
      {"specs/arith/addition_lag1.mask", {{"n", "6"}}, addition_lag1(6)},
      {"specs/arith/addition_nocarry.mask", {}, addition(false)},
      {"specs/arith/addition_nocarry.mask", {{"n", "5"}}, addition(false, 5)},
      {"specs/arith/multiplication.mask", {}, multiplication(false)},
      {"specs/arith/multiplication.mask", {{"n", "5"}}, multiplication(false, 5)},
      {"specs/arith/multiplication_nocarry.mask",
       {},
       multiplication_design("multiplication_nocarry", 1)},
      {"specs/arith/multiplication_nocarry.mask",
       {{"n", "4"}},
       multiplication_design("multiplication_nocarry", 1, DigitOrder::kMsbFirst,
                             DigitOrder::kLsbFirst, 4)},
      {"specs/arith/multiplication_heads.mask",
       {},
       multiplication_design("multiplication_heads", 4)},
      {"specs/arith/multiplication_heads.mask",
       {{"n", "5"}},
       multiplication_design("multiplication_heads", 6, DigitOrder::kMsbFirst,
                             DigitOrder::kLsbFirst, 5)},
      {"specs/gotu/cyclic3.mask", {}, cyclic3(15)},
      {"specs/gotu/cyclic3.mask", {{"n", "7"}}, cyclic3(7)},
      {"specs/gotu/maj3.mask", {}, three_voters("maj3", 15)},
      {"specs/gotu/maj3.mask", {{"n", "5"}}, three_voters("maj3", 5)},
      {"specs/gotu/parity2.mask", {}, parity2("parity2", 15)},
      {"specs/gotu/parity2.mask", {{"n", "5"}}, parity2("parity2", 5)},
      {"specs/gotu/parity2_misspecified.mask", {}, parity2_misspecified(15)},
      {"specs/gotu/parity2_misspecified.mask", {{"n", "5"}}, parity2_misspecified(5)},
      {"specs/gotu/threesym.mask", {}, three_voters("threesym", 15)},
      {"specs/gotu/threesym.mask", {{"n", "5"}}, three_voters("threesym", 5)},
      {"specs/language/distance.mask", {}, distance(64, 10, 8, true)},
      {"specs/language/distance.mask",
       {{"n", "20"}, {"s", "4"}, {"width", "3"}},
       distance(20, 4, 3, true)},
      {"specs/vision/local7x7.mask", {}, local7x7(7)},
      {"specs/vision/local7x7.mask", {{"side", "4"}}, local7x7(4)},
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> cases = pass_corpus_cases();
  for (Case& c : shipped_cases()) cases.push_back(std::move(c));
  for (Case& c : design_cases()) cases.push_back(std::move(c));
  return cases;
}

/// `specs_gotu_parity2__n_5`: the spec path and its defines, as a test name.
std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string name = info.param.spec.substr(0, info.param.spec.size() - 5);  // drop ".mask"
  if (name.rfind("tests/data/", 0) == 0) name = name.substr(11);
  for (const auto& [key, value] : info.param.defines) name += "__" + key + "_" + value;
  for (char& ch : name) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return name;
}

std::string defines_text(const Defines& defines) {
  std::string text;
  for (const auto& [key, value] : defines) text += " -D " + key + "=" + value;
  return text.empty() ? " (defaults)" : text;
}

/// How GoogleTest names a case in failure messages (instead of a byte dump).
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.spec << defines_text(c.defines);
}

class SpecReference : public testing::TestWithParam<Case> {};

TEST_P(SpecReference, EveryCellMatches) {
  const Case& c = GetParam();
  SCOPED_TRACE(c.spec + defines_text(c.defines));
  CompileOptions options;
  options.defines = c.defines;
  const fs::path path = fs::path(MASKPRIOR_SOURCE_DIR) / c.spec;
  CompiledMask m;
  try {
    m = compile_file(path.string(), options);
  } catch (const std::exception& e) {
    FAIL() << "does not compile: " << e.what();
  }
  expect_matches(m, c.reference);
}

INSTANTIATE_TEST_SUITE_P(AllSpecs, SpecReference, testing::ValuesIn(all_cases()), case_name);

/// The multiplication designs pair digits by place (`product`, with `lag` per head), so they follow
/// the digit orders a task stores: every combination of operand and answer order.
TEST(SpecReferenceDigitOrders, MultiplicationDesignsFollowTheDigitOrders) {
  const std::vector<std::pair<std::string, int64_t>> designs = {{"multiplication_nocarry", 1},
                                                                {"multiplication_heads", 4}};
  for (const auto& [name, heads] : designs) {
    for (const DigitOrder operands : {DigitOrder::kMsbFirst, DigitOrder::kLsbFirst}) {
      for (const DigitOrder answer : {DigitOrder::kMsbFirst, DigitOrder::kLsbFirst}) {
        SCOPED_TRACE(name + " operands " + digit_order_keyword(operands) + ", answer " +
                     digit_order_keyword(answer));
        CompileOptions options;
        options.digit_orders = {{"a", operands}, {"b", operands}, {"c", answer}};
        const fs::path path = fs::path(MASKPRIOR_SOURCE_DIR) / ("specs/arith/" + name + ".mask");
        expect_matches(compile_file(path.string(), options),
                       multiplication_design(name, heads, operands, answer));
      }
    }
  }
}

/// The .mask files under `dir` (recursively or not), as paths relative to the source tree.
std::set<std::string> mask_files(const fs::path& dir, bool recursive) {
  const fs::path root = MASKPRIOR_SOURCE_DIR;
  std::set<std::string> files;
  const auto add = [&](const fs::directory_entry& entry) {
    if (entry.is_regular_file() && entry.path().extension() == ".mask") {
      files.insert(entry.path().lexically_relative(root).generic_string());
    }
  };
  if (recursive) {
    for (const auto& entry : fs::recursive_directory_iterator(dir)) add(entry);
  } else {
    for (const auto& entry : fs::directory_iterator(dir)) add(entry);
  }
  return files;
}

TEST(SpecReferenceCoverage, EverySpecHasAReference) {
  const fs::path root = MASKPRIOR_SOURCE_DIR;
  std::set<std::string> found = mask_files(root / "tests/data/pass", false);
  const std::set<std::string> shipped = mask_files(root / "specs", true);
  found.insert(shipped.begin(), shipped.end());
  EXPECT_GE(found.size(), 16u);

  std::set<std::string> covered, at_defaults, at_other_values;
  for (const Case& c : all_cases()) {
    covered.insert(c.spec);
    (c.defines.empty() ? at_defaults : at_other_values).insert(c.spec);
  }
  EXPECT_EQ(covered, found) << "every .mask file in tests/data/pass and specs/ needs a reference "
                               "in tests/spec_reference_test.cpp, and every reference a file";
  EXPECT_EQ(at_defaults, covered) << "every spec is checked at its default parameters";
}

/// A spec with parameters is also checked at other values, so its reference is a real function.
TEST(SpecReferenceCoverage, ParametersCheckedAtASecondValue) {
  const std::vector<Case> cases = all_cases();
  for (const Case& c : cases) {
    if (!c.defines.empty() || c.reference.params.empty()) continue;
    const bool varied = std::any_of(cases.begin(), cases.end(), [&](const Case& o) {
      return o.spec == c.spec && !o.defines.empty();
    });
    EXPECT_TRUE(varied) << c.spec << " has parameters but no case with -D";
  }
}

}  // namespace
}  // namespace maskprior
