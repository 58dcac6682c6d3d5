// 3-digit addition and multiplication as a causal decoder (docs/paper.md, "Our format"):
//   a[3] op b[3] eq c[K]
// operands zero padded, most significant digit first; the answer zero padded to K digits
// (4 for sums, 6 for products), least significant first: the defaults of operand_order and
// answer_order (the settings of the same names, docs/arithmetic.md, "Digit order").
// N = 12 (addition) or 14 (multiplication).
// Vocabulary: digits 0–9 are tokens 0–9, then `+` = 10, `*` = 11, `=` = 12.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/layout.h"

namespace maskprior::tasks {

inline constexpr int kTokenPlus = 10;
inline constexpr int kTokenTimes = 11;
inline constexpr int kTokenEquals = 12;
inline constexpr int kArithmeticVocab = 13;

struct ArithmeticTask {
  std::string name;  // addition, multiplication
  char op = '+';
  int operand_digits = 3;
  int answer_digits = 4;                             // K
  DigitOrder operand_order = DigitOrder::kMsbFirst;  // of a and b in the sequence
  DigitOrder answer_order = DigitOrder::kLsbFirst;   // of c

  int64_t problems() const;     // 10^(2·operand_digits): every (a, b) pair
  int sequence_length() const;  // 2·operand_digits + 2 + K
  int answer_offset() const;    // index of c[0] in the sequence
  /// `a[3], plus|times, b[3], eq, c[K]` (the span names of specs/arith/*.mask).
  Layout layout() const;
  /// Problem index p ↔ (a, b) = (p / 10^d, p % 10^d).
  std::pair<int64_t, int64_t> operands(int64_t problem) const;
  int64_t result(int64_t a, int64_t b) const;
  /// The digit order of each span with digits: a and b (operand_order), c (answer_order).
  std::map<std::string, DigitOrder> digit_orders() const;
  /// The full token sequence (length sequence_length()), digits in the task's orders.
  std::vector<int64_t> encode(int64_t problem) const;
  /// Reads the K answer tokens (in answer_order) back to a number; -1 if a token is no digit.
  int64_t decode_answer(const std::vector<int64_t>& answer_tokens) const;
};

std::vector<std::string> arithmetic_task_names();
bool is_arithmetic_task(const std::string& name);
/// Throws InputError for an unknown name. `digits`: the operand length n (a, b of n digits; the
/// answer n + 1 digits for a sum, 2n for a product): 3 is the paper's; InputError outside
/// [1, kMostOperandDigits].
ArithmeticTask make_arithmetic_task(const std::string& name, int digits = 3);
/// Arithmetic problems trained on per size when --train-size is 0 and the run is not at the
/// paper's 3 digits alone (whose training set is the share --train-fraction of all problems).
inline constexpr int64_t kDefaultProblemsPerSize = 1000;
/// The longest operand a task takes: 2,000 digits (a sequence of about 6,000 tokens).
inline constexpr int kMostOperandDigits = 2000;

/// The operand lengths of a run: those trained on (one, or a range `A..B` trained together) and
/// those tested (default: the trained ones). Sorted, without repeats.
struct DigitSizes {
  std::vector<int> train, test;
  bool several() const { return train.size() > 1 || test != train; }
};
/// Reads `--digits` ("3", "1..10") and `--test-digits` ("", "11,20,50" or ranges "11..13,20");
/// InputError naming the setting, the text and what is allowed otherwise.
DigitSizes parse_digit_sizes(const std::string& digits, const std::string& test_digits);

/// A problem of any size: the operands' digits, least significant first, each of the task's
/// operand_digits (leading zeros allowed: operands are zero padded).
struct DigitProblem {
  std::vector<int8_t> a, b;
};
/// The token sequence of `problem` as encode() writes a problem index (the same tokens for the
/// same operands), with the answer computed digit by digit (no integer overflow at any size).
std::vector<int64_t> encode_digits(const ArithmeticTask& task, const DigitProblem& problem);
/// Disjoint training and test problems of `task`'s size, seeded: `train_count` and `test_count`
/// (fewer where fewer problems exist: the test set gets what training leaves). Small sizes
/// (10^(2n) ≤ 10^6 problems) draw problem indices without replacement (as split_problems);
/// larger ones draw operands digit by digit, uniformly, rejecting repeats.
struct DigitSplit {
  std::vector<DigitProblem> train, test;
};
DigitSplit sample_digit_problems(const ArithmeticTask& task, int64_t train_count,
                                 int64_t test_count, uint64_t seed);
/// The order a digit-order setting names: `lsb` or `msb` (operand_order, answer_order); InputError
/// naming `key` otherwise.
DigitOrder digit_order_setting(const std::string& value, const std::string& key);
/// The share of all problems the paper trains on (docs/arithmetic.md): 0.004 (4,000 problems)
/// for addition, 0.03 (30,000) for multiplication: the one definition of these numbers.
/// Throws InputError for an unknown name.
double paper_train_fraction(const std::string& name);

/// Disjoint train/test problem indices.
struct ArithmeticSplit {
  std::vector<int64_t> train;
  std::vector<int64_t> test;
};
/// Seeded: train = round(fraction · problems) problems; test = `test_size` of the rest
/// (fewer if not that many remain). Throws InputError for a fraction outside (0, 1].
ArithmeticSplit split_problems(const ArithmeticTask& task, double train_fraction, int64_t test_size,
                               uint64_t seed);

}  // namespace maskprior::tasks
