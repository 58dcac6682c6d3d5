// Errors and diagnostics shared by every layer below the CLI.
//
// Two kinds of failure (Halide's user_error vs internal_assert):
//  - SpecError / InputError: the user's mistake (a spec, a flag, a file). Carries where.
//  - InternalError: a bug in maskprior. Never caused by input.
// Library code throws; only cli::run turns errors into exit codes.
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
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
/// Control characters in the file name, message and source line are escaped (\x1b), so a spec
/// cannot move the cursor or recolour the terminal of whoever reads its errors, and so are bytes
/// that are not UTF-8 and invisible characters (\u200b); the caret stands under the escaped
/// character it points at.
std::string format_diagnostic(const Diagnostic& d);

/// `text` with every control character (bytes below 0x20, 0x7f, the C1 controls) and every byte
/// that is not UTF-8 written as `\xHH`, except tabs, and newlines when `keep_newlines`; and
/// every character that shows nothing or passes for a space (U+200B, U+00A0, U+FEFF, bidi
/// controls) as `\uHHHH`. The result is valid UTF-8. For anything that echoes input.
std::string escape_control_chars(std::string_view text, bool keep_newlines = false);

/// Input echoed in a message: in single quotes, control characters escaped, and cut after
/// `max` bytes (at a UTF-8 character boundary) with "…" and the full length, so a 10 MB field
/// does not end up in the message whole.
std::string quote_input(std::string_view text, size_t max = 200);

/// The user's mistake in a .mask spec: has a position.
class SpecError : public std::runtime_error {
 public:
  explicit SpecError(Diagnostic d);
  const Diagnostic& diagnostic() const { return diagnostic_; }

 private:
  Diagnostic diagnostic_;
};

/// The user's mistake in some other input (a tensor file, a CSV, a flag value, a size).
/// `what()` is the full message, already naming the file/line/operation; `where()` names the
/// file, and the line when there is one, for programs (Python's InputError.file and .line): empty
/// and 0 when the error is about no file.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
  InputError(const std::string& message, SourceLocation where)
      : std::runtime_error(message), where_(std::move(where)) {}
  const SourceLocation& where() const { return where_; }

 private:
  SourceLocation where_;
};

/// A bug in maskprior, never caused by user input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

/// Throws InputError "cannot allocate N bytes for WHAT (out of memory)".
[[noreturn]] void throw_cannot_allocate(uint64_t bytes, std::string_view what);

/// Runs `allocate` (which sizes a buffer of `bytes` bytes holding `what`), turning std::bad_alloc
/// into the InputError of throw_cannot_allocate: never a bare "std::bad_alloc".
template <class F>
void allocate_or_throw(uint64_t bytes, std::string_view what, F&& allocate) {
  try {
    allocate();
  } catch (const std::bad_alloc&) {
    throw_cannot_allocate(bytes, what);
  }
}

/// Throws InternalError with `message` when `condition` is false.
inline void internal_check(bool condition, const std::string& message) {
  if (!condition) throw InternalError("internal error: " + message);
}

}  // namespace maskprior
