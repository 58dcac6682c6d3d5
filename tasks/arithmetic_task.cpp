#include "tasks/arithmetic_task.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

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

ArithmeticTask make_arithmetic_task(const std::string& name) {
  ArithmeticTask task;
  task.name = name;
  if (name == "addition") {
    task.op = '+';
    task.answer_digits = 4;
  } else if (name == "multiplication") {
    task.op = '*';
    task.answer_digits = 6;
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

}  // namespace maskprior::tasks
