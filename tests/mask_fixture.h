// Fixtures shared by io_test and render_test: a scratch directory per test, a small hand-built
// CompiledMask, and checks of InputError messages.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "core/compiled_mask.h"
#include "tests/test_util.h"

namespace maskprior::testing {

/// A fresh, empty directory per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = maskprior::testing::unique_temp_dir(std::string("maskprior_") +
                                                info->test_suite_name() + "_" + info->name());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      names.push_back(e.path().filename());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline Span make_span(const std::string& name, int64_t offset, int64_t length) {
  Span s;
  s.name = name;
  s.offset = offset;
  s.length = length;
  return s;
}

/// The parity2 example of docs/language-reference.md with n = 3: cls, x[3]; N = 4; 2 layers, 2
/// heads so that (layer, head) indexing is exercised; head 1 of layer 1 carries a non-scale value
/// 0.5.
inline CompiledMask example_mask(bool with_hard) {
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

/// Runs `f` expecting an InputError whose message contains every one of `parts`.
inline void expect_input_error(const std::function<void()>& f,
                               const std::vector<std::string>& parts) {
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

}  // namespace maskprior::testing
