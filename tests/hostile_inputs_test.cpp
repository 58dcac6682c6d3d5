// Hostile inputs to the readers: a FIFO with no writer, a character device, a directory, files over
// the caps, and tensor files whose headers claim more than the cap (sparse files: a few KB on
// disk, gigabytes by their size). Each read runs in a child process with a time limit and a
// bounded address space, so a reader that blocks or reads forever fails the test instead of
// hanging or exhausting the machine.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "core/error.h"
#include "io/mask_file.h"
#include "io/npy.h"
#include "io/safetensors.h"
#include "tasks/truth_table.h"
#include "tests/test_util.h"

namespace maskprior {
namespace {

namespace fs = std::filesystem;

const std::string kParity2 = std::string(MASKPRIOR_SOURCE_DIR) + "/specs/gotu/parity2.mask";

/// Runs `read` in a child process (10 s, 1 GiB of address space) and returns the message of the
/// InputError it throws, or what happened instead.
std::string refusal(const std::function<void()>& read) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fds[0]);
    const rlimit limit{rlim_t{1} << 30, rlim_t{1} << 30};
    ::setrlimit(RLIMIT_AS, &limit);
    std::string message;
    try {
      read();
      message = "no error";
    } catch (const InputError& e) {
      message = e.what();
    } catch (const std::exception& e) {
      message = std::string("not an InputError: ") + e.what();
    }
    const ssize_t ignored = ::write(pipe_fds[1], message.data(), message.size());
    static_cast<void>(ignored);
    ::_exit(0);
  }
  ::close(pipe_fds[1]);
  int status = 0;
  bool done = false;
  for (int tick = 0; tick < 1000 && !done; ++tick) {
    done = ::waitpid(pid, &status, WNOHANG) == pid;
    if (!done) ::usleep(10 * 1000);
  }
  if (!done) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    ::close(pipe_fds[0]);
    return "still running after 10 s (blocked, or reading without end)";
  }
  std::string message;
  char buffer[4096];
  for (ssize_t got; (got = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) {
    message.append(buffer, static_cast<size_t>(got));
  }
  ::close(pipe_fds[0]);
  return WIFEXITED(status) ? message : "the reader crashed";
}

/// True when `text` holds every one of `parts`.
::testing::AssertionResult holds(const std::string& text,
                                 std::initializer_list<std::string> parts) {
  for (const std::string& part : parts) {
    if (text.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "'" << part << "' not in: " << text;
    }
  }
  return ::testing::AssertionSuccess();
}

class ReadersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = maskprior::testing::unique_temp_dir(fmt::format("maskprior_readers_{}", info->name()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// A FIFO nobody writes to.
  std::string fifo(const std::string& name) const {
    EXPECT_EQ(::mkfifo(path(name).c_str(), 0600), 0) << std::strerror(errno);
    return path(name);
  }

  /// `head` followed by zeros up to `size` bytes, without writing them (a sparse file).
  std::string sparse(const std::string& name, const std::string& head, uint64_t size) const {
    std::ofstream(path(name), std::ios::binary) << head;
    fs::resize_file(path(name), size);
    return path(name);
  }

  /// A mask file of [1, 1, n, n] whose header and metadata are valid and whose data (all zeros)
  /// is a hole: 8·n² bytes by its size.
  std::string sparse_mask(const std::string& name, int64_t n) const {
    const uint64_t cells = static_cast<uint64_t>(n * n);
    const std::string metadata = fmt::format(
        R"({{"format": "mask/1", "name": "big", "source_sha256": "", "open": "1", "close": "-1",
        "params": "{{}}", "layout": "[{{\"name\": \"x\", \"offset\": 0, \"length\": {}}}]"}})",
        n);
    std::string header = fmt::format(
        R"({{"__metadata__": {}, "mask": {{"dtype": "F32", "shape": [1, 1, {}, {}],
        "data_offsets": [0, {}]}}, "provenance": {{"dtype": "I32", "shape": [1, 1, {}, {}],
        "data_offsets": [{}, {}]}}}})",
        metadata, n, n, 4 * cells, n, n, 4 * cells, 8 * cells);
    header.append((8 - header.size() % 8) % 8, ' ');
    const uint64_t header_size = header.size();
    std::string prefix(8, '\0');
    std::memcpy(prefix.data(), &header_size, 8);
    return sparse(name, prefix + header, 8 + header_size + 8 * cells);
  }

  /// Runs `maskc ARGS` in the scratch folder with a time limit and 2 GB of address space; the
  /// exit code (124: timed out) and stderr.
  std::pair<int, std::string> maskc(const std::string& args) const {
    const std::string err = path(".stderr");
    const std::string command =
        fmt::format("cd '{}' && ulimit -v 2000000 && timeout 20 '{}' {} >/dev/null 2>'{}'",
                    dir_.string(), MASKC_PATH, args, err);
    const int status = std::system(command.c_str());
    std::ifstream in(err);
    std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
  }

  fs::path dir_;
};

