// Errors and diagnostics shared by every layer below the CLI.
//
// Two kinds of failure (Halide's user_error vs internal_assert):
//  - SpecError / InputError: the user's mistake (a spec, a flag, a file). Carries where.
//  - InternalError: a bug in maskprior. Never caused by input.
// Library code throws; only cli::run turns errors into exit codes.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace maskprior {

/// A position in a source file; line and column are 1-based (0 = unknown).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

enum class Severity { kError, kWarning };

/// One message about a spec, printed as `file:line:col: error: message` + source line + caret.
struct Diagnostic {
  Severity severity = Severity::kError;
  SourceLocation where;
  std::string message;
  std::string source_line;  // the text of line `where.line`, empty if unknown
};

/// Formats a diagnostic the one way every tool prints them:
///   file:line:col: error: message
///     source line
///         ^
std::string format_diagnostic(const Diagnostic& d);

/// The user's mistake in a .mask spec: has a position.
class SpecError : public std::runtime_error {
 public:
  explicit SpecError(Diagnostic d);
  const Diagnostic& diagnostic() const { return diagnostic_; }

 private:
  Diagnostic diagnostic_;
};

/// The user's mistake in some other input (a tensor file, a CSV, a flag value, a size).
/// `what()` is the full message, already naming the file/line/operation.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bug in maskprior, never caused by user input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Throws InternalError with `message` when `condition` is false.
inline void internal_check(bool condition, const std::string& message) {
  if (!condition) throw InternalError("internal error: " + message);
}

}  // namespace maskprior
