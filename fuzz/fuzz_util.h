// Shared helpers of the libFuzzer targets (fuzz/): a per-process scratch file for the readers
// that take a path, and the rule of every target: SpecError and InputError are the expected
// answer to bad input; any other exception is a finding, reported and turned into an abort so
// that libFuzzer saves the input.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.h"

namespace maskprior::fuzz {

/// The byte cap handed to every reader and to the compiler: small, so that a header claiming
/// gigabytes is refused by the check under test instead of exhausting the fuzzer's memory.
inline constexpr uint64_t kFuzzMaxBytes = uint64_t{1} << 20;

/// A scratch file of this process, under $TMPDIR (or /tmp), named after the target and pid.
inline const std::string& scratch_path(const char* target, const char* extension) {
  static const std::string path =
      (std::filesystem::temp_directory_path() /
       (std::string("maskprior_") + target + "_" + std::to_string(getpid()) + extension))
          .string();
  return path;
}

/// Writes `data` to `path`, replacing it; aborts if it cannot (the harness itself is broken).
inline void write_scratch(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  out.close();
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write the scratch file %s\n", path.c_str());
    std::abort();
  }
}

/// Runs `body`; SpecError and InputError are expected, anything else is reported and aborts.
template <class F>
void expect_only_input_errors(const char* what, F&& body) {
  try {
    body();
  } catch (const SpecError&) {
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: %s threw an unexpected exception: %s\n", what, e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz: %s threw a non-std exception\n", what);
    std::abort();
  }
}

}  // namespace maskprior::fuzz
