#include "io/lock_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <mutex>
#include <set>
#include <system_error>

#include "core/error.h"

namespace maskprior {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void lock_failed(const std::string& path, int error) {
  throw InputError(
      fmt::format("cannot lock '{}': {}", path, std::generic_category().message(error)));
}

/// The PID the lock's holder wrote into the lock file, or "" if it has not written it yet.
std::string holder_of(int fd) {
  char text[32] = {};
  const ssize_t got = ::pread(fd, text, sizeof(text) - 1, 0);
  std::string pid(text, got > 0 ? static_cast<size_t>(got) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid;
}

/// True while `fd` is still the file at `path`: a holder that removed the lock file (see
/// ~FolderLock) between our open and our flock leaves us a lock on a file nobody else sees.
bool still_linked(int fd, const std::string& path) {
  struct stat held {
  }, named{};
  return ::fstat(fd, &held) == 0 && ::lstat(path.c_str(), &named) == 0 &&
         held.st_dev == named.st_dev && held.st_ino == named.st_ino;
}

/// `folder` made absolute and normal, without a trailing separator ("run/" is "run").
fs::path absolute_folder(const std::string& folder, std::error_code& error) {
  fs::path p = fs::absolute(folder, error).lexically_normal();
  return p.has_filename() ? p : p.parent_path();
}

/// True when the lock file is the only entry of `folder`.
bool holds_only_lock_file(const std::string& folder) {
  std::error_code error;
  fs::directory_iterator it(folder, error);
  if (error || it == fs::directory_iterator() || it->path().filename() != kLockFileName) {
    return false;
  }
  it.increment(error);
  return !error && it == fs::directory_iterator();
}

/// The locks this process holds. A flock belongs to the open file, which fork shares with the
/// child: a forked child (a sweep's run) would hold the folder as long as it lives, and after a
/// `kill -9` of the holder the folder would stay locked in the name of a dead process. So the
/// child closes its copies at once (pthread_atfork); O_CLOEXEC does the same for exec.
struct HeldLocks {
  std::mutex mutex;
  std::set<int*> fds;  // each held lock's FolderLock::fd_
};

HeldLocks& held_locks() {
  static HeldLocks* held = [] {
    auto* locks = new HeldLocks;  // never destroyed: a fork may come during static destruction
    ::pthread_atfork([] { held_locks().mutex.lock(); }, [] { held_locks().mutex.unlock(); },
                     [] {
                       HeldLocks& in_child = held_locks();
                       for (int* fd : in_child.fds) {
                         ::close(*fd);
                         *fd = -1;  // the child's FolderLock releases nothing
                       }
                       in_child.fds.clear();
                       in_child.mutex.unlock();
                     });
    return locks;
  }();
  return *held;
}

}  // namespace

FolderLock::FolderLock(const std::string& folder) : folder_(folder) {
  if (folder_.empty()) return;
  std::error_code error;
  // The outermost folder this lock creates (FOLDER itself, or a missing parent of it).
  for (fs::path p = absolute_folder(folder_, error); !error && !p.empty() && !fs::exists(p, error);
       p = p.parent_path()) {
    created_root_ = p.string();
    if (p == p.parent_path()) break;
  }
  created_ = !created_root_.empty();
  fs::create_directories(folder_, error);
  if (error || !fs::is_directory(folder_)) {
    throw InputError(fmt::format("cannot create folder '{}': {}", folder_,
                                 error ? error.message() : "it exists and is not a folder"));
  }
  lock_path_ = (fs::path(folder_) / kLockFileName).string();
  for (int attempt = 0; attempt < 100; ++attempt) {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
    if (fd_ < 0) lock_failed(lock_path_, errno);
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int reason = errno;
      const std::string pid = reason == EWOULDBLOCK ? holder_of(fd_) : "";
      ::close(fd_);
      fd_ = -1;
      created_ = false;  // the folder is the holder's now
      if (reason != EWOULDBLOCK) lock_failed(lock_path_, reason);
      throw InputError(fmt::format("{} is in use by {}; wait for it or choose another --out",
                                   folder_, pid.empty() ? "another process" : "process " + pid));
    }
    if (still_linked(fd_, lock_path_)) break;
    ::close(fd_);
    fd_ = -1;
  }
  if (fd_ < 0) lock_failed(lock_path_, EAGAIN);
  const std::string pid = fmt::format("{}\n", ::getpid());
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int reason = errno;
    ::close(fd_);
    lock_failed(lock_path_, reason);
  }
  HeldLocks& held = held_locks();
  const std::lock_guard<std::mutex> guard(held.mutex);
  held.fds.insert(&fd_);
}

FolderLock::~FolderLock() {
  {
    HeldLocks& held = held_locks();
    const std::lock_guard<std::mutex> guard(held.mutex);
    held.fds.erase(&fd_);
  }
  if (fd_ < 0) return;
  const bool nothing_written = created_ && holds_only_lock_file(folder_);
  // Removed while still held: a process that opened it meanwhile and then gets the lock sees it
  // is no longer linked and starts over on a new one (still_linked).
  ::unlink(lock_path_.c_str());
  if (nothing_written) {
    // Remove what this lock created, up to the outermost folder it made (rmdir fails,
    // harmlessly, if another process has put something there meanwhile).
    std::error_code error;
    for (fs::path p = absolute_folder(folder_, error); !error && ::rmdir(p.c_str()) == 0;
         p = p.parent_path()) {
      if (p.string() == created_root_) break;
    }
  }
  ::close(fd_);
}

}  // namespace maskprior
