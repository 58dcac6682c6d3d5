// Helpers shared by the test suites.
#pragma once

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
