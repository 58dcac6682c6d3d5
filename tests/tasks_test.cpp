#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "core/error.h"
#include "tasks/arithmetic_task.h"
#include "tasks/boolean_task.h"
#include "tasks/random.h"
#include "tasks/truth_table.h"
#include "tests/test_util.h"

namespace maskprior::tasks {
namespace {

size_t count_seen(const BooleanDataset& data) {
  return static_cast<size_t>(std::count(data.seen.begin(), data.seen.end(), 1));
}

using maskprior::testing::input_error;
using maskprior::testing::spec_error;

TEST(BooleanTask, CubeIndexConvention) {
  const BooleanTask task = make_boolean_task("parity2", 4);
  EXPECT_EQ(task.point(0), (std::vector<int8_t>{1, 1, 1, 1}));
  EXPECT_EQ(task.point(0b0101), (std::vector<int8_t>{-1, 1, -1, 1}));
  EXPECT_EQ(task.layout().spans.size(), 2u);
  EXPECT_EQ(task.layout().spans[1].length, 4);
}

TEST(BooleanTask, Parity2SplitSizes) {
  const BooleanTask task = make_boolean_task("parity2");
  EXPECT_EQ(task.values, (std::vector<double>{-1, 1}));
  const BooleanDataset cube = full_cube(task);
  ASSERT_EQ(cube.rows(), 32768u);
  EXPECT_EQ(count_seen(cube), 24576u);
  const BooleanDataset train = training_set(task, /*seed=*/1);
  EXPECT_EQ(train.rows(), 24576u);
  for (size_t r = 0; r < train.rows(); ++r) {
    const int8_t x0 = train.x[r * 15], x1 = train.x[r * 15 + 1];
    ASSERT_TRUE(x0 == 1 || x1 == 1);
    ASSERT_EQ(train.y[r], x0 * x1);
  }
}

// train_domain all: every point of the cube once, the unseen ones too (for maj3 as well).
TEST(BooleanTask, EveryPointTrainsOnTheWholeCube) {
  for (const char* name : {"parity2", "maj3"}) {
    const BooleanTask task = make_boolean_task(name);
    const BooleanDataset all = training_set(task, /*seed=*/1, /*every_point=*/true);
    const BooleanDataset cube = full_cube(task);
    EXPECT_EQ(all.rows(), 32768u) << name;
    EXPECT_EQ(all.x, cube.x) << name;
    EXPECT_EQ(all.y, cube.y) << name;
    EXPECT_EQ(count_seen(all), 24576u) << name;  // the unseen points are in it
  }
}

TEST(BooleanTask, TargetsAndSeenDomains) {
  const BooleanTask maj3 = make_boolean_task("maj3");
  EXPECT_EQ(maj3.target(maj3.point(0b011)), -1.0);  // x0 = x1 = −1, x2 = 1
  EXPECT_EQ(maj3.target(maj3.point(0b100)), 1.0);
  EXPECT_EQ(count_seen(full_cube(maj3)), 24576u);

  const BooleanTask cyclic3 = make_boolean_task("cyclic3");
  EXPECT_EQ(cyclic3.target(cyclic3.point(0)), 15.0);
  // x0 = −1 flips the three windows that contain it: x13x14x0, x14x0x1, x0x1x2.
  EXPECT_EQ(cyclic3.target(cyclic3.point(1)), 9.0);
  EXPECT_EQ(count_seen(full_cube(cyclic3)), 32768u * 7 / 8);

  const BooleanTask threesym = make_boolean_task("threesym");
  EXPECT_DOUBLE_EQ(threesym.target(threesym.point(0)), 1.25);
  EXPECT_EQ(count_seen(full_cube(threesym)), 16384u);
  // (x0x1, x1x2, x2x0) has product 1: four patterns.
  EXPECT_EQ(threesym.values, (std::vector<double>{-3.75, 0.75, 1.25, 1.75}));
}

TEST(BooleanTask, Cyclic3ValuesAreThoseAttained) {
  const BooleanTask task = make_boolean_task("cyclic3", 9);
  std::set<double> attained;
  for (uint64_t p = 0; p < 512; ++p) attained.insert(task.target(task.point(p)));
  EXPECT_EQ(task.values, std::vector<double>(attained.begin(), attained.end()));
  // Exactly one flipped window is impossible: n − 2 is never attained.
  EXPECT_EQ(std::count(task.values.begin(), task.values.end(), 7.0), 0);
}

TEST(BooleanTask, NearestValueTiesGoDown) {
  const BooleanTask task = make_boolean_task("parity2");
  EXPECT_EQ(task.nearest_value(0.0), -1.0);
  EXPECT_EQ(task.nearest_value(0.01), 1.0);
  EXPECT_EQ(task.nearest_value(-7.0), -1.0);
}

TEST(BooleanTask, Maj3SamplesSeenPointsDeterministically) {
  const BooleanTask task = make_boolean_task("maj3");
  const BooleanDataset a = training_set(task, /*seed=*/7);
  const BooleanDataset b = training_set(task, /*seed=*/7);
  const BooleanDataset c = training_set(task, /*seed=*/8);
  ASSERT_EQ(a.rows(), 32768u);  // 2^n draws with replacement
  EXPECT_EQ(a.x, b.x);
  EXPECT_NE(a.x, c.x);
  EXPECT_EQ(count_seen(a), a.rows());
  std::set<std::vector<int8_t>> distinct;
  for (size_t r = 0; r < a.rows(); ++r) {
    ASSERT_TRUE(a.x[r * 15] == 1 || a.x[r * 15 + 1] == 1);
    const auto row = a.x.begin() + static_cast<std::ptrdiff_t>(r * 15);
    distinct.insert(std::vector<int8_t>(row, row + 15));
  }
  // Drawing 2^15 times from 24,576 points repeats some: about 1 − e^(−4/3) are hit.
  EXPECT_GT(distinct.size(), 16000u);
  EXPECT_LT(distinct.size(), 20000u);
}

TEST(BooleanTask, RejectsUnknownNamesAndSizes) {
  EXPECT_NE(input_error([] { make_boolean_task("parity3"); }).find("unknown Boolean task"),
            std::string::npos);
  EXPECT_NE(input_error([] { make_boolean_task("maj3", 2); }).find("n = 2"), std::string::npos);
  EXPECT_NE(input_error([] { make_boolean_task("parity2", 40); }).find("n = 40"),
            std::string::npos);
  EXPECT_TRUE(is_boolean_task("threesym"));
  EXPECT_FALSE(is_boolean_task("addition"));
}

TEST(ArithmeticTask, EncodesOurFormat) {
  const ArithmeticTask add = make_arithmetic_task("addition");
  EXPECT_EQ(add.problems(), 1000000);
  EXPECT_EQ(add.sequence_length(), 12);
  EXPECT_EQ(add.answer_offset(), 8);
  // 123 + 456 = 579: operands msb first, answer lsb first, zero padded to 4 digits.
  EXPECT_EQ(add.encode(123456),
            (std::vector<int64_t>{1, 2, 3, kTokenPlus, 4, 5, 6, kTokenEquals, 9, 7, 5, 0}));
  EXPECT_EQ(add.decode_answer({9, 7, 5, 0}), 579);
  EXPECT_EQ(add.decode_answer({9, 7, kTokenPlus, 0}), -1);
  EXPECT_EQ(add.decode_answer({9, 7, 5}), -1);

  const ArithmeticTask mul = make_arithmetic_task("multiplication");
  EXPECT_EQ(mul.sequence_length(), 14);
  EXPECT_EQ(mul.encode(999999),
            (std::vector<int64_t>{9, 9, 9, kTokenTimes, 9, 9, 9, kTokenEquals, 1, 0, 0, 8, 9, 9}));
  EXPECT_EQ(mul.encode(7),
            (std::vector<int64_t>{0, 0, 0, kTokenTimes, 0, 0, 7, kTokenEquals, 0, 0, 0, 0, 0, 0}));
  for (int64_t p : {0, 1, 500500, 999999, 123456}) {
    const std::vector<int64_t> tokens = mul.encode(p);
    const auto [a, b] = mul.operands(p);
    EXPECT_EQ(mul.decode_answer({tokens.begin() + mul.answer_offset(), tokens.end()}), a * b);
  }
  EXPECT_EQ(mul.layout().spans.back().name, "c");
  EXPECT_EQ(mul.layout().spans.back().length, 6);
  EXPECT_NE(input_error([] { make_arithmetic_task("division"); }).find("division"),
            std::string::npos);
}

// --operand-order and --answer-order: the same problem with its digits the other way round, and
// decode_answer reads the answer in the order it was written.
TEST(ArithmeticTask, EncodesEveryDigitOrder) {
  ArithmeticTask add = make_arithmetic_task("addition");
  add.answer_order = DigitOrder::kMsbFirst;  // 123 + 456 = 0579
  EXPECT_EQ(add.encode(123456),
            (std::vector<int64_t>{1, 2, 3, kTokenPlus, 4, 5, 6, kTokenEquals, 0, 5, 7, 9}));
  EXPECT_EQ(add.decode_answer({0, 5, 7, 9}), 579);
  add.operand_order = DigitOrder::kLsbFirst;
  EXPECT_EQ(add.encode(123456),
            (std::vector<int64_t>{3, 2, 1, kTokenPlus, 6, 5, 4, kTokenEquals, 0, 5, 7, 9}));
  add.answer_order = DigitOrder::kLsbFirst;
  EXPECT_EQ(add.encode(123456),
            (std::vector<int64_t>{3, 2, 1, kTokenPlus, 6, 5, 4, kTokenEquals, 9, 7, 5, 0}));
  EXPECT_EQ(add.decode_answer({9, 7, 5, 0}), 579);

  ArithmeticTask mul = make_arithmetic_task("multiplication");
  mul.answer_order = DigitOrder::kMsbFirst;
  EXPECT_EQ(mul.encode(999999),
            (std::vector<int64_t>{9, 9, 9, kTokenTimes, 9, 9, 9, kTokenEquals, 9, 9, 8, 0, 0, 1}));
  EXPECT_EQ(mul.digit_orders(), (std::map<std::string, DigitOrder>{{"a", DigitOrder::kMsbFirst},
                                                                   {"b", DigitOrder::kMsbFirst},
                                                                   {"c", DigitOrder::kMsbFirst}}));
  EXPECT_EQ(digit_order_setting("lsb", "answer_order"), DigitOrder::kLsbFirst);
  EXPECT_EQ(digit_order_setting("msb", "answer_order"), DigitOrder::kMsbFirst);
  EXPECT_NE(input_error([] {
              digit_order_setting("lsb_first", "operand_order");
            }).find("operand_order must be lsb or msb"),
            std::string::npos);
}

TEST(ArithmeticTask, SplitsAreExactDisjointAndSeeded) {
  const ArithmeticTask add = make_arithmetic_task("addition");
  const ArithmeticSplit split = split_problems(add, 0.004, 10000, /*seed=*/1);
  EXPECT_EQ(split.train.size(), 4000u);
  EXPECT_EQ(split.test.size(), 10000u);
  std::vector<int64_t> both;
  std::set_intersection(split.train.begin(), split.train.end(), split.test.begin(),
                        split.test.end(), std::back_inserter(both));
  EXPECT_TRUE(both.empty());
  EXPECT_TRUE(std::is_sorted(split.train.begin(), split.train.end()));
  EXPECT_EQ(std::adjacent_find(split.train.begin(), split.train.end()), split.train.end());
  EXPECT_GE(split.train.front(), 0);
  EXPECT_LT(split.test.back(), add.problems());

  EXPECT_EQ(split_problems(add, 0.004, 10000, 1).train, split.train);
  EXPECT_NE(split_problems(add, 0.004, 10000, 2).train, split.train);
  // Pinned: a seed names the same problems on every platform (runs are reproduced from it).
  EXPECT_EQ(std::vector<int64_t>(split.train.begin(), split.train.begin() + 5),
            (std::vector<int64_t>{393, 1168, 1193, 2022, 2254}));
  EXPECT_EQ(std::vector<int64_t>(split.test.begin(), split.test.begin() + 5),
            (std::vector<int64_t>{100, 489, 603, 729, 794}));
  EXPECT_EQ(split.train.back(), 999691);
  EXPECT_EQ(split.test.back(), 999942);
  // A uniform sample: about half of each set lies in the lower half of the problems.
  for (const auto* set : {&split.train, &split.test}) {
    const auto lower =
        std::count_if(set->begin(), set->end(), [](int64_t p) { return p < 500000; });
    EXPECT_NEAR(static_cast<double>(lower) / static_cast<double>(set->size()), 0.5, 0.05);
  }
  EXPECT_EQ(split_problems(add, 0.03, 10000, 1).train.size(), 30000u);

  const ArithmeticSplit all = split_problems(add, 1.0, 10000, 1);
  EXPECT_EQ(all.train.size(), 1000000u);
  EXPECT_TRUE(all.test.empty());
  EXPECT_NE(input_error([&] { split_problems(add, 0.0, 10, 1); }).find("outside (0, 1]"),
            std::string::npos);
  EXPECT_NE(input_error([&] { split_problems(add, 1.5, 10, 1); }).find("outside (0, 1]"),
            std::string::npos);
  EXPECT_NE(input_error([&] { split_problems(add, 1e-9, 10, 1); }).find("selects no problem"),
            std::string::npos);
}

TEST(ArithmeticTask, PaperTrainFractions) {
  EXPECT_DOUBLE_EQ(paper_train_fraction("addition"), 0.004);
  EXPECT_DOUBLE_EQ(paper_train_fraction("multiplication"), 0.03);
  EXPECT_EQ(split_problems(make_arithmetic_task("addition"), paper_train_fraction("addition"), 0, 1)
                .train.size(),
            4000u);
  EXPECT_NE(input_error([] { paper_train_fraction("parity2"); }).find("parity2"),
            std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Seeded shuffles (tasks/random.h).

std::vector<int> iota_vector(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(Random, ShuffleIsASeededPermutation) {
  std::mt19937_64 rng(42);
  std::vector<int> items = iota_vector(10);
  shuffle_in_place(items, rng);
  // Pinned: the same order on every platform (probe batches and data orders depend on it).
  EXPECT_EQ(items, (std::vector<int>{1, 7, 9, 0, 3, 8, 4, 2, 5, 6}));
  std::vector<int> sorted = items;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota_vector(10));
  std::mt19937_64 again(42), other(43);
  std::vector<int> same = iota_vector(10), different = iota_vector(10);
  shuffle_in_place(same, again);
  shuffle_in_place(different, other);
  EXPECT_EQ(same, items);
  EXPECT_NE(different, items);
  std::vector<int> empty, one{7};
  shuffle_in_place(empty, rng);
  shuffle_in_place(one, rng);
  EXPECT_EQ(one, std::vector<int>{7});
}

TEST(Random, ShuffleIsUniform) {
  // 6,000 shuffles of 3 items: each of the 6 orders about 1,000 times (σ ≈ 29).
  std::mt19937_64 rng(7);
  std::map<std::vector<int>, int> counts;
  for (int i = 0; i < 6000; ++i) {
    std::vector<int> items = iota_vector(3);
    shuffle_in_place(items, rng);
    ++counts[items];
  }
  ASSERT_EQ(counts.size(), 6u);
  for (const auto& [order, count] : counts) {
    EXPECT_GT(count, 850);
    EXPECT_LT(count, 1150);
  }
}

TEST(Random, ShufflePrefixSamplesWithoutReplacement) {
  std::mt19937_64 rng(5);
  std::vector<int> first_counts(10, 0);
  for (int i = 0; i < 10000; ++i) {
    std::vector<int> items = iota_vector(10);
    shuffle_prefix(items, 3, rng);
    std::vector<int> sorted = items;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(sorted, iota_vector(10));  // still a permutation: the rest holds the unpicked
    ++first_counts[static_cast<size_t>(items[0])];
  }
  for (int count : first_counts) {  // each item picked first about 1,000 times (σ ≈ 30)
    EXPECT_GT(count, 850);
    EXPECT_LT(count, 1150);
  }
  std::vector<int> none = iota_vector(4);
  shuffle_prefix(none, 0, rng);
  EXPECT_EQ(none, iota_vector(4));
}

// ---------------------------------------------------------------------------------------------
// Truth tables.

TEST(TruthTable, BooleanTaskCube) {
  const TruthTable table = boolean_truth_table(make_boolean_task("parity2"));
  EXPECT_TRUE(table.cube);
  EXPECT_EQ(table.rows, 32768);
  EXPECT_EQ(table.inputs.front(), "x0");
  EXPECT_EQ(std::count(table.seen.begin(), table.seen.end(), 1), 24576);
  for (int64_t p = 0; p < table.rows; ++p) {
    const double x0 = table.input(p, 0), x1 = table.input(p, 1);
    ASSERT_EQ(table.y[0][static_cast<size_t>(p)], x0 * x1) << "point " << p;
    ASSERT_EQ(table.seen[static_cast<size_t>(p)], x0 == 1 || x1 == 1 ? 1 : 0) << "point " << p;
  }
}

TEST(TruthTable, Arithmetic) {
  const TruthTable table = arithmetic_truth_table(make_arithmetic_task("addition"));
  EXPECT_FALSE(table.cube);
  EXPECT_EQ(table.rows, 1000000);
  EXPECT_EQ(table.inputs,
            (std::vector<std::string>{"a[0]", "a[1]", "a[2]", "b[0]", "b[1]", "b[2]"}));
  EXPECT_EQ(table.outputs.size(), 4u);
  // Row 123456: 123 + 456 = 579.
  EXPECT_EQ(table.input(123456, 0), 1.0);
  EXPECT_EQ(table.input(123456, 5), 6.0);
  EXPECT_EQ(table.y[0][123456], 9.0);
  EXPECT_EQ(table.y[3][123456], 0.0);
  EXPECT_EQ(table.values[3], (std::vector<double>{0, 1}));  // sums stay below 2000
  // Every row: the inputs are the operands' digits and the outputs the sum's.
  for (int64_t p = 0; p < table.rows; p += 997) {
    const double a = table.input(p, 0) * 100 + table.input(p, 1) * 10 + table.input(p, 2);
    const double b = table.input(p, 3) * 100 + table.input(p, 4) * 10 + table.input(p, 5);
    ASSERT_EQ(a * 1000 + b, static_cast<double>(p));
    double c = 0;
    for (size_t j = 4; j-- > 0;) c = c * 10 + table.y[j][static_cast<size_t>(p)];
    ASSERT_EQ(c, a + b) << "row " << p;
  }
}

TEST(TruthTable, CsvCompleteCubeIsReordered) {
  const TruthTable table = read_truth_table_csv(MASKPRIOR_TEST_DATA "/csv/parity2_seen.csv");
  EXPECT_TRUE(table.cube);
  EXPECT_FALSE(table.zero_one_inputs);
  EXPECT_EQ(table.inputs, (std::vector<std::string>{"x0", "x1"}));
  EXPECT_EQ(table.outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(table.y[0], (std::vector<double>{1, -1, -1, 1}));  // cube order
  EXPECT_EQ(table.seen, (std::vector<uint8_t>{1, 1, 1, 0}));
  EXPECT_EQ(table.values[0], (std::vector<double>{-1, 1}));
}

TEST(TruthTable, CsvGeneralAndZeroOne) {
  const TruthTable digits =
      parse_truth_table_csv("a,b,y0,y1\n1,2,3,0\n2,2,4,0\n9,9,8,1\n", "d.csv");
  EXPECT_FALSE(digits.cube);
  EXPECT_EQ(digits.rows, 3);
  EXPECT_EQ(digits.input(2, 1), 9.0);
  EXPECT_EQ(digits.outputs, (std::vector<std::string>{"y0", "y1"}));

  // 0/1 inputs are read as −1/+1; x0 = 1 ↔ +1 ↔ bit 0.
  const TruthTable zero_one =
      parse_truth_table_csv("x[0],x[1],y\n1,1,5\n0,1,6\n1,0,7\n0,0,8\n1,1,5\n", "z.csv");
  EXPECT_TRUE(zero_one.cube);
  EXPECT_TRUE(zero_one.zero_one_inputs);
  EXPECT_EQ(zero_one.y[0], (std::vector<double>{5, 6, 7, 8}));
}

TEST(TruthTable, CsvErrorsNameFileLineAndColumn) {
  auto error = [](const std::string& text) {
    return spec_error([&] { parse_truth_table_csv(text, "t.csv"); });
  };
  EXPECT_EQ(error("x0,x1\n1,1\n"),
            "t.csv:1:1: error: missing output column: name it `y` (or `y0, y1, ...`)\n"
            "  x0,x1\n"
            "  ^");
  EXPECT_EQ(error("# c\n\ny\n1\n"), "t.csv:3:1: error: no input columns (e.g. `x0, x1`)\n  y\n  ^");
  EXPECT_EQ(error("x0,y\n1,1\n-1, abc\n"),
            "t.csv:3:5: error: column 'y': 'abc' is not a number\n  -1, abc\n      ^");
  EXPECT_EQ(error("x0,x1,y\n1,1,1\n1,-1\n"),
            "t.csv:3:5: error: expected 3 values (as in the header on line 1), found 2\n"
            "  1,-1\n"
            "      ^");
  EXPECT_EQ(error("x0,y\n1,1,7\n"),
            "t.csv:2:5: error: expected 2 values (as in the header on line 1), found 3\n"
            "  1,1,7\n"
            "      ^");
  EXPECT_EQ(error("x0,y,seen\n1,1,2\n"),
            "t.csv:2:5: error: column 'seen': '2' is not 0 or 1\n  1,1,2\n      ^");
  EXPECT_EQ(error("x0,x0,y\n"), "t.csv:1:4: error: column 'x0' appears twice\n  x0,x0,y\n     ^");
  EXPECT_EQ(error("x0,,y\n"), "t.csv:1:4: error: column 2 has no name\n  x0,,y\n     ^");
  EXPECT_EQ(error("x0,y,seen\n1,1,1\n-1,1,1\n\n1,1,0\n"),
            "t.csv:5:5: error: same inputs as line 2 but a different seen flag\n  1,1,0\n      ^");
  EXPECT_EQ(error("x0,y0,y1\n1,1,1\n1,1,2\n"),
            "t.csv:3:5: error: same inputs as line 2 but a different output\n  1,1,2\n      ^");
  EXPECT_EQ(spec_error([] { read_truth_table_csv(MASKPRIOR_TEST_DATA "/csv/bad_duplicate.csv"); }),
            MASKPRIOR_TEST_DATA
            "/csv/bad_duplicate.csv:4:5: error: same inputs as line 2 but a different output\n"
            "  1,1,-1\n"
            "      ^");
  EXPECT_NE(input_error([] {
              read_truth_table_csv("/nonexistent/t.csv");
            }).find("cannot read truth table '/nonexistent/t.csv'"),
            std::string::npos);
}

// Line 0 is no line: an empty file, or one of comments only, is refused at line 1 or its last.
TEST(TruthTable, CsvWithoutAHeaderIsRefusedAtALine) {
  auto error = [](const std::string& text) {
    return spec_error([&] { parse_truth_table_csv(text, "t.csv"); });
  };
  EXPECT_EQ(error(""),
            "t.csv:1:1: error: empty truth table: the file is empty; its first line names the "
            "columns, e.g. `x0,x1,y`");
  EXPECT_EQ(error("\n\n"),
            "t.csv:2:1: error: empty truth table: the file is empty; its first line names the "
            "columns, e.g. `x0,x1,y`");
  EXPECT_EQ(error("# only\n# comments\n"),
            "t.csv:2:1: error: empty truth table: the file is only comments; its first line "
            "names the columns, e.g. `x0,x1,y`");
  EXPECT_EQ(error("# c\nx0,y\n"),
            "t.csv:2:1: error: truth table has a header but no rows\n  x0,y\n  ^");
}

// NUL, ESC and the other control characters, and bytes that are not UTF-8, are refused where
// they stand (a UTF-16 or binary file is no truth table); tab and CR (CRLF line ends) are fine.
TEST(TruthTable, CsvControlBytesAreRefusedWhereTheyAre) {
  auto error = [](const std::string& text) {
    return spec_error([&] { parse_truth_table_csv(text, "t.csv"); });
  };
  EXPECT_EQ(error(std::string("x0,y\n1,1\0\n", 10)),
            "t.csv:2:4: error: the control character 0x00 (NUL) is not text (a truth table must "
            "be UTF-8 text; is this UTF-16, or a binary file?)\n"
            "  1,1\\x00\n"
            "     ^");
  EXPECT_EQ(error("x0,y\n\x1b[2J1,1\n"),
            "t.csv:2:1: error: the control character 0x1b is not text (a truth table must be "
            "UTF-8 text)\n"
            "  \\x1b[2J1,1\n"
            "  ^");
  EXPECT_NE(error("\xff\xfex\x00")
                .find("t.csv:1:1: error: byte 0xff is not UTF-8 (a truth table "
                      "must be UTF-8 text; is this UTF-16, or a binary file?)"),
            std::string::npos);
  EXPECT_NE(error("x0,y\n1,\xc2\x9b"
                  "1\n")
                .find("t.csv:2:3: error: the control character U+009B"),
            std::string::npos);
  EXPECT_NE(error("x0,y\n1,1\x7f\n").find("t.csv:2:4: error: the control character 0x7f"),
            std::string::npos);
  EXPECT_NE(error("x0,y\n1,\v1\n").find("t.csv:2:3: error: the control character 0x0b"),
            std::string::npos);
  const TruthTable crlf = parse_truth_table_csv("x0,\ty\r\n1,\t1\r\n-1,-1\r\n", "t.csv");
  EXPECT_EQ(crlf.rows, 2);
}

// A byte-order mark before the header (spreadsheets write one) is ignored; invisible characters
// elsewhere are shown escaped, and the caret stands under the name that holds them.
TEST(TruthTable, CsvByteOrderMarkAndInvisibleCharacters) {
  const TruthTable bom = parse_truth_table_csv("\xef\xbb\xbfx0,y\n1,1\n-1,-1\n", "t.csv");
  EXPECT_EQ(bom.inputs, (std::vector<std::string>{"x0"}));
  EXPECT_EQ(bom.input_columns, (std::vector<int>{4}));
  auto error = [](const std::string& text) {
    return spec_error([&] { parse_truth_table_csv(text, "t.csv"); });
  };
  // U+00A0 (no-break space) before a value: not a number, and it says why.
  EXPECT_EQ(error("x0,y\n1,\xc2\xa0"
                  "1\n"),
            "t.csv:2:3: error: column 'y': '\\u00a01' is not a number\n  1,\\u00a01\n    ^");
  // A zero-width space in a header name, then the column after it: the caret counts the escape.
  EXPECT_EQ(error("x\xe2\x80\x8b"
                  "0,x0,x0\n"),
            "t.csv:1:10: error: column 'x0' appears twice\n  x\\u200b0,x0,x0\n              ^");
  EXPECT_EQ(error("y,x\xe2\x80\x8b"
                  "0,x\xe2\x80\x8b"
                  "0\n"),
            "t.csv:1:9: error: column 'x\\u200b0' appears twice\n"
            "  y,x\\u200b0,x\\u200b0\n"
            "             ^");
}

// A header that another dialect of CSV wrote (`;` or tabs between columns, quoted names) is
// refused with how to write it.
TEST(TruthTable, CsvHeaderOfAnotherDialectGetsAHint) {
  auto error = [](const std::string& text) {
    return spec_error([&] { parse_truth_table_csv(text, "t.csv"); });
  };
  EXPECT_EQ(error("x0;x1;y\n1;1;1\n"),
            "t.csv:1:3: error: column name 'x0;x1;y' holds `;`; the file looks `;`-separated, "
            "but a truth table is comma-separated: write the header as 'x0,x1,y'\n"
            "  x0;x1;y\n"
            "    ^");
  EXPECT_EQ(error("\"x0\",\"x1\",y\n1,1,1\n"),
            "t.csv:1:1: error: column name '\"x0\"' holds `\"`; a truth table writes names and "
            "values without quotes: write the header as 'x0,x1,y'\n"
            "  \"x0\",\"x1\",y\n"
            "  ^");
  EXPECT_NE(error("x0\tx1\ty\n")
                .find("t.csv:1:3: error: column name 'x0\tx1\ty' holds a tab; "
                      "the file looks tab-separated"),
            std::string::npos);
  // A row in another dialect says so too.
  EXPECT_NE(error("x0,y\n1;1\n").find("found 1; the file looks `;`-separated"), std::string::npos);
  EXPECT_NE(error("x0,y\n1,\"1\"\n")
                .find("is not a number; a truth table writes names and "
                      "values without quotes"),
            std::string::npos);
}

}  // namespace
}  // namespace maskprior::tasks
