#include "train/rendezvous_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "core/error.h"

namespace maskprior::training {

namespace {

std::string rank0_path(const std::string& path) {
  return path + ".rank0";
}

/// Whether the file description `fd` could take a write lock on its whole file now, i.e. nobody
/// holds one (OFD locks: per open file description, so this works between threads too).
bool unlocked(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  return ::fcntl(fd, F_OFD_GETLK, &lock) == 0 && lock.l_type == F_UNLCK;
}

/// Whether a rank 0 holds the lock on `file` (false when the file is missing).
bool held(const std::string& file) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return false;
  struct stat info {};
  const bool locked = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && !unlocked(fd);
  ::close(fd);
  return locked;
}

void remove_if_there(const std::string& file) {
  if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
    throw InputError(
        fmt::format("cannot remove the old rendezvous file {}: {}", file, std::strerror(errno)));
  }
}

[[noreturn]] void cannot(const std::string& what, const std::string& path) {
  throw InputError(fmt::format("cannot {} {}: {}", what, path, std::strerror(errno)));
}

}  // namespace

std::string private_rendezvous_folder() {
  const char* base = std::getenv("XDG_RUNTIME_DIR");
  if (base == nullptr || *base == '\0') base = std::getenv("TMPDIR");
  if (base == nullptr || *base == '\0') base = "/tmp";
  const std::string folder = fmt::format("{}/maskc-{}", base, ::getuid());
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) cannot("create the folder", folder);
  struct stat info {};
  if (::lstat(folder.c_str(), &info) != 0) cannot("read", folder);
  if (!S_ISDIR(info.st_mode) || info.st_uid != ::getuid() || (info.st_mode & 077) != 0) {
    throw InputError(fmt::format(
        "{} is not a private folder of this user (it is {}, owned by uid {}, mode {:o}); "
        "someone else may have made it: remove it, or set TMPDIR to a folder of your own",
        folder,
        S_ISLNK(info.st_mode)   ? "a symlink"
        : S_ISDIR(info.st_mode) ? "a folder"
                                : "a file",
        info.st_uid, info.st_mode & 07777));
  }
  return folder;
}

void check_rendezvous_path(const std::string& path) {
  const std::filesystem::path folder = std::filesystem::path(path).has_parent_path()
                                           ? std::filesystem::path(path).parent_path()
                                           : std::filesystem::path(".");
  struct stat info {};
  if (::stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    throw InputError(
        fmt::format("rendezvous file {}: its folder {} does not exist", path, folder.string()));
  }
  if ((info.st_mode & S_IWOTH) != 0) {
    throw InputError(fmt::format(
        "rendezvous file {}: its folder {} is writable by every user, who could replace the "
        "file; choose a folder only you (or your group) can write",
        path, folder.string()));
  }
}

RendezvousFile::RendezvousFile(std::string path, int rank, int world_size, double timeout_seconds)
    : path_(std::move(path)) {
  const std::string published = rank0_path(path_);
  if (rank != 0) {
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
    while (!held(published)) {
      if (std::chrono::steady_clock::now() >= until) {
        throw InputError(fmt::format(
            "rank {} of {}: rank 0 did not open the rendezvous {} within {} s (is every rank "
            "started, with the same MASTER_PORT or MASKC_RENDEZVOUS_FILE?)",
            rank, world_size, path_, timeout_seconds));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return;
  }
  if (held(published)) {
    throw InputError(fmt::format(
        "the rendezvous {} is in use by another job's rank 0; give this job another MASTER_PORT "
        "(or MASKC_RENDEZVOUS_FILE)",
        path_));
  }
  // The lock is taken on a new file before it gets its public name, so that no rank ever sees
  // a locked PATH.rank0 before the old store is gone.
  const std::string staging = fmt::format("{}.rank0.{}", path_, ::getpid());
  fd_ = ::open(staging.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd_ < 0) cannot("create the rendezvous file", staging);
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::fcntl(fd_, F_OFD_SETLK, &lock) != 0 ||
      ::write(fd_, pid.data(), pid.size()) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd_);
    ::unlink(staging.c_str());
    errno = error;
    cannot("lock the rendezvous file", staging);
  }
  remove_if_there(path_);
  if (::rename(staging.c_str(), published.c_str()) != 0) {
    const int error = errno;
    ::close(fd_);
    ::unlink(staging.c_str());
    errno = error;
    cannot("publish the rendezvous file", published);
  }
}

RendezvousFile::~RendezvousFile() {
  if (fd_ < 0) return;
  // Withdraws the name only if it is still this process's file.
  struct stat mine {
  }, named{};
  const std::string published = rank0_path(path_);
  if (::fstat(fd_, &mine) == 0 && ::stat(published.c_str(), &named) == 0 &&
      mine.st_ino == named.st_ino && mine.st_dev == named.st_dev) {
    ::unlink(published.c_str());
  }
  ::close(fd_);
}

bool RendezvousFile::rank0_alive() const {
  return fd_ >= 0 || held(rank0_path(path_));
}

}  // namespace maskprior::training
