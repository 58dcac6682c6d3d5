// Tensor files (safetensors, npy), atomic writes and rendering, on hand-built CompiledMasks.
#include <gtest/gtest.h>
#include <png.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "render/render.h"
#include "io/tensor_file.h"

namespace maskprior {
namespace {

namespace fs = std::filesystem;

/// A fresh, empty directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            (std::string("maskprior_tensorio_") + info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  fs::path path_;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

Span make_span(const std::string& name, int64_t offset, int64_t length) {
  Span s;
  s.name = name;
  s.offset = offset;
  s.length = length;
  return s;
}

/// The parity2 example of LANGUAGE.md with n = 3: cls, x[3]; N = 4; 2 layers, 2 heads so that
/// (layer, head) indexing is exercised; head 1 of layer 1 carries a non-scale value 0.5.
CompiledMask example_mask(bool with_hard) {
  CompiledMask m;
  m.name = "parity2";
  m.source_sha256 = std::string(64, 'a');
  m.layers = 2;
  m.heads = 2;
  m.n = 4;
  m.layout.spans = {make_span("cls", 0, 1), make_span("x", 1, 3)};
  m.layout.spans[1].digits = DigitOrder::kMsbFirst;
  m.open_value = 10;
  m.close_value = -10;
  m.params = {{"n", 3}, {"rate", 0.25}};
  // One literal [N, N] pattern: 1 = open, 0 = closed.
  const int open[4][4] = {{1, 1, 1, 0}, {0, 1, 1, 0}, {0, 1, 1, 0}, {0, 0, 0, 1}};
  for (int64_t l = 0; l < 2; ++l) {
    for (int64_t h = 0; h < 2; ++h) {
      for (int q = 0; q < 4; ++q) {
        for (int k = 0; k < 4; ++k) {
          m.mask.push_back(open[q][k] ? 10.0f : -10.0f);
          m.provenance.push_back(open[q][k] ? 10 + q : 0);
        }
      }
    }
  }
  m.mask[m.index(1, 1, 3, 0)] = 0.5f;
  m.provenance[m.index(1, 1, 3, 0)] = 42;
  if (with_hard) {
    m.hard = std::vector<uint8_t>(16, 0);
    (*m.hard)[1 * 4 + 3] = 1;  // x[0] never sees x[2]
  }
  return m;
}

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

/// Runs `f` expecting an InputError whose message contains every one of `parts`.
void expect_input_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message: " << e.what() << "\nmissing: " << part;
    }
  }
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

TEST(Render, GridOfSmallMask) {
  const CompiledMask m = example_mask(/*with_hard=*/true);
  const std::string expected =
      "mask parity2: 2 layers, 2 heads, N = 4; layer 1, head 1 (rows = query, columns = key)\n"
      "layout: cls @0, x[3] @1..3 msb_first\n"
      "cells: 8 open, 6 closed, 1 other, 1 hard-excluded; values -10 to 10\n"
      "legend: # open (10)  . closed (-10)  other values = 0.5 (+ > 0)  x hard-excluded\n"
      "\n"
      "      c x x x\n"
      "      l [ [ [\n"
      "      s 0 1 2\n"
      "        ] ] ]\n"
      " cls  # # # .\n"
      "x[0]  . # # x\n"
      "x[1]  . # # .\n"
      "x[2]  + . . #\n";
  EXPECT_EQ(render_grid(m, /*layer=*/1, /*head=*/1), expected);
  // Layer 0, head 0 has no 0.5 cell.
  EXPECT_NE(render_grid(m, 0, 0).find("x[2]  . . . #\n"), std::string::npos);
}

TEST(Render, LargeMaskGetsASummaryAndOutOfRangeHeadsAreErrors) {
  const CompiledMask m = example_mask(/*with_hard=*/false);
  const std::string text = render_grid(m, 0, 0, /*max_tokens=*/3);
  EXPECT_NE(text.find("N = 4 is too large to draw as text"), std::string::npos) << text;
  EXPECT_NE(text.find("--png"), std::string::npos);
  EXPECT_EQ(text.find("legend"), std::string::npos);
  expect_input_error([&] { render_grid(m, 2, 0); }, {"layer 2 is out of range", "2 layers (0..1)"});
  expect_input_error([&] { render_grid(m, 0, -1); }, {"head -1 is out of range", "2 heads"});
}

/// Width, height and the RGB of pixel (x, y) of an 8-bit RGB PNG, decoded with libpng.
struct Decoded {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;
  std::array<int, 3> at(uint32_t x, uint32_t y) const {
    const size_t i = (static_cast<size_t>(y) * width + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
};

Decoded decode_png(const std::string& path) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  Decoded out;
  if (!png_image_begin_read_from_file(&image, path.c_str())) {
    ADD_FAILURE() << "cannot decode " << path << ": " << image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  out.width = image.width;
  out.height = image.height;
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) {
    ADD_FAILURE() << "cannot decode " << path << ": " << image.message;
  }
  return out;
}

TEST(Render, PngHeatmap) {
  TempDir dir;
  const CompiledMask m = example_mask(/*with_hard=*/true);
  const PngReport report = write_png_heatmap(m, 1, 1, dir.file("h.png"));
  EXPECT_EQ(report.cells_per_pixel, 1);
  EXPECT_EQ(report.pixels_per_cell, 64);  // 256 / 4
  EXPECT_EQ(report.side, 256);
  EXPECT_EQ(report.scale, 10.0);
  const Decoded png = decode_png(dir.file("h.png"));
  ASSERT_EQ(png.width, 256u);
  ASSERT_EQ(png.height, 256u);
  const auto cell = [&](int q, int k) { return png.at(k * 64 + 10, q * 64 + 10); };
  EXPECT_EQ(cell(0, 0), (std::array<int, 3>{255, 0, 0}));      // open: full red
  EXPECT_EQ(cell(0, 3), (std::array<int, 3>{0, 0, 255}));      // closed: full blue
  EXPECT_EQ(cell(1, 3), (std::array<int, 3>{0, 0, 0}));        // hard: black
  EXPECT_EQ(cell(3, 0), (std::array<int, 3>{255, 242, 242}));  // 0.5 of 10: faint red

  // Capping the side averages blocks: 2x2 blocks of the 4x4 head.
  const PngReport small =
      write_png_heatmap(m, 1, 1, dir.file("s.png"), {.max_side = 2, .min_side = 1});
  EXPECT_EQ(small.cells_per_pixel, 2);
  EXPECT_EQ(small.side, 2);
  const Decoded s = decode_png(dir.file("s.png"));
  // Top-left block: 10, 10, -10, 10 -> mean 5 -> half red.
  EXPECT_EQ(s.at(0, 0), (std::array<int, 3>{255, 128, 128}));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"h.png", "s.png"}));
}

}  // namespace
}  // namespace maskprior
