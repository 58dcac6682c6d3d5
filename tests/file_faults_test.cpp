// Faults of the file layer: the folder lock (io/lock_file.h) and all-or-nothing appends and
// atomic writes under a full disk, simulated with the file size limit (RLIMIT_FSIZE), which
// works unprivileged and as root alike. Training faults (kill -9, divergence, a full disk during
// a run, two processes on one folder) are in run_faults_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/lock_file.h"
#include "tests/test_util.h"

namespace maskprior {
namespace {

namespace fs = std::filesystem;
using testing::input_error;

class FaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = maskprior::testing::unique_temp_dir(fmt::format("maskprior_faults_{}", info->name()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  static std::string read_text(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void write_text(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }

  /// Runs `body` in a child process whose files may grow to `limit` bytes (writes past it fail
  /// with EFBIG; SIGXFSZ is ignored so that they fail instead of killing the process); returns
  /// the child's exit code: 0 when `body` threw an InputError whose message holds every one of
  /// `expected`, 1 when it threw none, 2 when the message lacked one.
  template <class F>
  static int with_size_limit(rlim_t limit, F body, const std::vector<std::string>& expected) {
    const pid_t child = ::fork();
    if (child == 0) {
      std::signal(SIGXFSZ, SIG_IGN);
      const rlimit rl{.rlim_cur = limit, .rlim_max = RLIM_INFINITY};
      ::setrlimit(RLIMIT_FSIZE, &rl);
      const std::string message = input_error(body);
      if (message.empty()) ::_exit(1);
      for (const std::string& part : expected) {
        if (message.find(part) == std::string::npos) {
          std::fprintf(stderr, "message: %s\nlacks: %s\n", message.c_str(), part.c_str());
          ::_exit(2);
        }
      }
      ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// Full disk

// An append that does not fit is undone whole: the file keeps its old bytes, no partial record.
TEST_F(FaultsTest, AppendThatDoesNotFitLeavesTheFileAsItWas) {
  const std::string path = file("metrics.jsonl");
  const std::string before = "{\"step\": 0}\n{\"step\": 2}\n";
  write_text(path, before);
  const std::string record = "{\"step\": 4, \"accuracy\": 0.5}\n";
  const auto limit = static_cast<rlim_t>(before.size() + record.size() / 2);
  EXPECT_EQ(with_size_limit(limit, [&] { append_file(path, record); },
                            {"cannot write", "metrics.jsonl", "File too large", "file size limit"}),
            0);
  EXPECT_EQ(read_text(path), before);
  append_file(path, record);  // without the limit it fits
  EXPECT_EQ(read_text(path), before + record);
  append_file(file("new.jsonl"), record);  // a missing file is created
  EXPECT_EQ(read_text(file("new.jsonl")), record);
  fs::create_symlink("metrics.jsonl", file("link.jsonl"));
  EXPECT_NE(input_error([&] { append_file(file("link.jsonl"), record); }).find("symbolic link"),
            std::string::npos);
  EXPECT_EQ(read_text(path), before + record);
}

// An atomic write that does not fit keeps the previous file and removes its temporary file, and
// the message says why in the user's terms.
TEST_F(FaultsTest, AtomicWriteThatDoesNotFitKeepsThePreviousFile) {
  const std::string path = file("checkpoint.pt");
  write_text(path, "the previous checkpoint");
  EXPECT_EQ(with_size_limit(4096, [&] { write_file_atomic(path, std::string(100000, 'x')); },
                            {"cannot write '" + path + "'", "File too large", "file size limit"}),
            0);
  EXPECT_EQ(read_text(path), "the previous checkpoint");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

// ---------------------------------------------------------------------------------------------
// Folder lock

TEST_F(FaultsTest, SecondLockOfAFolderIsRefusedNamingTheHolder) {
  const std::string run = file("run");
  {
    const FolderLock first(run);
    EXPECT_TRUE(fs::is_directory(run));
    EXPECT_EQ(read_text(run + "/.lock"), fmt::format("{}\n", ::getpid()));
    // flock locks belong to the open file, so even this process cannot take it twice.
    const std::string message = input_error([&] { const FolderLock second(run); });
    EXPECT_EQ(message, fmt::format("{} is in use by process {}; wait for it or choose another "
                                   "--out",
                                   run, ::getpid()));
  }
  // Released with its holder; the folder it created held nothing else, so it is gone too.
  EXPECT_FALSE(fs::exists(run));
  {
    const FolderLock again(run);
    write_text(run + "/config.json", "{}");
  }
  // A folder with files stays; its lock file goes with the lock.
  EXPECT_TRUE(fs::exists(run + "/config.json"));
  EXPECT_FALSE(fs::exists(run + "/.lock"));
  { const FolderLock reused(run); }
  EXPECT_TRUE(fs::exists(run + "/config.json"));
  EXPECT_NO_THROW(FolderLock(""));  // no --out: nothing to lock
}

// Parents the lock created for its folder go too when nothing was written; folders that were
// there before stay.
TEST_F(FaultsTest, LockRemovesTheEmptyParentsItCreated) {
  { const FolderLock lock(file("a/b/run")); }
  EXPECT_FALSE(fs::exists(file("a")));
  fs::create_directories(file("kept/b"));
  { const FolderLock lock(file("kept/b/c/run/")); }
  EXPECT_TRUE(fs::is_directory(file("kept/b")));
  EXPECT_FALSE(fs::exists(file("kept/b/c")));
}

// The lock ends with its process, however it ends: a holder killed with SIGKILL leaves no stale
// lock behind.
TEST_F(FaultsTest, LockOfAKilledProcessIsFree) {
  const std::string run = file("run");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const FolderLock held(run);
    write_text(run + "/config.json", "{}");
    const char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  EXPECT_NE(input_error([&] {
              const FolderLock second(run);
            }).find(fmt::format("in use by process {};", child)),
            std::string::npos);
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
  EXPECT_NO_THROW(FolderLock{run});
}

// A process forked while a lock is held (a sweep's run, `maskc reproduce --jobs`) does not keep
// it: once the holder is killed outright, the folder is free while the child still runs, so a
// `kill -9`'d sweep can be rerun at once.
TEST_F(FaultsTest, ForkedChildDoesNotKeepTheLock) {
  const std::string run = file("run");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t holder = ::fork();
  ASSERT_GE(holder, 0);
  if (holder == 0) {
    const FolderLock held(run);
    write_text(run + "/config.json", "{}");
    if (::fork() == 0) {  // the child says it runs (its copy of the lock is closed by then)
      const pid_t me = ::getpid();
      if (::write(ready[1], &me, sizeof me) != sizeof me) ::_exit(1);
      for (;;) ::pause();  // killed by the test below
    }
    ::pause();
    ::_exit(0);
  }
  pid_t child = 0;
  ASSERT_EQ(::read(ready[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  ::close(ready[0]);
  ::close(ready[1]);
  ::kill(holder, SIGKILL);
  ::waitpid(holder, nullptr, 0);
  EXPECT_EQ(::kill(child, 0), 0) << "the holder's child should still run";
  EXPECT_EQ(input_error([&] { const FolderLock again(run); }), "");
  ::kill(child, SIGKILL);
}

// A signal ends a process by whichever of its threads does not block it. While the writing thread
// creates and records its temporary file it holds the signals, so the kernel hands one to another
// thread (maskc's TBB workers): that thread's handler must still find and remove the file. The
// child writes small files in a loop, so its writing thread spends much of its time in that step;
// the parent stops it at a different moment each round.
TEST_F(FaultsTest, SignalTakenByAnotherThreadStillRemovesTheTemporaryFile) {
  const std::string target = file("out.txt");
  for (int round = 0; round < 300; ++round) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      remove_temp_files_on_signals();
      std::thread other([] {
        for (;;) ::pause();
      });
      other.detach();
      const char byte = 1;
      if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
      // The child never returns into GoogleTest: an exception there would run this fixture's
      // TearDown in the child and remove the parent's folder (the "No such file or directory"
      // of a later round under load). A write can fail only once the parent's SIGTERM is being
      // handled by the other thread (its handler removed the temporary file before the rename),
      // so the child waits for that signal to end it.
      try {
        for (;;) write_file_atomic(target, "x");
      } catch (...) {
        for (;;) ::pause();
      }
    }
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1);
    ::close(ready[0]);
    ::close(ready[1]);
    ::usleep(static_cast<useconds_t>(200 + 7 * round));
    ::kill(child, SIGTERM);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << "round " << round;
    for (const auto& entry : fs::directory_iterator(dir_)) {
      ASSERT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
          << "round " << round << " left " << entry.path().filename();
    }
  }
}

// A folder that cannot be created (its parent is a regular file) is a clear error, and the file
// in the way is left alone.
TEST_F(FaultsTest, FolderUnderARegularFileIsAClearError) {
  write_text(file("plain"), "data");
  const std::string message = input_error([&] { const FolderLock lock(file("plain/run")); });
  EXPECT_NE(message.find("cannot create folder '" + file("plain/run") + "'"), std::string::npos)
      << message;
  EXPECT_NE(message.find("Not a directory"), std::string::npos) << message;
  EXPECT_EQ(read_text(file("plain")), "data");
  const std::string on_file = input_error([&] { const FolderLock lock(file("plain")); });
  EXPECT_NE(on_file.find("cannot create folder"), std::string::npos) << on_file;
}

}  // namespace
}  // namespace maskprior
