// Paths that `maskc serve` reads and writes: only under the folder it serves (DIR). A request
// names a file by its path relative to DIR; anything that could leave DIR is refused before a
// file is opened.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace maskprior::serve {

/// A request the server refuses: an HTTP status (400, 403, 404, 413, ...) and a message that
/// says why, for the page to show.
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

/// The folder a server serves, canonical (symbolic links resolved) once at start.
class ServedDir {
 public:
  /// InputError when `dir` is no folder.
  explicit ServedDir(const std::string& dir);
  const std::filesystem::path& root() const { return root_; }

  /// The file `relative` names under the root, for reading: RequestError 400 for an empty,
  /// absolute or `..` path, or one with a NUL byte or a backslash; 403 when it resolves outside
  /// the root (a symbolic link out); 404 when no regular file is there.
  std::filesystem::path file_to_read(const std::string& relative) const;
  /// The file `relative` names under the root, for writing: as file_to_read, but the file may be
  /// missing (its folder must exist under the root) and must not be a symbolic link.
  std::filesystem::path file_to_write(const std::string& relative) const;
  /// A folder `relative` names under the root ("" is the root itself); as file_to_read.
  std::filesystem::path folder(const std::string& relative) const;
  /// `path` (under the root) relative to the root, with `/` separators.
  std::string relative(const std::filesystem::path& path) const;

  /// The files under the root whose names end in one of `extensions` (".mask", ".csv"), relative
  /// to it, sorted; at most `max_files`, not following links to folders, skipping hidden folders.
  std::vector<std::string> list_files(const std::vector<std::string>& extensions,
                                      size_t max_files = 2000) const;

 private:
  std::filesystem::path checked(const std::string& relative) const;
  bool inside(const std::filesystem::path& path) const;
  std::filesystem::path root_;
};

}  // namespace maskprior::serve
