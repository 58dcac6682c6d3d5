// Tests of the vision and language data (tasks/idx_file, tasks/fashion_mnist, tasks/text_corpus):
// IDX and gzip parsing including corrupt files, the Fashion-MNIST reader's errors, and the seeded
// split of a text corpus by file. Every file is written by the test, under a temporary folder.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "tasks/family.h"
#include "tasks/fashion_mnist.h"
#include "tasks/idx_file.h"
#include "tasks/text_corpus.h"
#include "tests/test_util.h"
#include "tests/vision_language_fixture.h"

namespace maskprior::tasks {
namespace {

namespace fs = std::filesystem;
using maskprior::testing::gzip_bytes;
using maskprior::testing::idx_bytes;
using maskprior::testing::input_error;
using maskprior::testing::write_bytes;

class VlTasksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = maskprior::testing::unique_temp_dir(fmt::format("maskprior_vl_{}", info->name()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Expects read_idx_file(path) to fail with a message holding every part of `parts`.
  static void expect_refused(const fs::path& path, const std::vector<std::string>& parts) {
    const std::string message = input_error([&] { read_idx_file(path.string()); });
    ASSERT_FALSE(message.empty()) << path;
    for (const auto& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// IDX and gzip

TEST_F(VlTasksTest, ReadsPlainAndGzippedIdx) {
  const std::vector<uint8_t> values = {1, 2, 3, 4, 5, 6};
  write_bytes(dir_ / "a.idx", idx_bytes({2, 3}, values));
  write_bytes(dir_ / "a.idx.gz", gzip_bytes(idx_bytes({2, 3}, values)));
  for (const char* name : {"a.idx", "a.idx.gz"}) {
    const IdxArray array = read_idx_file((dir_ / name).string());
    EXPECT_EQ(array.dims, (std::vector<int64_t>{2, 3})) << name;
    EXPECT_EQ(array.data, values) << name;
  }
}

TEST_F(VlTasksTest, CorruptIdxHeadersAreRefused) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {std::string("\x00\x00\x08", 3), {"shorter than a header"}},
      {std::string("\x01\x00\x08\x01\x00\x00\x00\x01x", 9), {"two zero bytes"}},
      {std::string("\x00\x00\x0d\x01\x00\x00\x00\x01x", 9), {"element type 0x0d"}},
      {std::string("\x00\x00\x08\x00", 4), {"0 dimensions"}},
      {std::string("\x00\x00\x08\x05", 4), {"5 dimensions"}},
      {std::string("\x00\x00\x08\x02\x00\x00\x00\x02", 8), {"shorter than its header of 12"}},
      {idx_bytes({2, 3}, {1, 2, 3, 4, 5}), {"claims 6 values but 5 bytes follow"}},
      {idx_bytes({2, 3}, {1, 2, 3, 4, 5, 6, 7}), {"claims 6 values but 7 bytes follow"}},
      {idx_bytes({0xffffffff, 0xffffffff, 0xffffffff}, {}), {"overflows"}},
      // 2^32 − 1 squared fits in 64 bits but is far more than the bytes that follow.
      {idx_bytes({0xffffffff, 0xffffffff}, {}), {"claims 18446744065119617025 values"}},
  };
  int i = 0;
  for (const auto& [bytes, parts] : cases) {
    const fs::path path = dir_ / fmt::format("case{}.idx", i++);
    write_bytes(path, bytes);
    auto with_name = parts;
    with_name.push_back(path.string());
    with_name.push_back("is not a valid IDX file");
    expect_refused(path, with_name);
  }
}

TEST_F(VlTasksTest, CorruptGzipIsRefused) {
  const std::string good = gzip_bytes(idx_bytes({4}, {1, 2, 3, 4}));
  write_bytes(dir_ / "not.gz", "this is not gzip at all");
  expect_refused(dir_ / "not.gz", {"is not a valid gzip file", "not.gz"});
  write_bytes(dir_ / "truncated.gz", good.substr(0, good.size() - 6));
  expect_refused(dir_ / "truncated.gz", {"is not a valid gzip file", "truncated"});
  write_bytes(dir_ / "trailing.gz", good + "junk");
  expect_refused(dir_ / "trailing.gz", {"4 bytes follow the end of its stream"});
  std::string flipped = good;
  flipped[flipped.size() - 5] = static_cast<char>(flipped[flipped.size() - 5] ^ 0x55);  // CRC
  write_bytes(dir_ / "crc.gz", flipped);
  expect_refused(dir_ / "crc.gz", {"is not a valid gzip file", "crc.gz"});
  write_bytes(dir_ / "empty.gz", "");
  expect_refused(dir_ / "empty.gz", {"is not a valid gzip file"});
}

TEST_F(VlTasksTest, GzipIsInflatedOnlyUpToTheCap) {
  const std::string zeros(1 << 20, '\0');  // 1 MiB of zeros compresses to about 1 KB
  const std::string bomb = gzip_bytes(idx_bytes({1 << 20}, std::vector<uint8_t>(1 << 20, 0)));
  write_bytes(dir_ / "bomb.gz", bomb);
  const std::string message =
      input_error([&] { read_idx_file((dir_ / "bomb.gz").string(), /*max_bytes=*/4096); });
  EXPECT_NE(message.find("inflates to more than 4096 bytes"), std::string::npos) << message;
  // Exactly at the cap is fine.
  EXPECT_EQ(gunzip(gzip_bytes(zeros), zeros.size(), "zeros").size(), zeros.size());
  EXPECT_NE(input_error([&] { gunzip(gzip_bytes(zeros), zeros.size() - 1, "zeros"); }), "");
}

TEST_F(VlTasksTest, NotARegularFileIsRefused) {
  fs::create_directories(dir_ / "folder.gz");
  expect_refused(dir_ / "folder.gz", {"not a regular file", "folder.gz"});
  expect_refused(dir_ / "missing.gz", {"missing.gz"});
}

// ---------------------------------------------------------------------------------------------
// Fashion-MNIST files

TEST_F(VlTasksTest, ReadsFashionMnistFiles) {
  maskprior::testing::write_toy_fashion_mnist(dir_, /*train_rows=*/30, /*test_rows=*/20);
  const FashionMnist data = read_fashion_mnist(dir_.string());
  EXPECT_EQ(data.train.rows, 30);
  EXPECT_EQ(data.test.rows, 20);
  EXPECT_EQ(data.train.pixels.size(), 30u * 28 * 28);
  const auto [pixels, labels] = maskprior::testing::toy_images(20, 20);
  EXPECT_EQ(data.test.pixels, pixels);
  EXPECT_EQ(data.test.labels, labels);
  // Uncompressed files are read too.
  fs::remove(dir_ / "t10k-labels-idx1-ubyte.gz");
  write_bytes(dir_ / "t10k-labels-idx1-ubyte", idx_bytes({20}, labels));
  EXPECT_EQ(read_fashion_mnist(dir_.string()).test.labels, labels);
}

TEST_F(VlTasksTest, FashionMnistErrorsNameTheFileAndTheRemedy) {
  std::string message = input_error([&] { read_fashion_mnist((dir_ / "none").string()); });
  EXPECT_NE(message.find("train-images-idx3-ubyte.gz' not found"), std::string::npos) << message;
  EXPECT_NE(message.find("--data-dir"), std::string::npos) << message;
  maskprior::testing::write_toy_fashion_mnist(dir_, 10, 10);
  const auto rewrite = [&](const char* name, const std::string& bytes) {
    write_bytes(dir_ / name, gzip_bytes(bytes));
    return input_error([&] { read_fashion_mnist(dir_.string()); });
  };
  message = rewrite("t10k-labels-idx1-ubyte.gz", idx_bytes({9}, std::vector<uint8_t>(9, 1)));
  EXPECT_NE(message.find("9 labels for 10 images"), std::string::npos) << message;
  message = rewrite("t10k-labels-idx1-ubyte.gz", idx_bytes({10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 12}));
  EXPECT_NE(message.find("label 12 at row 9"), std::string::npos) << message;
  message = rewrite("t10k-images-idx3-ubyte.gz", idx_bytes({10, 4, 4}, std::vector<uint8_t>(160)));
  EXPECT_NE(message.find("expected images [rows, 28, 28]"), std::string::npos) << message;
  EXPECT_NE(message.find("t10k-images-idx3-ubyte.gz"), std::string::npos) << message;
}

TEST(VlLayoutTest, FashionMnistLayoutIsAGridOfPatchesAfterCls) {
  const Layout layout = fashion_mnist_layout();
  EXPECT_EQ(layout_text(layout), "`cls, p[49]` (N = 50)");
  EXPECT_EQ(layout.size(), 50);
  ASSERT_TRUE(layout.spans[1].grid.has_value());
  EXPECT_EQ(*layout.spans[1].grid, (std::pair<int64_t, int64_t>{7, 7}));
  EXPECT_EQ(fashion_mnist_classes().size(), static_cast<size_t>(kFashionMnistClasses));
  const auto names = task_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "fashion-mnist"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "fortunes-char"), names.end());
}

// ---------------------------------------------------------------------------------------------
// Text corpus

std::vector<CorpusFile> corpus(int files) {
  std::vector<CorpusFile> out;
  for (int f = 0; f < files; ++f) {
    out.push_back({fmt::format("f{:02}", f), std::string(static_cast<size_t>(100 + 37 * f), 'a')});
  }
  return out;
}

TEST(VlCorpusTest, SplitIsDeterministicDisjointAndComplete) {
  const auto files = corpus(20);
  std::set<std::vector<std::string>> tests_seen;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    const CorpusSplit split = split_corpus(files, seed);
    const CorpusSplit again = split_corpus(files, seed);
    EXPECT_EQ(split.train, again.train);
    EXPECT_EQ(split.validation, again.validation);
    EXPECT_EQ(split.test, again.test);
    // The order of the input does not matter, only the names and the seed.
    auto reversed = files;
    std::reverse(reversed.begin(), reversed.end());
    EXPECT_EQ(split_corpus(reversed, seed).test, split.test);
    std::multiset<std::string> all;
    for (const auto* part : {&split.train, &split.validation, &split.test}) {
      EXPECT_FALSE(part->empty()) << seed;
      all.insert(part->begin(), part->end());
    }
    EXPECT_EQ(all.size(), files.size());
    EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), files.size()) << "disjoint";
    uint64_t total = 0, test = 0;
    for (const auto& f : files) total += f.text.size();
    test = join_files(files, split.test).size();
    EXPECT_GE(static_cast<double>(test), kTestShare * static_cast<double>(total));
    EXPECT_LT(split.test.size() + split.validation.size(), files.size() / 2);
    tests_seen.insert(split.test);
  }
  EXPECT_GT(tests_seen.size(), 4u) << "the seed chooses the split";
}

