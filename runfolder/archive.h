// The archive of a results folder: one gzip-compressed JSON Lines file, runs.jsonl.gz, in place
// of its run folders, so a study keeps every run's numbers in one small file (docs/results).
//
// Each line is one run: {"path": "runs/init=mask/seed0", "files": {"config.json": TEXT, ...}},
// `path` relative to the archive's folder (a relative path of plain names: no "..", no
// absolute path) and `files` the run's small files (runfolder/run_files.h kArchivedFiles) as their
// exact text. scripts/keep_runs.sh writes it; a reader sees the run folders it came from by
// extracting it (extract_archive), so every reader of folders reads archives alike.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace maskprior::runfolder {

struct ArchivedRun {
  std::string path;                          // relative to the archive's folder
  std::map<std::string, std::string> files;  // file name -> its text
};

/// The most bytes an archive may hold once decompressed: far above a study's (a few MiB).
inline constexpr uint64_t kMaxArchiveBytes = uint64_t{1} << 30;  // 1 GiB

/// Reads an archive; InputError naming the file (and line) when it is not gzip, a line is not a
/// run as above, a path is not a plain relative one, a file name is none a run keeps, two lines
/// name one path, or it holds more than `max_bytes` decompressed.
std::vector<ArchivedRun> read_archive(const std::filesystem::path& file,
                                      uint64_t max_bytes = kMaxArchiveBytes);

/// Every archive (kArchiveFile) under `root`, `root` itself included, in path order.
std::vector<std::filesystem::path> find_archives(const std::filesystem::path& root);

/// Writes the runs of every archive under `root` as run folders under `into`, at the place each
/// would have under `root` (ROOT/a/runs.jsonl.gz's run "runs/x" -> INTO/a/runs/x). `into` must
/// be a new, empty folder; returns the number of runs written. InputError as read_archive.
size_t extract_archives(const std::filesystem::path& root, const std::filesystem::path& into);

/// The runs of every archive under a results folder, extracted into a private temporary folder
/// (mode 0700) named as the results folder, so that they read as the run folders they came
/// from: the same relative paths, hence the same rows and labels in a report. Removed with the
/// object. tree() is empty when `root` holds no archive.
class ExtractedRuns {
 public:
  explicit ExtractedRuns(const std::filesystem::path& root);
  ~ExtractedRuns();
  ExtractedRuns(const ExtractedRuns&) = delete;
  ExtractedRuns& operator=(const ExtractedRuns&) = delete;

  const std::filesystem::path& tree() const { return tree_; }
  /// How to name an extracted run folder to a reader: where it is under `root`, "(archived)".
  std::string display(const std::filesystem::path& dir) const;

 private:
  std::filesystem::path root_, base_, tree_;
};

}  // namespace maskprior::runfolder
