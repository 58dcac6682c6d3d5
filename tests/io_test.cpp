// Files: safetensors, npy and the mask-file schema on hand-built CompiledMasks, atomic writes,
// JSON files.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "io/json_file.h"
#include "io/mask_file.h"
#include "io/safetensors.h"
#include "tests/mask_fixture.h"

namespace maskprior {
namespace {

namespace fs = std::filesystem;
using testing::example_mask;
using testing::expect_input_error;
using testing::make_span;
using testing::read_bytes;
using testing::TempDir;
using testing::write_bytes;

void expect_same_mask(const CompiledMask& a, const CompiledMask& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.source_sha256, b.source_sha256);
  EXPECT_EQ(a.layers, b.layers);
  EXPECT_EQ(a.heads, b.heads);
  EXPECT_EQ(a.n, b.n);
  ASSERT_EQ(a.layout.spans.size(), b.layout.spans.size());
  for (size_t i = 0; i < a.layout.spans.size(); ++i) {
    const Span& x = a.layout.spans[i];
    const Span& y = b.layout.spans[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.length, y.length);
    EXPECT_EQ(x.grid, y.grid);
    EXPECT_EQ(x.digits, y.digits);
  }
  EXPECT_EQ(a.open_value, b.open_value);
  EXPECT_EQ(a.close_value, b.close_value);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_EQ(a.provenance, b.provenance);
  EXPECT_EQ(a.hard, b.hard);
}

TEST(Safetensors, MaskRoundTripKeepsEveryField) {
  TempDir dir;
  for (bool with_hard : {false, true}) {
    const CompiledMask m = example_mask(with_hard);
    const std::string path = dir.file("m.safetensors");
    write_mask_file(m, path);
    expect_same_mask(m, read_mask_file(path));
    EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.safetensors"});
  }
}

TEST(Safetensors, GridLayoutAndRealParamsRoundTrip) {
  TempDir dir;
  CompiledMask m;
  m.name = "vision";
  m.n = 5;
  m.layout.spans = {make_span("cls", 0, 1), make_span("p", 1, 4)};
  m.layout.spans[1].grid = std::pair{2, 2};
  m.open_value = 2.5;
  m.close_value = -0.1;
  m.params = {{"side", 2}, {"w", -1.0 / 3.0}};
  m.mask.assign(25, -0.1f);
  m.provenance.assign(25, 7);
  write_mask_file(m, dir.file("v.safetensors"));
  expect_same_mask(m, read_mask_file(dir.file("v.safetensors")));
}

TEST(Safetensors, FileFollowsTheFormat) {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  write_mask_file(example_mask(/*with_hard=*/true), path);
  const std::string bytes = read_bytes(path);
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  EXPECT_EQ(header_size % 8, 0u);
  const std::string header = bytes.substr(8, header_size);
  EXPECT_NE(header.find(R"("mask":{"data_offsets":[0,256],"dtype":"F32","shape":[2,2,4,4]})"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find(R"("hard":{"data_offsets":[512,528],"dtype":"U8","shape":[4,4]})"),
            std::string::npos)
      << header;
  EXPECT_NE(header.find(R"("format":"mask/1")"), std::string::npos);
  EXPECT_NE(header.find(R"("params":"{\"n\":3,\"rate\":0.25}")"), std::string::npos) << header;
  EXPECT_EQ(bytes.size(), 8 + header_size + 256 + 256 + 16);
  // The generic reader sees the same file.
  const SafetensorsData data = read_safetensors(path);
  EXPECT_EQ(data.tensors.size(), 3u);
  EXPECT_EQ(data.tensors.at("provenance").dtype, "I32");
  EXPECT_EQ(data.metadata.at("name"), "parity2");
  EXPECT_EQ(data.metadata.at("open"), "10");
}

TEST(Safetensors, GenericRoundTrip) {
  TempDir dir;
  SafetensorsData data;
  data.tensors["a"] = Tensor{"F64", {2}, std::vector<uint8_t>(16, 3)};
  data.tensors["b"] = Tensor{"U8", {3, 1}, {1, 2, 3}};
  data.tensors["c"] = Tensor{"I64", {0}, {}};
  data.metadata["k"] = "v";
  write_safetensors(dir.file("g.safetensors"), data);
  const SafetensorsData back = read_safetensors(dir.file("g.safetensors"));
  ASSERT_EQ(back.tensors.size(), 3u);
  for (const auto& [name, t] : data.tensors) {
    EXPECT_EQ(back.tensors.at(name).dtype, t.dtype);
    EXPECT_EQ(back.tensors.at(name).shape, t.shape);
    EXPECT_EQ(back.tensors.at(name).bytes, t.bytes);
  }
  EXPECT_EQ(back.metadata, data.metadata);

  data.tensors["d"] = Tensor{"F32", {2}, {1, 2, 3}};
  expect_input_error([&] { write_safetensors(dir.file("bad.safetensors"), data); },
                     {"bad.safetensors", "'d'", "[2]", "3 bytes"});
  EXPECT_FALSE(fs::exists(dir.file("bad.safetensors")));
}

/// A valid mask file's header text and data, to corrupt piece by piece.
struct FileParts {
  std::string header;
  std::string data;
};

FileParts split(const std::string& bytes) {
  uint64_t header_size = 0;
  std::memcpy(&header_size, bytes.data(), 8);
  return {bytes.substr(8, header_size), bytes.substr(8 + header_size)};
}

std::string join(const std::string& header, const std::string& data) {
  const uint64_t size = header.size();
  std::string out(8, '\0');
  std::memcpy(out.data(), &size, 8);
  return out + header + data;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

TEST(Safetensors, RejectsCorruptFiles) {
  TempDir dir;
  const std::string good_path = dir.file("good.safetensors");
  write_mask_file(example_mask(/*with_hard=*/true), good_path);
  const std::string good = read_bytes(good_path);
  const auto [header, data] = split(good);
  const std::string bad = dir.file("bad.safetensors");

  struct Case {
    std::string bytes;
    std::vector<std::string> message;
  };
  const std::vector<Case> cases = {
      {"", {"bad.safetensors", "0 bytes", "too short"}},
      {good.substr(0, 5), {"5 bytes", "too short"}},
      {good.substr(0, 40), {"header length", "runs past the end"}},
      {good.substr(0, good.size() - 3), {"data_offsets", "outside", "truncated"}},
      {good + "xyz", {"3 bytes after the last tensor"}},
      {join(std::string(header.size(), ' ').replace(0, 5, "{\"a\":"), data), {"not valid JSON"}},
      {join(replaced(header, "\"dtype\":\"U8\"", "\"dtype\":\"Q8\""), data),
       {"'hard'", "unknown dtype 'Q8'"}},
      {join(replaced(header, "\"shape\":[4,4]", "\"shape\":[4,5]"), data),
       {"'hard'", "[4, 5]", "needs 20 bytes", "span 16"}},
      {join(replaced(header, "[512,528]", "[500,516]"), data), {"overlaps"}},
      {join(replaced(header, "\"mask\"", "\"mosk\""), data), {"no tensor 'mask'"}},
      {join(replaced(header, "mask/1", "mask/9"), data), {"format", "mask/9", "expected 'mask/1'"}},
      {join(replaced(header, "\"dtype\":\"I32\"", "\"dtype\":\"F32\""), data),
       {"'provenance'", "dtype F32, expected I32"}},
      {join(replaced(header, "\"source_sha256\"", "\"source_sha257\""), data),
       {"metadata 'source_sha256' is missing"}},
      {join(replaced(header, R"(\"length\":3)", R"(\"length\":4)"), data),
       {"layout covers 5 tokens", "N = 4"}},
      {join(replaced(header, "\"open\":\"10\"", "\"open\":\"ten\""), data),
       {"'open'", "not a number"}},
  };
  for (const Case& c : cases) {
    write_bytes(bad, c.bytes);
    std::vector<std::string> message = c.message;
    message.push_back("bad.safetensors");
    expect_input_error([&] { read_mask_file(bad); }, message);
  }
  expect_input_error([&] { read_mask_file(dir.file("missing.safetensors")); },
                     {"cannot read", "missing.safetensors", "No such file"});
}

TEST(Npy, RoundTripAndHeader) {
  TempDir dir;
  const CompiledMask m = example_mask(/*with_hard=*/true);
  const std::string path = dir.file("m.npy");
  write_mask_file(m, path, TensorFormat::kNpy);
  const std::string bytes = read_bytes(path);
  ASSERT_GE(bytes.size(), 10u);
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const size_t header_size = static_cast<uint8_t>(bytes[8]) | static_cast<uint8_t>(bytes[9]) << 8;
  EXPECT_EQ((10 + header_size) % 64, 0u);
  EXPECT_EQ(bytes.substr(10, 65),
            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 4, 4), }");
  EXPECT_EQ(bytes.size(), 10 + header_size + 2 * 2 * 4 * 4 * 4);

  const CompiledMask back = read_mask_file(path);
  EXPECT_EQ(back.mask, m.mask);
  EXPECT_EQ(back.layers, 2);
  EXPECT_EQ(back.heads, 2);
  EXPECT_EQ(back.n, 4);
  ASSERT_EQ(back.layout.spans.size(), 1u);
  EXPECT_EQ(back.layout.spans[0].name, "x");
  EXPECT_EQ(back.layout.spans[0].length, 4);
  EXPECT_EQ(back.provenance, std::vector<int32_t>(m.mask.size(), 0));
  EXPECT_FALSE(back.hard.has_value());

  write_bytes(dir.file("short.npy"), bytes.substr(0, bytes.size() - 4));
  expect_input_error([&] { read_mask_file(dir.file("short.npy")); },
                     {"short.npy", "needs 256 bytes", "has 252", "truncated"});
  write_bytes(dir.file("f8.npy"), replaced(bytes, "'<f4'", "'<f8'"));
  expect_input_error([&] { read_mask_file(dir.file("f8.npy")); }, {"f8.npy", "'<f8'"});
}

TEST(AtomicWrite, ReplacesAndLeavesNoTemporaryFile) {
  TempDir dir;
  const std::string path = dir.file("out.bin");
  write_file_atomic(path, "first");
  write_file_atomic(path, std::vector<std::string_view>{"sec", "ond"});
  EXPECT_EQ(read_bytes(path), "second");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"out.bin"});
}

TEST(AtomicWrite, FailedRenameRemovesTemporaryFile) {
  TempDir dir;
  fs::create_directory(dir.file("target"));
  fs::create_directory(dir.file("target/inside"));  // a non-empty directory cannot be replaced
  expect_input_error([&] { write_file_atomic(dir.file("target"), "bytes"); },
                     {"cannot write", "target"});
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"target"});
  EXPECT_TRUE(fs::is_directory(dir.file("target")));
}

