#include "io/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <optional>
#include <random>
#include <system_error>

#include "core/error.h"
#include "core/regular_file.h"

namespace maskprior {
namespace {

// At most this much per write(2): a signal is handled between two calls, so an interrupted
// write of a large file ends (and its temporary file goes) promptly.
constexpr size_t kMaxWriteChunk = size_t{64} << 20;

// ---------------------------------------------------------------------------------------------
// The temporary files of the writes in progress, for the signal handler. A slot is claimed with
// a compare-and-swap, filled, then marked active; the handler only reads active slots and only
// calls async-signal-safe functions (unlink, sigaction, raise).

constexpr size_t kTempSlots = 32;
constexpr size_t kTempPathMax = 4096;
enum SlotState : int { kFree = 0, kClaimed = 1, kActive = 2 };

struct TempSlot {
  std::atomic<int> state{kFree};
  char path[kTempPathMax] = {};
};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads slot states");

TempSlot g_temp_slots[kTempSlots];  // NOLINT: shared with the signal handler by design

// A process signal goes to any thread that does not block it. The thread creating a temporary
// file holds the signals until the file is recorded, so one arriving then goes to another thread
// (maskc's TBB workers) whose handler would not see the file yet. The two flags close that gap
// (each side writes its own, then reads the other's, both sequentially consistent): a creator
// that finds the handler already ending the process creates nothing, and a handler that finds a
// creation under way waits for its record.
std::atomic<int> g_creating{0};     // NOLINT: temporary files being created and recorded now
std::atomic<bool> g_ending{false};  // NOLINT: a handler is removing the files and ending
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler sets g_ending");

/// Sleeps `ns` nanoseconds (async-signal-safe).
void nap(long ns) {
  const timespec pause{0, ns};
  ::nanosleep(&pause, nullptr);
}

/// Records `path` for the signal handler; returns its slot, or -1 if none is free or the path
/// is too long (the write still works, it is just not cleaned up on a signal).
int register_temp(const std::string& path) {
  if (path.size() >= kTempPathMax) return -1;
  for (size_t i = 0; i < kTempSlots; ++i) {
    int expected = kFree;
    if (!g_temp_slots[i].state.compare_exchange_strong(expected, kClaimed)) continue;
    std::memcpy(g_temp_slots[i].path, path.c_str(), path.size() + 1);
    g_temp_slots[i].state.store(kActive);
    return static_cast<int>(i);
  }
  return -1;
}

void unregister_temp(int slot) {
  if (slot >= 0) g_temp_slots[static_cast<size_t>(slot)].state.store(kFree);
}

extern "C" void remove_temps_and_reraise(int sig) {
  g_ending.store(true);
  // A creation takes microseconds; the bound only keeps a stuck one from holding the signal.
  for (int waited = 0; g_creating.load() > 0 && waited < 2000; ++waited) nap(1'000'000);
  for (TempSlot& slot : g_temp_slots) {
    if (slot.state.load() == kActive) ::unlink(slot.path);
  }
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(sig, &action, nullptr);
  ::raise(sig);  // delivered when this handler returns: the process ends by `sig`
}

// ---------------------------------------------------------------------------------------------
// Writing

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

/// What a failed write of `path` says: the system's reason, the step that failed (for the steps
/// after the bytes are written) and, when the disk is full or a size limit was hit, what that
/// means for the user.
std::string write_error(const std::string& path, int error, std::string_view step) {
  std::string hint;
  if (error == ENOSPC || error == EDQUOT) {
    hint = "; the disk is full (or over quota): free some space and run again";
  } else if (error == EFBIG) {
    hint = "; the file would exceed the file size limit (`ulimit -f`) or the file system's";
  }
  return fmt::format("cannot write '{}': {}{}{}", path,
                     step.empty() ? "" : fmt::format("{} failed: ", step),
                     std::generic_category().message(error), hint);
}

/// Flushes the folder of `path` so that a rename into it survives a crash of the machine. Best
/// effort: some file systems cannot fsync a folder, and the file itself is already in place.
void sync_parent(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const int fd = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

/// Throws InputError unless `path` is missing or a regular file (never followed if a link).
void check_target(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // missing, or unreachable: open says why
  if (S_ISREG(st.st_mode)) return;
  if (S_ISLNK(st.st_mode)) {
    throw InputError(fmt::format("cannot write '{}': it is a symbolic link, and outputs never "
                                 "follow or replace symbolic "
                                 "links (write to the file it points to, or remove the link first)",
                                 path),
                     SourceLocation{path});
  }
  throw InputError(
      fmt::format(
          "cannot write '{}': it is {}, not a regular file, and only regular files are replaced",
          path, file_kind(st.st_mode)),
      SourceLocation{path});
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this thread for its lifetime; one that arrives meanwhile
/// is delivered when it ends.
class SignalsHeld {
 public:
  SignalsHeld() {
    sigset_t block;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&block, sig);
    ::pthread_sigmask(SIG_BLOCK, &block, &previous_);
  }
  ~SignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  SignalsHeld(const SignalsHeld&) = delete;
  SignalsHeld& operator=(const SignalsHeld&) = delete;

 private:
  sigset_t previous_{};
};

/// Counts this thread in g_creating for its lifetime; if another thread's handler is already
/// ending the process, creates nothing and waits for the end (that handler re-raises its signal
/// within its bounded wait).
class Creating {
 public:
  Creating() {
    g_creating.fetch_add(1);
    if (g_ending.load()) {
      g_creating.fetch_sub(1);
      for (;;) nap(1'000'000);
    }
  }
  ~Creating() { g_creating.fetch_sub(1); }
  Creating(const Creating&) = delete;
  Creating& operator=(const Creating&) = delete;
};

/// A uniquely named file next to the target; removed on destruction unless renamed onto it.
class TempFile {
 public:
  explicit TempFile(const std::string& target) : target_(target) {
    std::random_device random;
    for (int attempt = 0; attempt < 100; ++attempt) {
      path_ = fmt::format("{}.tmp-{}-{:08x}", target, ::getpid(), random());
      // The signals that remove temporary files wait while the file is created and recorded: one
      // that came in between would leave the file behind (seen under load).
      const SignalsHeld held;
      const Creating creating;
      // 0666 so the final file gets the usual umask-derived permissions.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
      const int error = errno;
      if (fd_ >= 0) {
        slot_ = register_temp(path_);
        return;
      }
      if (error != EEXIST) fail(error);
    }
    throw InputError(fmt::format("cannot write '{}': no free temporary file name", target_),
                     SourceLocation{target_});
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
    unregister_temp(slot_);
  }

  void write(std::string_view bytes) {
    if (int error = write_all(fd_, bytes)) fail(error);
  }

  /// Flushes to disk and renames onto the target, replacing it atomically. A failure of any step
  /// (fsync reports a write error the disk found late, e.g. ENOSPC or EIO) leaves the target as
  /// it was.
  void commit() {
    // A file replaced keeps its permissions and group (a 0640 spec stays 0640), set before the
    // rename so that the new file is never more readable than the old one.
    struct stat old {};
    if (::lstat(target_.c_str(), &old) == 0 && S_ISREG(old.st_mode)) {
      if (::fchmod(fd_, old.st_mode & 07777) != 0) fail(errno, "fchmod");
      [[maybe_unused]] const int kept = ::fchown(fd_, static_cast<uid_t>(-1), old.st_gid);
    }
    if (::fsync(fd_) != 0) fail(errno, "fsync");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail(errno, "close");
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail(errno);
    committed_ = true;
    sync_parent(target_);
  }

 private:
  [[noreturn]] void fail(int error, std::string_view step = {}) const {
    throw InputError(write_error(target_, error, step), SourceLocation{target_});
  }

  std::string target_;
  std::string path_;
  int fd_ = -1;
  int slot_ = -1;
  bool committed_ = false;
};

/// The PID in `name` if it is `prefix` + PID + "-" + 8 hex digits (a temporary file's name).
std::optional<pid_t> temp_owner(std::string_view name, std::string_view prefix) {
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  name.remove_prefix(prefix.size());
  const size_t dash = name.find('-');
  if (dash == std::string_view::npos || name.size() - dash - 1 != 8) return std::nullopt;
  const std::string_view hex = name.substr(dash + 1);
  if (!std::all_of(hex.begin(), hex.end(),
                   [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; })) {
    return std::nullopt;
  }
  pid_t pid = 0;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + dash, pid);
  if (ec != std::errc() || end != name.data() + dash || pid <= 0) return std::nullopt;
  return pid;
}

}  // namespace

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_file_atomic(path, std::vector<std::string_view>{bytes});
}

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts) {
  check_target(path);
  remove_stale_temp_files(path);
  TempFile file(path);
  for (std::string_view part : parts) file.write(part);
  file.commit();
}

