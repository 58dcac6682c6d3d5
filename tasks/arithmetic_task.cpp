#include "tasks/arithmetic_task.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "core/error.h"
#include "tasks/random.h"

namespace maskprior::tasks {
namespace {

int64_t pow10(int e) {
  int64_t v = 1;
  for (int i = 0; i < e; ++i) v *= 10;
  return v;
}

}  // namespace

int64_t ArithmeticTask::problems() const {
  internal_check(operand_digits <= 9, "problems() of a task with more than 9 digits");
  return pow10(2 * operand_digits);
}

int ArithmeticTask::sequence_length() const {
  return 2 * operand_digits + 2 + answer_digits;
}

int ArithmeticTask::answer_offset() const {
  return 2 * operand_digits + 2;
}

Layout ArithmeticTask::layout() const {
  return make_layout({{"a", operand_digits},
                      {op == '+' ? "plus" : "times", 1},
                      {"b", operand_digits},
                      {"eq", 1},
                      {"c", answer_digits}});
}

std::pair<int64_t, int64_t> ArithmeticTask::operands(int64_t problem) const {
  const int64_t base = pow10(operand_digits);
  return {problem / base, problem % base};
}

int64_t ArithmeticTask::result(int64_t a, int64_t b) const {
  return op == '+' ? a + b : a * b;
}

std::map<std::string, DigitOrder> ArithmeticTask::digit_orders() const {
  return {{"a", operand_order}, {"b", operand_order}, {"c", answer_order}};
}

std::vector<int64_t> ArithmeticTask::encode(int64_t problem) const {
  const auto [a, b] = operands(problem);
  std::vector<int64_t> tokens;
  tokens.reserve(static_cast<size_t>(sequence_length()));
  // Token t of a span of `digits` digits holds place t (lsb first) or digits − 1 − t.
  const auto push_digits = [&](int64_t value, int digits, DigitOrder order) {
    for (int t = 0; t < digits; ++t) {
      const int place = order == DigitOrder::kLsbFirst ? t : digits - 1 - t;
      tokens.push_back(value / pow10(place) % 10);
    }
  };
  push_digits(a, operand_digits, operand_order);
  tokens.push_back(op == '+' ? kTokenPlus : kTokenTimes);
  push_digits(b, operand_digits, operand_order);
  tokens.push_back(kTokenEquals);
  push_digits(result(a, b), answer_digits, answer_order);
  return tokens;
}

int64_t ArithmeticTask::decode_answer(const std::vector<int64_t>& answer_tokens) const {
  if (answer_tokens.size() != static_cast<size_t>(answer_digits)) return -1;
  int64_t value = 0;
  for (int place = answer_digits - 1; place >= 0; --place) {  // most significant first
    const int t = answer_order == DigitOrder::kLsbFirst ? place : answer_digits - 1 - place;
    const int64_t digit = answer_tokens[static_cast<size_t>(t)];
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

std::vector<std::string> arithmetic_task_names() {
  return {"addition", "multiplication"};
}

bool is_arithmetic_task(const std::string& name) {
  return name == "addition" || name == "multiplication";
}

ArithmeticTask make_arithmetic_task(const std::string& name, int digits) {
  if (digits < 1 || digits > kMostOperandDigits) {
    throw InputError(fmt::format("{}: operands of {} digits are outside [1, {}]", name, digits,
                                 kMostOperandDigits));
  }
  ArithmeticTask task;
  task.name = name;
  task.operand_digits = digits;
  if (name == "addition") {
    task.op = '+';
    task.answer_digits = digits + 1;
  } else if (name == "multiplication") {
    task.op = '*';
    task.answer_digits = 2 * digits;
  } else {
    throw InputError(fmt::format("unknown arithmetic task '{}' (known: {})", name,
                                 fmt::join(arithmetic_task_names(), ", ")));
  }
  return task;
}

DigitOrder digit_order_setting(const std::string& value, const std::string& key) {
  if (value == "lsb") return DigitOrder::kLsbFirst;
  if (value == "msb") return DigitOrder::kMsbFirst;
  throw InputError(fmt::format("{} must be lsb or msb, got {}", key, quote_input(value)));
}

double paper_train_fraction(const std::string& name) {
  make_arithmetic_task(name);  // InputError for an unknown name
  return name == "addition" ? 0.004 : 0.03;
}

ArithmeticSplit split_problems(const ArithmeticTask& task, double train_fraction, int64_t test_size,
                               uint64_t seed) {
  if (!(train_fraction > 0.0 && train_fraction <= 1.0)) {
    throw InputError(fmt::format("train fraction {} is outside (0, 1]", train_fraction));
  }
  if (test_size < 0) throw InputError(fmt::format("test size {} is negative", test_size));
  const int64_t total = task.problems();
  const int64_t train_count = std::llround(train_fraction * static_cast<double>(total));
  if (train_count == 0) {
    throw InputError(
        fmt::format("train fraction {} selects no problem out of {}", train_fraction, total));
  }
  const int64_t test_count = std::min(test_size, total - train_count);
  // The first train_count + test_count slots become a uniform sample of the problems.
  std::vector<int64_t> order(static_cast<size_t>(total));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 rng(seed);
  shuffle_prefix(order, static_cast<size_t>(train_count + test_count), rng);
  ArithmeticSplit split;
  split.train.assign(order.begin(), order.begin() + train_count);
  split.test.assign(order.begin() + train_count, order.begin() + train_count + test_count);
  std::sort(split.train.begin(), split.train.end());
  std::sort(split.test.begin(), split.test.end());
  return split;
}

namespace {

/// One size of a `--digits` or `--test-digits` list: `A` or `A..B`, appended to `sizes`.
void read_digit_item(const std::string& item, const std::string& key, const std::string& text,
                     std::vector<int>& sizes) {
  const auto number = [&](const std::string& part) {
    size_t used = 0;
    int value = 0;
    try {
      value = std::stoi(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || value < 1 || value > kMostOperandDigits) {
      throw InputError(fmt::format(
          "{} {}: '{}' is not an operand length (a whole number of digits in [1, {}]; e.g. 3, "
          "1..10 or 11,20,50)",
          key, quote_input(text), part, kMostOperandDigits));
    }
    return value;
  };
  const size_t dots = item.find("..");
  if (dots == std::string::npos) {
    sizes.push_back(number(item));
    return;
  }
  const int first = number(item.substr(0, dots)), last = number(item.substr(dots + 2));
  if (first > last) {
    throw InputError(fmt::format("{} {}: the range {}..{} is empty (write the smaller first)", key,
                                 quote_input(text), first, last));
  }
  for (int d = first; d <= last; ++d) sizes.push_back(d);
}

std::vector<int> read_digit_list(const std::string& text, const std::string& key) {
  std::vector<int> sizes;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    read_digit_item(item, key, text, sizes);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

/// The digits of `value` (< 10^digits), least significant first.
std::vector<int8_t> digits_of(int64_t value, int digits) {
  std::vector<int8_t> out(static_cast<size_t>(digits));
  for (auto& d : out) {
    d = static_cast<int8_t>(value % 10);
    value /= 10;
  }
  return out;
}

/// a + b or a · b of least-significant-first digits, as `length` digits (zero padded).
std::vector<int8_t> digit_result(char op, const std::vector<int8_t>& a,
                                 const std::vector<int8_t>& b, int length) {
  std::vector<int32_t> sum(static_cast<size_t>(length) + 1, 0);
  if (op == '+') {
    for (size_t i = 0; i < a.size(); ++i) sum[i] += a[i] + b[i];
  } else {  // schoolbook, O(n²): entries stay below 81 · 2,000, carried once at the end
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t j = 0; j < b.size(); ++j) sum[i + j] += a[i] * b[j];
    }
  }
  std::vector<int8_t> out(static_cast<size_t>(length));
  int32_t carry = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    const int32_t v = sum[k] + carry;
    out[k] = static_cast<int8_t>(v % 10);
    carry = v / 10;
  }
  internal_check(carry == 0 && sum[out.size()] == 0, "the result has more digits than its span");
  return out;
}

/// The digits of problem index `problem` of a size has ≤ 9 digits (as operands() reads it back).
DigitProblem problem_digits(const ArithmeticTask& task, int64_t problem) {
  const auto [a, b] = task.operands(problem);
  return {digits_of(a, task.operand_digits), digits_of(b, task.operand_digits)};
}

}  // namespace

DigitSizes parse_digit_sizes(const std::string& digits, const std::string& test_digits) {
  DigitSizes sizes;
  sizes.train = read_digit_list(digits.empty() ? std::string("3") : digits, "--digits");
  sizes.test = test_digits.empty() ? sizes.train : read_digit_list(test_digits, "--test-digits");
  return sizes;
}

std::vector<int64_t> encode_digits(const ArithmeticTask& task, const DigitProblem& problem) {
  const auto n = static_cast<size_t>(task.operand_digits);
  internal_check(problem.a.size() == n && problem.b.size() == n,
                 "a problem's operands have the task's length");
  std::vector<int64_t> tokens;
  tokens.reserve(static_cast<size_t>(task.sequence_length()));
  const auto push_digits = [&](const std::vector<int8_t>& digits, DigitOrder order) {
    for (size_t t = 0; t < digits.size(); ++t) {
      tokens.push_back(digits[order == DigitOrder::kLsbFirst ? t : digits.size() - 1 - t]);
    }
  };
  push_digits(problem.a, task.operand_order);
  tokens.push_back(task.op == '+' ? kTokenPlus : kTokenTimes);
  push_digits(problem.b, task.operand_order);
  tokens.push_back(kTokenEquals);
  push_digits(digit_result(task.op, problem.a, problem.b, task.answer_digits), task.answer_order);
  return tokens;
}

DigitSplit sample_digit_problems(const ArithmeticTask& task, int64_t train_count,
                                 int64_t test_count, uint64_t seed) {
  if (train_count < 0 || test_count < 0) {
    throw InputError(fmt::format("{} training and {} test problems: counts must not be negative",
                                 train_count, test_count));
  }
  // A seed per size, so adding a size to a run leaves the problems of the others alone.
  std::mt19937_64 rng(seed ^ (0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(task.operand_digits)));
  DigitSplit split;
  if (task.operand_digits <= 3) {  // ≤ 10^6 problems: by index, without replacement
    const int64_t total = task.problems();
    const int64_t train = std::min(train_count, total);
    const int64_t test = std::min(test_count, total - train);
    std::vector<int64_t> order(static_cast<size_t>(total));
    std::iota(order.begin(), order.end(), int64_t{0});
    shuffle_prefix(order, static_cast<size_t>(train + test), rng);
    for (int64_t i = 0; i < train + test; ++i) {
      (i < train ? split.train : split.test)
          .push_back(problem_digits(task, order[static_cast<size_t>(i)]));
    }
    return split;
  }
  // 10^8 or more problems: operands digit by digit; a repeat (rare) is drawn again.
  std::set<std::vector<int8_t>> seen;
  const auto draw = [&] {
    while (true) {
      std::vector<int8_t> key(static_cast<size_t>(2 * task.operand_digits));
      for (auto& d : key) d = static_cast<int8_t>(uniform_below(rng, 10));
      if (!seen.insert(key).second) continue;
      DigitProblem p;
      p.a.assign(key.begin(), key.begin() + task.operand_digits);
      p.b.assign(key.begin() + task.operand_digits, key.end());
      return p;
    }
  };
  for (int64_t i = 0; i < train_count; ++i) split.train.push_back(draw());
  for (int64_t i = 0; i < test_count; ++i) split.test.push_back(draw());
  return split;
}

}  // namespace maskprior::tasks