// ---------------------------------------------------------------------------------------------
// Specs

TEST_F(ReadersTest, SpecThatIsNotARegularFileIsRefusedWithoutReading) {
  const std::string f = fifo("f.mask");
  EXPECT_TRUE(holds(refusal([&] { compile_file(f); }),
                    {"cannot read spec '" + f + "'", "not a regular file (a FIFO)"}));
  EXPECT_TRUE(holds(refusal([] { compile_file("/dev/zero"); }),
                    {"'/dev/zero'", "not a regular file (a character device)"}));
  EXPECT_TRUE(holds(refusal([] { compile_file("/dev/urandom"); }),
                    {"not a regular file (a character device)"}));
  EXPECT_TRUE(
      holds(refusal([&] { compile_file(dir_.string()); }), {"not a regular file (a directory)"}));
  EXPECT_TRUE(holds(refusal([&] { compile_file(path("missing.mask")); }),
                    {"cannot read spec", "missing.mask", "No such file"}));
}

TEST_F(ReadersTest, SpecOverSixteenMiBIsRefusedBeforeReading) {
  const std::string big = sparse("big.mask", "tokens x[4]\n", (uint64_t{16} << 20) + 1);
  EXPECT_TRUE(holds(refusal([&] { compile_file(big); }),
                    {"cannot read spec '" + big + "'", "16777217 bytes", "limit of 16 MiB"}));
  // A spec of exactly the cap is read (and then fails as a spec, not as a file).
  const std::string at_cap = sparse("at_cap.mask", "tokens x[4]\n", uint64_t{16} << 20);
  EXPECT_TRUE(holds(refusal([&] { compile_file(at_cap); }), {"not an InputError"}));
}

// ---------------------------------------------------------------------------------------------
// Truth tables

TEST_F(ReadersTest, TruthTableThatIsNotARegularFileIsRefused) {
  const std::string f = fifo("t.csv");
  EXPECT_TRUE(holds(refusal([&] { tasks::read_truth_table_csv(f); }),
                    {"cannot read truth table '" + f + "'", "not a regular file (a FIFO)"}));
  EXPECT_TRUE(holds(refusal([] { tasks::read_truth_table_csv("/dev/urandom"); }),
                    {"not a regular file (a character device)"}));
  EXPECT_TRUE(holds(refusal([] { tasks::read_truth_table_csv("/dev/zero"); }),
                    {"not a regular file (a character device)"}));
}

TEST_F(ReadersTest, TruthTableOverItsCapIsRefused) {
  const std::string table = "x0,y\n1,1\n-1,-1\n";
  std::ofstream(path("t.csv")) << table;
  EXPECT_EQ(tasks::read_truth_table_csv(path("t.csv"), table.size()).rows, 2);
  EXPECT_TRUE(holds(refusal([&] { tasks::read_truth_table_csv(path("t.csv"), 8); }),
                    {"t.csv", "15 bytes", "limit of 8 bytes for a truth table"}));
  // The default cap, 1 GiB, checked against the file's size before anything is read.
  const std::string big = sparse("big.csv", "x0,y\n", (uint64_t{1} << 30) + 1);
  EXPECT_TRUE(holds(refusal([&] { tasks::read_truth_table_csv(big); }),
                    {"big.csv", "1073741825 bytes", "limit of 1 GiB"}));
}

