#include "serve/paths.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "core/error.h"

namespace maskprior::serve {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& text, const std::string& end) {
  return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
}

}  // namespace

ServedDir::ServedDir(const std::string& dir) {
  std::error_code error;
  root_ = fs::canonical(dir, error);
  if (error || !fs::is_directory(root_)) {
    throw InputError(fmt::format("cannot serve {}: {}", quote_input(dir),
                                 error ? error.message() : "it is not a folder"));
  }
}

bool ServedDir::inside(const fs::path& path) const {
  auto [root_end, path_at] = std::mismatch(root_.begin(), root_.end(), path.begin(), path.end());
  return root_end == root_.end();
}

fs::path ServedDir::checked(const std::string& relative) const {
  if (relative.find('\0') != std::string::npos || relative.find('\\') != std::string::npos) {
    throw RequestError(400, "a path under the served folder has no NUL bytes or backslashes");
  }
  const fs::path path(relative);
  if (path.is_absolute()) {
    throw RequestError(400, fmt::format("{} is an absolute path: name a file under the served "
                                        "folder, relative to it",
                                        quote_input(relative)));
  }
  for (const auto& part : path) {
    if (part == "..") {
      throw RequestError(400, fmt::format("{} has a `..`: the server reads and writes only under "
                                          "the folder it serves",
                                          quote_input(relative)));
    }
  }
  std::error_code error;
  fs::path resolved = fs::weakly_canonical(root_ / path, error);
  if (error) throw RequestError(404, fmt::format("{}: {}", quote_input(relative), error.message()));
  if (!inside(resolved)) {
    throw RequestError(403, fmt::format("{} leads outside the served folder (a symbolic link "
                                        "out): refused",
                                        quote_input(relative)));
  }
  return resolved;
}

fs::path ServedDir::file_to_read(const std::string& relative) const {
  if (relative.empty()) throw RequestError(400, "no path given");
  fs::path path = checked(relative);
  std::error_code error;
  if (!fs::is_regular_file(path, error)) {
    throw RequestError(404,
                       fmt::format("no file {} under the served folder", quote_input(relative)));
  }
  return path;
}

fs::path ServedDir::file_to_write(const std::string& relative) const {
  if (relative.empty()) throw RequestError(400, "no path given");
  const fs::path given = root_ / fs::path(relative);
  fs::path path = checked(relative);
  std::error_code error;
  if (fs::is_symlink(fs::symlink_status(given, error))) {
    throw RequestError(403, fmt::format("{} is a symbolic link: the server never writes through "
                                        "one",
                                        quote_input(relative)));
  }
  if (!fs::is_directory(path.parent_path(), error)) {
    throw RequestError(
        404, fmt::format("no folder for {} under the served folder", quote_input(relative)));
  }
  return path;
}

fs::path ServedDir::folder(const std::string& relative) const {
  fs::path path = relative.empty() ? root_ : checked(relative);
  std::error_code error;
  if (!fs::is_directory(path, error)) {
    throw RequestError(404,
                       fmt::format("no folder {} under the served folder", quote_input(relative)));
  }
  return path;
}

std::string ServedDir::relative(const fs::path& path) const {
  return path.lexically_relative(root_).generic_string();
}

std::vector<std::string> ServedDir::list_files(const std::vector<std::string>& extensions,
                                               size_t max_files) const {
  std::vector<std::string> found;
  std::error_code error;
  auto it =
      fs::recursive_directory_iterator(root_, fs::directory_options::skip_permission_denied, error);
  for (; !error && it != fs::recursive_directory_iterator() && found.size() < max_files;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && !name.empty() && name[0] == '.') {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink() || !it->is_regular_file()) continue;
    for (const auto& extension : extensions) {
      if (ends_with(name, extension)) found.push_back(relative(it->path()));
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace maskprior::serve
