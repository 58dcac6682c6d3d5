// Files: safetensors, npy and the mask-file schema on hand-built CompiledMasks, atomic writes,
// JSON files.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/text.h"
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

/// A mask whose layout has a grid (`p` is 2 x 2) and whose params are not whole numbers.
CompiledMask vision_mask() {
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
  return m;
}

TEST(Safetensors, GridLayoutAndRealParamsRoundTrip) {
  TempDir dir;
  const CompiledMask m = vision_mask();
  write_mask_file(m, dir.file("v.safetensors"));
  expect_same_mask(m, read_mask_file(dir.file("v.safetensors")));
}

TEST(Safetensors, AMaskWithoutProvenanceIsNotWritten) {
  TempDir dir;
  CompiledMask m = vision_mask();
  m.provenance.clear();  // as compiled with CompileOptions::provenance = false
  try {
    write_mask_file(m, dir.file("v.safetensors"));
    ADD_FAILURE() << "written without provenance";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("compiled without provenance"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.file("v.safetensors")));
  write_mask_file(m, dir.file("v.npy"), TensorFormat::kNpy);  // npy holds only the mask
  EXPECT_EQ(read_mask_file(dir.file("v.npy")).mask, m.mask);
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
      // Nesting that printing or comparing the header would recurse through.
      {join(std::string(header.size(), ']').replace(0, 1000, std::string(1000, '[')), data),
       {"header", "nested more than 512 deep"}},
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

// A grid must tile its span with positive sides; the product is checked without overflow.
TEST(Safetensors, GridThatDoesNotTileItsSpanIsRefused) {
  TempDir dir;
  write_mask_file(vision_mask(), dir.file("v.safetensors"));
  const auto [header, data] = split(read_bytes(dir.file("v.safetensors")));
  const std::string bad = dir.file("bad.safetensors");
  for (const std::string grid : {"[-2,-2]", "[4294967296,4294967296]", "[3037000500,3037000500]"}) {
    write_bytes(bad, join(replaced(header, R"(\"grid\":[2,2])", R"(\"grid\":)" + grid), data));
    expect_input_error([&] { read_mask_file(bad); },
                       {"bad.safetensors", "grid", "does not tile its 4 tokens"});
  }
}

// Numbers that are not finite, or overflow JSON's doubles, are refused with the file's name
// (not a bare "[json.exception.out_of_range.406]").
TEST(Safetensors, NonFiniteNumbersAreRefusedNamingTheFile) {
  TempDir dir;
  write_mask_file(example_mask(/*with_hard=*/true), dir.file("good.safetensors"));
  const auto [header, data] = split(read_bytes(dir.file("good.safetensors")));
  const std::string bad = dir.file("bad.safetensors");
  struct Case {
    std::string from, to;
    std::vector<std::string> message;
  };
  for (const Case& c : std::vector<Case>{
           {"\"open\":\"10\"", "\"open\":\"nan\"", {"'open'", "not a finite number"}},
           {"\"open\":\"10\"", "\"open\":\"inf\"", {"'open'", "not a finite number"}},
           {"\"close\":\"-10\"", "\"close\":\"-inf\"", {"'close'", "not a finite number"}},
           {"\"close\":\"-10\"", "\"close\":\"-1e999\"", {"'close'"}},
           {R"({\"n\":3,)", R"({\"n\":1e999,)", {"'params'", "not valid JSON"}},
           {"[512,528]", "[512,1e999]", {"header: not valid JSON"}},
       }) {
    write_bytes(bad, join(replaced(header, c.from, c.to), data));
    std::vector<std::string> message = c.message;
    message.push_back("bad.safetensors");
    expect_input_error([&] { read_mask_file(bad); }, message);
  }
}

// Durations for people (status lines, --dry-run estimates): seconds, minutes, hours by size.
TEST(Messages, HumanDuration) {
  EXPECT_EQ(human_duration(42.4), "42 s");
  EXPECT_EQ(human_duration(119), "119 s");
  EXPECT_EQ(human_duration(120), "2.0 min");
  EXPECT_EQ(human_duration(7199), "120.0 min");
  EXPECT_EQ(human_duration(7200), "2.0 h");
  EXPECT_EQ(human_duration(-5), "0 s");
  EXPECT_EQ(human_duration(std::numeric_limits<double>::quiet_NaN()), "0 s");
}

// Text shown from outside is valid UTF-8 without controls: each byte that is no part of a
// well-formed character (a stray continuation, a cut sequence, overlong forms, surrogates, beyond
// U+10FFFF) and each C0, DEL or C1 control is written as \xHH; well-formed text is unchanged.
TEST(Messages, PrintableUtf8) {
  EXPECT_EQ(printable_utf8("plain é → 😀\tx"), "plain é → 😀\tx");
  EXPECT_EQ(printable_utf8("a\x1b[1m\x7f"), "a\\x1b[1m\\x7f");
  EXPECT_EQ(printable_utf8("\xff\x80"), "\\xff\\x80");
  EXPECT_EQ(printable_utf8("\xe2\x82"), "\\xe2\\x82");                    // cut
  EXPECT_EQ(printable_utf8("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(printable_utf8("\xe0\x80\xaf"), "\\xe0\\x80\\xaf");           // overlong
  EXPECT_EQ(printable_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable_utf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // > U+10FFFF
  EXPECT_EQ(printable_utf8("\xc2\x9b"), "\\xc2\\x9b");                    // C1 CSI
  // Characters that show nothing or pass for a space are written as \uHHHH: a no-break space, a
  // zero-width space, a byte-order mark, a bidi override; above U+FFFF as \UHHHHHHHH.
  EXPECT_EQ(printable_utf8("a\xc2\xa0"
                           "b"),
            "a\\u00a0b");
  EXPECT_EQ(printable_utf8("x\xe2\x80\x8b"
                           "1"),
            "x\\u200b1");
  EXPECT_EQ(printable_utf8("\xef\xbb\xbfx0"), "\\ufeffx0");
  EXPECT_EQ(printable_utf8("\xe2\x80\xae"
                           "abc"),
            "\\u202eabc");
  EXPECT_EQ(printable_utf8("\xf3\xa0\x80\xa0"), "\\U000e0020");  // a tag space
  // Visible neighbours are kept: an emoji's variation selector, the ideographic full stop.
  EXPECT_EQ(printable_utf8("\xe2\x9d\xa4\xef\xb8\x8f \xe3\x80\x82"),
            "\xe2\x9d\xa4\xef\xb8\x8f \xe3\x80\x82");
  EXPECT_EQ(printable_utf8("a\nb"), "a\\x0ab");
  EXPECT_EQ(printable_utf8("a\nb", /*keep_newlines=*/true), "a\nb");
}

TEST(Messages, EchoedInputIsEscapedAndCut) {
  EXPECT_EQ(escape_control_chars("a\x1b[31mb\tc\nd\x7f"), "a\\x1b[31mb\tc\\x0ad\\x7f");
  EXPECT_EQ(escape_control_chars("a\nb", /*keep_newlines=*/true), "a\nb");
  EXPECT_EQ(quote_input("x\x07y"), "'x\\x07y'");
  const std::string field(10 << 20, 'z');
  const std::string quoted = quote_input(field);
  EXPECT_LT(quoted.size(), 300u);
  EXPECT_EQ(quoted, "'" + std::string(200, 'z') + "…' (10485760 bytes)");
  // Never cut inside a UTF-8 character.
  EXPECT_EQ(quote_input("ab\xc3\xa9"
                        "cd",
                        3),
            "'ab…' (6 bytes)");

  Diagnostic d;
  d.where = {"s\x1b.mask", 1, 4};  // under the c
  d.message = "unexpected \x1b[2J";
  d.source_line =
      "a\x1b"
      "bc d";
  EXPECT_EQ(format_diagnostic(d),
            "s\\x1b.mask:1:4: error: unexpected \\x1b[2J\n"
            "  a\\x1bbc d\n"
            "        ^");

  // The caret counts each escape as the columns it shows: under the `d` after a zero-width
  // space, a byte that is not UTF-8 and a no-break space; and bytes that are not UTF-8 in the
  // file name, message and line come out as \xHH, so the diagnostic is valid UTF-8.
  d.where = {"s\xff.mask", 1, 11};
  d.message = "unknown span \xff";
  d.source_line =
      "\xe2\x80\x8b\xff\xc2\xa0"
      "abc d";
  EXPECT_EQ(format_diagnostic(d),
            "s\\xff.mask:1:11: error: unknown span \\xff\n"
            "  \\u200b\\xff\\u00a0abc d\n"
            "                      ^");
}

TEST(Messages, AllocationFailureNamesTheSize) {
  expect_input_error(
      [] { allocate_or_throw(uint64_t{7} << 30, "the mask", [] { throw std::bad_alloc(); }); },
      {"cannot allocate 7516192768 bytes", "7.0 GiB", "the mask", "out of memory"});
  int calls = 0;
  allocate_or_throw(8, "a buffer", [&] { ++calls; });
  EXPECT_EQ(calls, 1);
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

// Outputs are regular files: a symbolic link is neither followed nor replaced, and a FIFO, a
// device or a directory is never replaced by one.
TEST(AtomicWrite, RefusesAnythingButARegularFile) {
  TempDir dir;
  write_bytes(dir.file("real.bin"), "keep");
  fs::create_symlink("real.bin", dir.file("link.bin"));
  fs::create_symlink("missing.bin", dir.file("dangling.bin"));
  ASSERT_EQ(::mkfifo(dir.file("fifo.bin").c_str(), 0600), 0);
  fs::create_directory(dir.file("folder"));
  expect_input_error([&] { write_file_atomic(dir.file("link.bin"), "x"); },
                     {"link.bin", "symbolic link", "never follow"});
  expect_input_error([&] { write_file_atomic(dir.file("dangling.bin"), "x"); },
                     {"dangling.bin", "symbolic link"});
  expect_input_error([&] { write_file_atomic(dir.file("fifo.bin"), "x"); },
                     {"fifo.bin", "a FIFO, not a regular file"});
  expect_input_error([&] { write_file_atomic(dir.file("folder"), "x"); }, {"a directory"});
  EXPECT_TRUE(fs::is_symlink(dir.file("link.bin")));
  EXPECT_TRUE(fs::is_symlink(dir.file("dangling.bin")));
  EXPECT_TRUE(fs::is_fifo(dir.file("fifo.bin")));
  EXPECT_EQ(read_bytes(dir.file("real.bin")), "keep");
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"dangling.bin", "fifo.bin", "folder",
                                                     "link.bin", "real.bin"}));
  write_file_atomic(dir.file("real.bin"), "new");  // a regular file is replaced
  EXPECT_EQ(read_bytes(dir.file("real.bin")), "new");
  // A device: a private node like /dev/null (never the real one, which a regression would
  // replace when run as root); creating it needs root, so elsewhere this part is skipped.
  if (::mknod(dir.file("null.bin").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    expect_input_error([&] { write_file_atomic(dir.file("null.bin"), "x"); },
                       {"null.bin", "a character device"});
    EXPECT_TRUE(fs::is_character_file(dir.file("null.bin")));
  }
}

/// The PID of a process that has ended (and been reaped).
pid_t dead_pid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

// A writer killed mid-write (SIGKILL) leaves NAME.tmp-PID-XXXXXXXX; the next write of NAME
// removes it, but not the temporary files of live processes nor those of other targets.
TEST(AtomicWrite, RemovesStaleTemporaryFilesOfDeadProcesses) {
  TempDir dir;
  const pid_t dead = dead_pid();
  const std::string stale = fmt::format("out.bin.tmp-{}-0badf00d", dead);
  const std::string live = fmt::format("out.bin.tmp-{}-12345678", ::getppid());
  const std::string other = fmt::format("other.bin.tmp-{}-0badf00d", dead);
  const std::string odd = fmt::format("out.bin.tmp-{}-notahexnumber", dead);
  for (const std::string& name : {stale, live, other, odd}) write_bytes(dir.file(name), "junk");
  write_file_atomic(dir.file("out.bin"), "data");
  EXPECT_EQ(read_bytes(dir.file("out.bin")), "data");
  std::vector<std::string> expected{"out.bin", live, other, odd};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(dir.entries(), expected);
  EXPECT_EQ(remove_stale_temp_files(dir.file("other.bin")), 1);
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

// JSON nested deeper than kMaxJsonDepth is refused while it is read, up to the size caps (16 MiB of
// brackets here): nothing later walks it recursively (printing it in a report crashed before).
TEST(JsonFile, DeepNestingIsRefusedAtAnyLength) {
  TempDir dir;
  auto nested = [](size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); };
  write_bytes(dir.file("ok.json"), nested(kMaxJsonDepth));
  EXPECT_EQ(read_json_file(dir.file("ok.json")).dump().size(), 2 * size_t{kMaxJsonDepth});
  for (const size_t depth : {size_t{kMaxJsonDepth} + 1, size_t{8} << 20}) {
    write_bytes(dir.file("deep.json"), nested(depth));
    expect_input_error([&] { read_json_file(dir.file("deep.json")); },
                       {"deep.json", "nested more than 512 deep"});
    write_bytes(dir.file("deep.jsonl"), "{\"step\": 0}\n{\"a\": " + nested(depth) + "}\n");
    expect_input_error([&] { read_json_lines(dir.file("deep.jsonl")); },
                       {"deep.jsonl:2", "nested more than 512 deep"});
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