// A header of 200,000 columns (1.9 MB) took 68 s to check when each name was compared with every
// other: the column count is capped, with the line and the count in the message, and a header at
// the cap is checked in one pass (its duplicate found and named).
TEST_F(ReadersTest, TruthTableWithTooManyColumnsIsRefusedAtItsHeader) {
  auto header = [](size_t inputs, const std::string& last) {
    std::string text = "# many columns\n";
    for (size_t c = 0; c < inputs; ++c) text += fmt::format("x{},", c);
    return text + last + "\n";
  };
  std::ofstream(path("wide.csv")) << header(200'000, "y") << "1\n";
  EXPECT_TRUE(holds(refusal([&] { tasks::read_truth_table_csv(path("wide.csv")); }),
                    {"wide.csv:2:",
                     ": error: the header has 200001 columns, more than the 65536 a "
                     "truth table may have"}));
  std::ofstream(path("at_cap.csv")) << header(tasks::kMaxTruthTableColumns - 1, "x0");
  EXPECT_TRUE(holds(refusal([&] { tasks::read_truth_table_csv(path("at_cap.csv")); }),
                    {"at_cap.csv:2:", ": error: column 'x0' appears twice"}));
}

// ---------------------------------------------------------------------------------------------
// Tensor files

TEST_F(ReadersTest, TensorFileThatIsNotARegularFileIsRefused) {
  const std::string f = fifo("m.safetensors");
  EXPECT_TRUE(holds(refusal([&] { read_mask_file(f); }),
                    {"cannot read tensor file '" + f + "'", "not a regular file (a FIFO)"}));
  EXPECT_TRUE(holds(refusal([&] { read_safetensors(f); }), {"not a regular file (a FIFO)"}));
  EXPECT_TRUE(holds(refusal([] { read_mask_file("/dev/zero"); }),
                    {"not a regular file (a character device)"}));
  EXPECT_TRUE(
      holds(refusal([&] { read_mask_file(dir_.string()); }), {"not a regular file (a directory)"}));
}

TEST_F(ReadersTest, SafetensorsClaimOverTheCapIsRefusedBeforeAllocating) {
  const std::string big = sparse_mask("big.safetensors", 1024);  // 4 + 4 MiB of tensor data
  EXPECT_TRUE(holds(
      refusal([&] { read_mask_file(big, uint64_t{1} << 20); }),
      {"cannot read '" + big + "'", "claims 8388608 bytes of tensor data", "limit of 1 MiB"}));
  EXPECT_TRUE(holds(refusal([&] { read_safetensors(big, uint64_t{1} << 20); }),
                    {"claims 8388608 bytes", "limit of 1 MiB"}));
  // At the cap it is read.
  EXPECT_EQ(read_mask_file(big, uint64_t{8} << 20).n, 1024);
  // A header that claims more than the file holds is refused too, whatever the cap.
  const std::string cut = path("cut.safetensors");
  fs::copy_file(big, cut);
  fs::resize_file(cut, 4096);
  EXPECT_TRUE(holds(refusal([&] { read_mask_file(cut); }), {"cut.safetensors", "truncated?"}));
}

TEST_F(ReadersTest, NpyClaimOverTheCapIsRefusedBeforeAllocating) {
  const std::string header = npy_header({1024, 1024});
  const std::string big = sparse("big.npy", header, header.size() + (uint64_t{4} << 20));
  // In memory: 4 MiB of float32 mask and 4 MiB of int32 provenance.
  EXPECT_TRUE(holds(refusal([&] { read_mask_file(big, uint64_t{1} << 20); }),
                    {"cannot read '" + big + "'", "claims 8388608 bytes", "limit of 1 MiB"}));
  EXPECT_EQ(read_mask_file(big, uint64_t{8} << 20).n, 1024);
}

// ---------------------------------------------------------------------------------------------
// maskc compile / show / validate

TEST_F(ReadersTest, ShowHonoursMaxBytesForTensorFiles) {
  sparse_mask("big.safetensors", 1024);
  const auto [code, err] = maskc("show big.safetensors --max-bytes 1M");
  EXPECT_EQ(code, 1) << err;
  EXPECT_TRUE(holds(err, {"big.safetensors", "claims 8388608 bytes", "limit of 1 MiB"}));
  EXPECT_EQ(maskc("show big.safetensors --max-bytes 8M").first, 0);
}

TEST_F(ReadersTest, CommandsRefuseAFifoInsteadOfBlocking) {
  fifo("f.mask");
  fifo("f.safetensors");
  fifo("t.csv");
  for (const std::string& args : std::vector<std::string>{
           "compile f.mask -o out.safetensors", "show f.mask", "show f.safetensors",
           "validate f.mask --task parity2", "validate " + kParity2 + " --truth-table t.csv"}) {
    const auto [code, err] = maskc(args);
    EXPECT_EQ(code, 1) << args << ": " << err;
    EXPECT_TRUE(holds(err, {"not a regular file (a FIFO)"})) << args;
  }
}

TEST_F(ReadersTest, CommandsRefuseDevicesInsteadOfReadingForever) {
  for (const std::string& args :
       std::vector<std::string>{"compile /dev/zero -o out.safetensors", "show /dev/urandom",
                                "validate /dev/zero --task parity2",
                                "validate " + kParity2 + " --truth-table /dev/zero"}) {
    const auto [code, err] = maskc(args);
    EXPECT_EQ(code, 1) << args << ": " << err;
    EXPECT_TRUE(holds(err, {"not a regular file (a character device)"})) << args;
  }
}

}  // namespace
}  // namespace maskprior