TEST(AtomicWrite, MissingDirectoryIsAnInputError) {
  TempDir dir;
  expect_input_error([&] { write_file_atomic(dir.file("no/such/dir/out.bin"), "bytes"); },
                     {"cannot write", "no/such/dir/out.bin", "No such file or directory"});
}

// A write that fails half way (the file size limit is hit) keeps the old file intact and leaves
// no temporary file. Runs in a child process because the size limit is per process.
TEST(AtomicWrite, FailureMidWriteKeepsExistingFile) {
  TempDir dir;
  const std::string path = dir.file("m.safetensors");
  write_mask_file(example_mask(/*with_hard=*/false), path);
  const std::string before = read_bytes(path);

  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::signal(SIGXFSZ, SIG_IGN);  // fail the write with EFBIG instead of killing the process
    rlimit limit{.rlim_cur = 4096, .rlim_max = RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      write_file_atomic(path, std::string(1 << 20, 'z'));
    } catch (const InputError& e) {
      const bool names_file = std::string(e.what()).find("m.safetensors") != std::string::npos;
      ::_exit(names_file ? 0 : 2);
    }
    ::_exit(1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: write did not fail, 2: message lacks the file name";
  EXPECT_EQ(read_bytes(path), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"m.safetensors"});
  expect_same_mask(example_mask(/*with_hard=*/false), read_mask_file(path));
}

