#include "runfolder/archive.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdlib.h>
#include <zlib.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string_view>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "runfolder/run_files.h"

namespace maskprior::runfolder {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

/// The whole decompressed text of a gzip file of at most `max_bytes`.
std::string read_gzip(const fs::path& file, uint64_t max_bytes) {
  if (!fs::is_regular_file(file)) {
    throw InputError(fmt::format("{}: not a regular file", file.string()));
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> in(gzopen(file.c_str(), "rb"), gzclose);
  if (!in) throw InputError(fmt::format("{}: cannot open", file.string()));
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const int got = gzread(in.get(), buffer, sizeof buffer);
    if (got < 0) {
      int code = 0;
      throw InputError(fmt::format("{}: not a readable gzip file ({})", file.string(),
                                   gzerror(in.get(), &code)));
    }
    if (got == 0) break;
    if (text.size() + static_cast<uint64_t>(got) > max_bytes) {
      throw InputError(
          fmt::format("{}: holds more than {} MiB decompressed, more than an archive "
                      "of runs may",
                      file.string(), max_bytes >> 20));
    }
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

/// Whether `path` is a relative path of plain names ("runs/init=mask/seed0").
bool plain_relative(const std::string& path) {
  if (path.empty() || path.front() == '/' || path.find('\0') != std::string::npos) return false;
  for (const auto& part : fs::path(path)) {
    const std::string name = part.string();
    if (name.empty() || name == "." || name == "..") return false;
  }
  return true;
}

ArchivedRun parse_run(const json& line, const std::string& where) {
  if (!line.is_object() || !line.contains("path") || !line["path"].is_string() ||
      !line.contains("files") || !line["files"].is_object()) {
    throw InputError(
        fmt::format("{}: not a run: expected {{\"path\": TEXT, \"files\": {{NAME: "
                    "TEXT, ...}}}}",
                    where));
  }
  ArchivedRun run;
  run.path = line["path"].get<std::string>();
  if (!plain_relative(run.path)) {
    throw InputError(
        fmt::format("{}: path '{}' is not a relative path of plain names", where, run.path));
  }
  for (const auto& [name, text] : line["files"].items()) {
    if (std::find(kArchivedFiles.begin(), kArchivedFiles.end(), name) == kArchivedFiles.end()) {
      throw InputError(fmt::format("{}: '{}' is no file an archived run keeps (those: {})", where,
                                   name, fmt::join(kArchivedFiles, ", ")));
    }
    if (!text.is_string()) {
      throw InputError(fmt::format("{}: the text of {} is not a string", where, name));
    }
    run.files.emplace(name, text.get<std::string>());
  }
  return run;
}

}  // namespace

std::vector<ArchivedRun> read_archive(const fs::path& file, uint64_t max_bytes) {
  const std::string text = read_gzip(file, max_bytes);
  std::vector<ArchivedRun> runs;
  std::set<std::string> paths;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const std::string where = fmt::format("{}:{}", file.string(), line_number);
    ArchivedRun run = parse_run(parse_json(line, where), where);
    if (!paths.insert(run.path).second) {
      throw InputError(fmt::format("{}: run '{}' is in the archive twice", where, run.path));
    }
    runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<fs::path> find_archives(const fs::path& root) {
  std::vector<fs::path> found;
  if (fs::is_regular_file(root / kArchiveFile)) found.push_back(root / kArchiveFile);
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(
           root, fs::directory_options::skip_permission_denied, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (it->is_directory() && fs::is_regular_file(it->path() / kArchiveFile)) {
      found.push_back(it->path() / kArchiveFile);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

namespace {

/// Writes the runs of `archives` (found under `root`) as run folders under `into`.
size_t extract(const std::vector<fs::path>& archives, const fs::path& root, const fs::path& into) {
  size_t count = 0;
  for (const fs::path& archive : archives) {
    const fs::path place = into / fs::relative(archive.parent_path(), root);
    for (const ArchivedRun& run : read_archive(archive)) {
      const fs::path dir = place / run.path;
      fs::create_directories(dir);
      for (const auto& [name, text] : run.files) write_file_atomic((dir / name).string(), text);
      ++count;
    }
  }
  return count;
}

}  // namespace

size_t extract_archives(const fs::path& root, const fs::path& into) {
  return extract(find_archives(root), root, into);
}

ExtractedRuns::ExtractedRuns(const fs::path& root) : root_(root) {
  const std::vector<fs::path> archives = find_archives(root);
  if (archives.empty()) return;
  std::string pattern = (fs::temp_directory_path() / "maskc-runs-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw InputError(
        fmt::format("cannot make a temporary folder in {} to read the archives "
                    "under {}",
                    fs::temp_directory_path().string(), root.string()));
  }
  base_ = pattern;
  fs::path folder = fs::absolute(root).lexically_normal();
  if (folder.filename().empty()) folder = folder.parent_path();  // "runs/" names "runs"
  tree_ = base_ / folder.filename();
  try {
    fs::create_directories(tree_);
    extract(archives, root, tree_);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(base_, ignored);
    throw;
  }
}

ExtractedRuns::~ExtractedRuns() {
  std::error_code ignored;
  if (!base_.empty()) fs::remove_all(base_, ignored);
}

std::string ExtractedRuns::display(const fs::path& dir) const {
  return (root_ / fs::relative(dir, tree_)).string() + " (archived)";
}

}  // namespace maskprior::runfolder