void append_file(const std::string& path, std::string_view bytes) {
  check_target(path);
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
  if (fd < 0) throw InputError(write_error(path, errno, ""), SourceLocation{path});
  struct stat st {};
  int error = ::fstat(fd, &st) != 0 ? errno : 0;
  if (error == 0) {
    error = write_all(fd, bytes);
    // Cut what was appended: a partial record would corrupt the file for its readers.
    if (error != 0 && ::ftruncate(fd, st.st_size) != 0) {
      // Nothing more to do: the error below already says the append failed.
    }
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) throw InputError(write_error(path, error, ""), SourceLocation{path});
}

void remove_temp_files_on_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction previous {};
    if (::sigaction(sig, nullptr, &previous) != 0 || previous.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = remove_temps_and_reraise;
    sigemptyset(&action.sa_mask);
    // One handler at a time per thread: a second signal waits until the first has ended us.
    for (int held : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&action.sa_mask, held);
    action.sa_flags = SA_RESTART;
    ::sigaction(sig, &action, nullptr);
  }
}

int remove_stale_temp_files(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const std::string name = target.filename().string();
  if (name.empty()) return 0;
  const std::string prefix = name + ".tmp-";
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code error;
  int removed = 0;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string entry = it->path().filename().string();
    const std::optional<pid_t> owner = temp_owner(entry, prefix);
    if (!owner || *owner == ::getpid()) continue;
    if (::kill(*owner, 0) == 0 || errno != ESRCH) continue;  // alive, or not ours to judge
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (::unlink(it->path().c_str()) == 0) ++removed;
  }
  return removed;
}

}  // namespace maskprior
