// A text corpus for character-level language modelling: the data files of the Debian package
// `fortunes` (under /usr/share/games/fortunes), split by file into training, validation and test
// text. "Characters" are bytes: the model's vocabulary is the 256 byte values, so UTF-8 text is
// modelled byte by byte and bits per character are bits per byte.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace maskprior::tasks {

inline constexpr const char* kFortunesTask = "fortunes-char";
inline constexpr const char* kFortunesPackage = "fortunes";
inline constexpr const char* kFortunesDir = "/usr/share/games/fortunes";
inline constexpr int64_t kByteVocab = 256;
/// Total bytes of a corpus at most, and of one file.
inline constexpr uint64_t kMaxCorpusBytes = uint64_t{1} << 30;
/// Shares of the corpus's bytes that go to the test and validation splits (at least one file
/// each); the training split takes the rest.
inline constexpr double kTestShare = 0.1;
inline constexpr double kValidationShare = 0.1;

/// One file of a corpus: its name in the folder and its bytes.
struct CorpusFile {
  std::string name;
  std::string text;
};

/// Which files go where: names, in the order their text is concatenated.
struct CorpusSplit {
  std::vector<std::string> train, validation, test;
};

/// The language tasks by name (fortunes-char).
std::vector<std::string> language_task_names();

/// The corpus files of `dir` ("" = the fortunes package's folder), sorted by name: every regular
/// file that is not a symbolic link (fortunes' `NAME.u8` links repeat NAME) and not a strfile
/// index (`.dat`); subfolders are not entered. InputError naming the folder, the package and
/// --data-dir when it is missing or holds fewer than 3 such files (one per split), or when they
/// hold more than kMaxCorpusBytes.
std::vector<CorpusFile> read_text_corpus(const std::string& dir);

/// Splits files by name, seeded: the names are shuffled (tasks/random.h), then taken in that order
/// into test until it holds kTestShare of all bytes, then validation (kValidationShare), then
/// train; each split gets at least one file. Needs 3 files or more (InputError otherwise). The
/// splits are disjoint and together hold every file; the same files and seed give the same split.
CorpusSplit split_corpus(const std::vector<CorpusFile>& files, uint64_t seed);

/// The text of the files `names` (which must be in `files`), concatenated in that order.
std::string join_files(const std::vector<CorpusFile>& files, const std::vector<std::string>& names);

}  // namespace maskprior::tasks
