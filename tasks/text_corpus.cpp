#include "tasks/text_corpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>

#include "core/error.h"
#include "core/regular_file.h"
#include "tasks/random.h"

namespace maskprior::tasks {

namespace {

namespace fs = std::filesystem;

constexpr size_t kSplits = 3;  // train, validation, test

std::string where_to_get(const std::string& dir) {
  return dir.empty() ? fmt::format(
                           "install the Debian package {} (scripts/setup.sh) or point "
                           "--data-dir at a folder of text files",
                           kFortunesPackage)
                     : "point --data-dir at a folder of text files";
}

/// The names of the corpus files in `folder`, sorted.
std::vector<std::string> corpus_names(const fs::path& folder, const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(folder, error)) {
    throw InputError(fmt::format("{}: {} is not a folder; {}", kFortunesTask,
                                 quote_input(folder.string()), where_to_get(dir)));
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_symlink() || !entry.is_regular_file() || name.ends_with(".dat")) continue;
    names.push_back(name);
  }
  if (error) {
    throw InputError(fmt::format("{}: cannot list {} ({})", kFortunesTask,
                                 quote_input(folder.string()), error.message()));
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::vector<std::string> language_task_names() {
  return {kFortunesTask};
}

std::vector<CorpusFile> read_text_corpus(const std::string& dir) {
  const fs::path folder = dir.empty() ? fs::path(kFortunesDir) : fs::path(dir);
  const std::vector<std::string> names = corpus_names(folder, dir);
  if (names.size() < kSplits) {
    throw InputError(fmt::format(
        "{}: {} holds {} text file(s) (not .dat, not links); at least {} are needed (one per "
        "split); {}",
        kFortunesTask, quote_input(folder.string()), names.size(), kSplits, where_to_get(dir)));
  }
  std::vector<CorpusFile> files;
  uint64_t total = 0;
  for (const std::string& name : names) {
    std::string text =
        read_regular_file((folder / name).string(), kMaxCorpusBytes - total, "corpus file");
    total += text.size();
    files.push_back({name, std::move(text)});
  }
  return files;
}

CorpusSplit split_corpus(const std::vector<CorpusFile>& files, uint64_t seed) {
  if (files.size() < kSplits) {
    throw InputError(fmt::format("{}: {} corpus file(s); at least {} are needed (one per split)",
                                 kFortunesTask, files.size(), kSplits));
  }
  std::map<std::string, uint64_t> bytes;
  uint64_t total = 0;
  for (const auto& file : files) {
    if (!bytes.emplace(file.name, file.text.size()).second) {
      throw InternalError("split_corpus: two files named " + file.name);
    }
    total += file.text.size();
  }
  std::vector<std::string> order;
  for (const auto& entry : bytes) order.push_back(entry.first);  // sorted: independent of input
  std::mt19937_64 engine(seed);
  shuffle_in_place(order, engine);
  CorpusSplit split;
  const auto share = [&](uint64_t held) {
    return static_cast<double>(held) / static_cast<double>(std::max<uint64_t>(total, 1));
  };
  uint64_t test_bytes = 0, validation_bytes = 0;
  size_t next = 0;
  // Leave one file for each split still to come.
  while (next + 2 < order.size() && (split.test.empty() || share(test_bytes) < kTestShare)) {
    test_bytes += bytes[order[next]];
    split.test.push_back(order[next++]);
  }
  while (next + 1 < order.size() &&
         (split.validation.empty() || share(validation_bytes) < kValidationShare)) {
    validation_bytes += bytes[order[next]];
    split.validation.push_back(order[next++]);
  }
  split.train.assign(order.begin() + static_cast<std::ptrdiff_t>(next), order.end());
  return split;
}

std::string join_files(const std::vector<CorpusFile>& files,
                       const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) {
    const auto file = std::find_if(files.begin(), files.end(),
                                   [&](const CorpusFile& f) { return f.name == name; });
    if (file == files.end()) throw InternalError("join_files: no file named " + name);
    text += file->text;
  }
  return text;
}

}  // namespace maskprior::tasks