TEST(JsonFile, WriteThenReadRoundTrips) {
  TempDir dir;
  const std::string path = dir.file("summary.json");
  const nlohmann::json value = {{"task", "parity2"},
                                {"seeds", {1, 2, 3}},
                                {"metrics", {{"accuracy", 0.875}, {"loss", 1.5e-3}}},
                                {"done", true}};
  write_json_file(path, value);
  EXPECT_EQ(read_json_file(path), value);
  // Indented, one trailing newline, written atomically (no temporary file left behind).
  const std::string text = read_bytes(path);
  EXPECT_EQ(text, value.dump(2) + "\n");
  EXPECT_NE(text.find("\n  \"done\": true"), std::string::npos) << text;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"summary.json"});

  write_json_file(path, nlohmann::json::array());
  EXPECT_EQ(read_json_file(path), nlohmann::json::array());
}

TEST(JsonFile, MissingFileIsAnInputErrorNamingIt) {
  TempDir dir;
  expect_input_error([&] { read_json_file(dir.file("missing.json")); },
                     {"cannot read", "missing.json"});
}

TEST(JsonFile, InvalidJsonIsAnInputErrorNamingTheFile) {
  TempDir dir;
  for (const std::string& text :
       {std::string("{\"a\": 1,"), std::string("not json"), std::string("")}) {
    write_bytes(dir.file("bad.json"), text);
    expect_input_error([&] { read_json_file(dir.file("bad.json")); },
                       {"bad.json", "not valid JSON"});
  }
}

TEST(JsonFile, WriteToMissingDirectoryIsAnInputError) {
  TempDir dir;
  expect_input_error(
      [&] {
        write_json_file(dir.file("no/such/dir/out.json"), {{"a", 1}});
      },
      {"cannot write", "no/such/dir/out.json"});
}

}  // namespace
}  // namespace maskprior
