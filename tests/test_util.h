// Helpers shared by the test suites.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "core/error.h"

namespace maskprior::testing {

/// The message of the InputError `f` throws ("" if it throws none).
template <class F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// A new folder of its own under the temporary folder, named PREFIX.XXXXXX (mkdtemp; a `/` in
/// PREFIX becomes `_`): a test
/// that removes it removes nothing another test (or a second run of this one) made, however many
/// run at once. InternalError when it cannot be made.
inline std::filesystem::path unique_temp_dir(std::string prefix) {
  for (char& c : prefix) c = c == '/' ? '_' : c;  // parameterised tests are named "Name/0"
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw InternalError("unique_temp_dir: cannot make a folder like " + pattern);
  }
  return pattern;
}

/// The diagnostic of the SpecError `f` throws, as the CLI prints it ("" if it throws none).
template <class F>
std::string spec_error(F f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

}  // namespace maskprior::testing
