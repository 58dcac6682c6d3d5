#include "io/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <random>
#include <system_error>

#include "core/error.h"

namespace maskprior {
namespace {

// write(2) moves at most about 2 GiB per call on Linux.
constexpr size_t kMaxWriteChunk = size_t{1} << 30;

/// Writes all of `bytes` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, std::string_view bytes) {
  const char* data = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t written = ::write(fd, data, std::min(left, kMaxWriteChunk));
    if (written < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += written;
    left -= static_cast<size_t>(written);
  }
  return 0;
}

/// A uniquely named file next to the target; removed on destruction unless renamed onto it.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target) {
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
      path_ = fmt::format("{}.tmp-{}-{:08x}", target, ::getpid(), random());
      // 0666 so the final file gets the usual umask-derived permissions.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0) return;
      if (errno != EEXIST) fail(errno);
    }
    throw InputError(fmt::format("cannot write '{}': no free temporary file name", target_));
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }

  void write(std::string_view bytes) {
    if (int error = write_all(fd_, bytes)) fail(error);
  }

  /// Flushes to disk and renames onto the target, replacing it atomically.
  void commit() {
    if (::fsync(fd_) != 0) fail(errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(errno);
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail(errno);
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(int error) const {
    throw InputError(
        fmt::format("cannot write '{}': {}", target_, std::generic_category().message(error)));
  }

  std::string target_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_file_atomic(path, std::vector<std::string_view>{bytes});
}

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts) {
  TempFile file(path);
  for (std::string_view part : parts) file.write(part);
  file.commit();
}

}  // namespace maskprior
