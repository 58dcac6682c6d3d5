// Tests of sequence data files (tasks/sequence_file.h): parsing, the vocabulary, encoding, the
// held-out split, and every mistake in a data file with its file, line and column.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/layout.h"
#include "tasks/sequence_file.h"
#include "tests/test_util.h"

namespace maskprior::tasks {
namespace {

namespace fs = std::filesystem;

/// `a[2], eq, c[2]`: N = 5, predicting c (offset 3).
Layout small_layout() {
  return make_layout({{"a", 2}, {"eq", 1}, {"c", 2}});
}

/// The diagnostic `f` throws as SpecError, formatted as the CLI prints it ("" if none).
template <class F>
std::string diagnostic(F f) {
  try {
    f();
  } catch (const SpecError& e) {
    return format_diagnostic(e.diagnostic());
  }
  return "";
}

std::string parse_error(const std::string& text) {
  return diagnostic([&] { parse_sequence_file(text, "d.txt", small_layout()); });
}

TEST(SequenceFile, ReadsOneExamplePerLineAndSkipsBlankLines) {
  const auto file =
      parse_sequence_file("1 2 = 2 1\n\n \t\r\n3  4 =\t4 3\r\n", "d.txt", small_layout());
  EXPECT_EQ(file.length, 5);
  EXPECT_EQ(file.examples(), 2);
  EXPECT_EQ(file.lines, (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(file.symbols, (std::vector<std::string>{"1", "2", "=", "3", "4"}));
  EXPECT_EQ(file.codes, (std::vector<int32_t>{0, 1, 2, 1, 0, 3, 4, 2, 4, 3}));
  EXPECT_EQ(file.columns, (std::vector<int32_t>{1, 3, 5, 7, 9, 1, 4, 6, 8, 10}));
}

TEST(SequenceFile, AByteOrderMarkIsNoSymbol) {
  const auto file = parse_sequence_file(
      "\xef\xbb\xbf"
      "1 2 = 2 1\n",
      "d.txt", small_layout());
  EXPECT_EQ(file.symbols, (std::vector<std::string>{"1", "2", "="}));
  EXPECT_EQ(file.columns.front(), 4);
}

TEST(SequenceFile, VocabularyIsTrainsSymbolsSortedAndEncodes) {
  const auto train = parse_sequence_file("b a = a b\né <s> = <s> é\n", "t.txt", small_layout());
  const auto vocabulary = sequence_vocabulary(train);
  EXPECT_EQ(vocabulary, (std::vector<std::string>{"<s>", "=", "a", "b", "é"}));
  const auto& c = *small_layout().find("c");
  EXPECT_EQ(encode_sequences(train, vocabulary, "t.txt", small_layout(), c),
            (std::vector<int64_t>{3, 2, 1, 2, 3, 4, 0, 1, 0, 4}));
  const auto test = parse_sequence_file("a a = b b\n", "s.txt", small_layout());
  EXPECT_EQ(encode_sequences(test, vocabulary, "t.txt", small_layout(), c),
            (std::vector<int64_t>{2, 2, 1, 3, 3}));
}

TEST(SequenceFile, WrongSymbolCountNamesLineColumnAndLayout) {
  EXPECT_EQ(parse_error("1 2 = 2 1\n1 2 = 2\n"),
            "d.txt:2:8: error: found 4 symbols; expected 5, one per token of the spec's layout "
            "`a[2], eq, c[2]` (N = 5) (lines of several "
            "lengths need a spec with a size parameter, `param n`: docs/your-data.md)\n  1 2 = 2\n "
            "        ^");
  // Too many: the caret is under the first symbol too many, and reading stops there.
  EXPECT_EQ(parse_error("1 2 = 2 1 9 9\n"),
            "d.txt:1:11: error: found more than 5 symbols; expected 5, one per token of the "
            "spec's layout `a[2], eq, c[2]` (N = 5) (lines of several "
            "lengths need a spec with a size parameter, `param n`: docs/your-data.md)\n  1 2 = 2 1 "
            "9 9\n            ^");
}

TEST(SequenceFile, ALongLineIsReadOnlyUpToOneSymbolTooMany) {
  // 4 M symbols on one line: refused at the sixth, with the line left out of the message.
  std::string line;
  for (int i = 0; i < (1 << 22); ++i) line += "7 ";
  EXPECT_EQ(parse_error("1 2 = 2 1\n" + line + "\n"),
            "d.txt:2:11: error: found more than 5 symbols; expected 5, one per token of the "
            "spec's layout `a[2], eq, c[2]` (N = 5) (lines of several lengths need a spec with a "
            "size parameter, `param n`: docs/your-data.md)");
}

TEST(SequenceFile, EmptyOrBlankFileHasNoExamples) {
  EXPECT_EQ(parse_error(""),
            "d.txt:1:1: error: no examples: the file is empty; write one example per line, one "
            "symbol per token of `a[2], eq, c[2]` (N = 5)");
  EXPECT_NE(parse_error("\n  \n\t\n").find("d.txt:3:1: error: no examples: the file is blank"),
            std::string::npos);
}

TEST(SequenceFile, BytesThatAreNotUtf8AreRefusedWhereTheyAre) {
  EXPECT_EQ(parse_error("1 2 = 2 1\n1 2 = \xff 1\n"),
            "d.txt:2:7: error: byte 0xff is not UTF-8 (a data file must be UTF-8 text)\n"
            "  1 2 = \\xff 1\n"
            "        ^");
  for (const std::string bad : {"\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\x80", "\xf4\x90\x80\x80",
                                "\xf8\x88\x80\x80\x80"}) {
    EXPECT_NE(parse_error("1 2 = 2 " + bad + "\n").find("d.txt:1:9: error: byte 0x"),
              std::string::npos)
        << bad;
  }
  // Well-formed multi-byte symbols are fine.
  EXPECT_EQ(parse_error("ä € = 𝄞 1\n"), "");
}

// NUL, ESC and every other control character but tab and CR are refused where they stand, not
// read as part of a symbol (they were: `b\0` was a symbol of its own).
TEST(SequenceFile, ControlCharactersAreRefusedWhereTheyAre) {
  EXPECT_EQ(parse_error(std::string("1 2 = 2 1\n1 2\0 = 2 1\n", 21)),
            "d.txt:2:4: error: the control character 0x00 (NUL) is not text (a data file must be "
            "UTF-8 text; is this UTF-16, or a binary file?)\n"
            "  1 2\\x00 = 2 1\n"
            "     ^");
  EXPECT_EQ(parse_error("1 2 = \x1b[31m2 1\n"),
            "d.txt:1:7: error: the control character 0x1b is not text (a data file must be UTF-8 "
            "text)\n"
            "  1 2 = \\x1b[31m2 1\n"
            "        ^");
  for (const std::string bad : {"\x01", "\x0b", "\x0c", "\x7f", "\xc2\x85"}) {
    EXPECT_NE(parse_error("1 2 = 2" + bad + " 1\n").find("d.txt:1:8: error: the control character"),
              std::string::npos)
        << bad;
  }
  // Tabs and CRLF line ends stay whitespace.
  EXPECT_EQ(parse_error("1\t2 = 2 1\r\n"), "");
}

// Characters that show nothing or pass for a space are part of a symbol (a no-break space does
// not separate two), and a message shows them escaped, with the caret under the right symbol.
TEST(SequenceFile, InvisibleCharactersAreShownEscaped) {
  // "2\u00a01" is one symbol: four on the line, and the caret stands after the last.
  EXPECT_EQ(parse_error("1 2 = 2\xc2\xa0"
                        "1\n"),
            "d.txt:1:11: error: found 4 symbols; expected 5, one per token of the spec's layout "
            "`a[2], eq, c[2]` (N = 5) (lines of several "
            "lengths need a spec with a size parameter, `param n`: docs/your-data.md)\n"
            "  1 2 = 2\\u00a01\n"
            "                ^");
  // A zero-width space before the symbol too many: the caret counts its escape.
  EXPECT_EQ(parse_error("1\xe2\x80\x8b 2 = 2 1 9\n"),
            "d.txt:1:14: error: found more than 5 symbols; expected 5, one per token of the "
            "spec's layout `a[2], eq, c[2]` (N = 5) (lines of several "
            "lengths need a spec with a size parameter, `param n`: docs/your-data.md)\n"
            "  1\\u200b 2 = 2 1 9\n"
            "                  ^");
  const auto train = parse_sequence_file("1 2 = 2 1\n", "train.txt", small_layout());
  const auto test = parse_sequence_file(
      "1 \xef\xbb\xbf"
      "2 = 2 1\n",
      "test.txt", small_layout());
  EXPECT_EQ(diagnostic([&] {
              encode_sequences(test, sequence_vocabulary(train), "train.txt", small_layout(),
                               *small_layout().find("c"));
            }),
            "test.txt:1:3: error: symbol '\\ufeff2' (token a[1]) never occurs in train.txt, so "
            "the model has no token for it; every symbol must occur in the training data\n"
            "  1 \\ufeff2 = 2 1\n"
            "    ^");
}

TEST(SequenceFile, SymbolMissingFromTrainIsAnErrorAtItsFirstUse) {
  const auto train = parse_sequence_file("1 2 = 2 1\n", "train.txt", small_layout());
  const auto vocabulary = sequence_vocabulary(train);
  const auto& c = *small_layout().find("c");
  auto encode_error = [&](const std::string& text) {
    const auto test = parse_sequence_file(text, "test.txt", small_layout());
    return diagnostic([&] { encode_sequences(test, vocabulary, "train.txt", small_layout(), c); });
  };
  EXPECT_EQ(
      encode_error("1 2 = 2 1\n2 7 = 7 2\n"),
      "test.txt:2:3: error: symbol '7' (token a[1]) never occurs in train.txt, so the model "
      "has no token for it; every symbol must occur in the training data\n  2 7 = 7 2\n    ^");
  EXPECT_NE(encode_error("1 2 = 2 x\n")
                .find("test.txt:1:9: error: symbol 'x' (token c[1], which the model predicts)"),
            std::string::npos);
}

// A test symbol the model must write but never wrote in training: known, yet never a target.
TEST(SequenceFile, PredictedSymbolsMustBePredictedInTrain) {
  const auto train = parse_sequence_file("1 2 = 2 1\n3 4 = 4 3\n", "train.txt", small_layout());
  const auto& c = *small_layout().find("c");
  const auto good = parse_sequence_file("4 3 = 3 4\n", "test.txt", small_layout());
  EXPECT_EQ(diagnostic([&] { check_predicted_symbols(good, train, c); }), "");
  const auto bad = parse_sequence_file("4 3 = 3 4\n2 1 = 1 =\n", "test.txt", small_layout());
  EXPECT_EQ(diagnostic([&] { check_predicted_symbols(bad, train, c); }),
            "test.txt:2:9: error: symbol '=' (token c[1], which the model predicts) never occurs "
            "in span c of train.txt, so the model is never trained to write it\n  2 1 = 1 =\n"
            "          ^");
}

TEST(SequenceFile, PredictedSpanMustExistAndHaveATokenBeforeIt) {
  const auto layout = small_layout();
  EXPECT_EQ(predicted_span(layout, "c", "s.mask").offset, 3);
  EXPECT_EQ(diagnostic([&] { predicted_span(layout, "d", "s.mask"); }),
            "s.mask: error: --predict 'd': unknown span 'd' (spans: a[2], eq, c[2])");
  EXPECT_NE(diagnostic([&] {
              predicted_span(layout, "a", "s.mask");
            }).find("span `a` starts the sequence"),
            std::string::npos);
}

TEST(SequenceFile, HeldOutSplitIsASeededTenthOfTrain) {
  const auto split = hold_out(95, /*seed=*/4, "t.txt");
  EXPECT_EQ(split.test.size(), 10u);  // round(9.5) = 10
  EXPECT_EQ(split.train.size(), 85u);
  std::set<int64_t> all(split.train.begin(), split.train.end());
  all.insert(split.test.begin(), split.test.end());
  EXPECT_EQ(all.size(), 95u);  // disjoint, and together every example
  EXPECT_TRUE(std::is_sorted(split.test.begin(), split.test.end()));
  EXPECT_EQ(hold_out(95, 4, "t.txt").test, split.test);  // the seed fixes it
  EXPECT_NE(hold_out(95, 5, "t.txt").test, split.test);
  EXPECT_EQ(hold_out(2, 0, "t.txt").test.size(), 1u);  // at least one each
  EXPECT_EQ(hold_out(2, 0, "t.txt").train.size(), 1u);
  EXPECT_NE(diagnostic([] { hold_out(1, 0, "t.txt"); }).find("t.txt: error: 1 example"),
            std::string::npos);
}

TEST(SequenceFile, ReadsOnlyRegularFiles) {
  const auto dir = maskprior::testing::unique_temp_dir("maskprior_seqfile");
  const auto path = (dir / "d.txt").string();
  std::ofstream(path) << "1 2 = 2 1\n";
  EXPECT_EQ(read_sequence_file(path, small_layout()).examples(), 1);
  EXPECT_THROW(read_sequence_file(dir.string(), small_layout()), InputError);
  EXPECT_THROW(read_sequence_file((dir / "missing.txt").string(), small_layout()), InputError);
  EXPECT_THROW(read_sequence_file(path, small_layout(), /*max_bytes=*/4), InputError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace maskprior::tasks