TEST(VlCorpusTest, ThreeFilesGoOneToEachSplit) {
  const CorpusSplit split = split_corpus(corpus(3), /*seed=*/1);
  EXPECT_EQ(split.train.size(), 1u);
  EXPECT_EQ(split.validation.size(), 1u);
  EXPECT_EQ(split.test.size(), 1u);
  EXPECT_NE(input_error([] { split_corpus(corpus(2), 0); }).find("at least 3"), std::string::npos);
}

TEST_F(VlTasksTest, CorpusFolderSkipsIndexesLinksAndFolders) {
  maskprior::testing::write_toy_corpus(dir_, /*files=*/3, /*bytes=*/200);
  write_bytes(dir_ / "file0.dat", "strfile index");
  fs::create_symlink(dir_ / "file0", dir_ / "file0.u8");
  fs::create_directories(dir_ / "off");
  write_bytes(dir_ / "off" / "rude", "not read");
  const auto files = read_text_corpus(dir_.string());
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].name, "file0");
  EXPECT_EQ(files[2].name, "file2");
  EXPECT_GE(files[1].text.size(), 200u);
  fs::remove(dir_ / "file2");
  std::string message = input_error([&] { read_text_corpus(dir_.string()); });
  EXPECT_NE(message.find("holds 2 text file(s)"), std::string::npos) << message;
  message = input_error([&] { read_text_corpus((dir_ / "nowhere").string()); });
  EXPECT_NE(message.find("is not a folder"), std::string::npos) << message;
  EXPECT_NE(message.find("--data-dir"), std::string::npos) << message;
}

}  // namespace
}  // namespace maskprior::tasks
