#include "core/regular_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "core/error.h"

namespace maskprior {
namespace {

std::string system_message(int error) {
  return std::generic_category().message(error);
}

}  // namespace

const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

RegularFile::RegularFile(const std::string& path, std::string_view what)
    : path_(path), what_(what) {
  // O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one; the
  // file type is checked on the descriptor itself, so nothing can swap it in between.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd_ < 0) fail(system_message(errno));
  struct stat info {};
  if (::fstat(fd_, &info) != 0) {
    const int error = errno;
    ::close(fd_);
    fd_ = -1;
    fail(system_message(error));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    fd_ = -1;
    fail(fmt::format("it is not a regular file ({})", file_kind(info.st_mode)));
  }
  size_ = static_cast<uint64_t>(info.st_size);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RegularFile::fail(const std::string& message) const {
  throw InputError(
      fmt::format("cannot read {}{}'{}': {}", what_, what_.empty() ? "" : " ", path_, message),
      SourceLocation{path_});
}

void RegularFile::read_at(uint64_t offset, void* out, uint64_t count) const {
  auto* bytes = static_cast<char*>(out);
  uint64_t done = 0;
  while (done < count) {
    const ssize_t got = ::pread(fd_, bytes + done, count - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      fail(fmt::format("read of {} bytes at offset {} failed ({})", count, offset,
                       got < 0 ? system_message(errno) : "the file ends first"));
    }
    done += static_cast<uint64_t>(got);
  }
}

std::string RegularFile::read_all(uint64_t max_bytes) const {
  const auto too_large = [&](const std::string& how) {
    fail(fmt::format("it is {}, over the limit of {} for {}", how, byte_size_text(max_bytes),
                     what_.empty() ? "this file" : "a " + what_));
  };
  if (size_ > max_bytes) too_large(fmt::format("{} bytes", size_));
  // Read to the end rather than to `size_`: some regular files (in /proc, say) report 0 bytes.
  // One byte past the limit is enough to know the file is over it.
  std::string text(static_cast<size_t>(size_ < max_bytes ? size_ : max_bytes) + 1, '\0');
  uint64_t done = 0;
  while (true) {
    if (done == text.size()) {
      if (done > max_bytes) too_large(fmt::format("more than {} bytes", max_bytes));
      text.resize(std::min<uint64_t>(max_bytes + 1, done * 2 + 4096));
    }
    const ssize_t got =
        ::pread(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(fmt::format("read failed ({})", system_message(errno)));
    if (got == 0) break;
    done += static_cast<uint64_t>(got);
  }
  text.resize(done);
  return text;
}

std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view what) {
  return RegularFile(path, what).read_all(max_bytes);
}

std::string byte_size_text(uint64_t bytes) {
  constexpr uint64_t kMiB = uint64_t{1} << 20;
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  if (bytes >= kGiB && bytes % kGiB == 0) return fmt::format("{} GiB", bytes / kGiB);
  if (bytes >= kMiB && bytes % kMiB == 0) return fmt::format("{} MiB", bytes / kMiB);
  return fmt::format("{} bytes", bytes);
}

}  // namespace maskprior
