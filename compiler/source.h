// Spec text with its file name: turns positions into diagnostics with the source line and caret.
#pragma once

#include <string>
#include <vector>

#include "compiler/ast.h"
#include "core/error.h"

namespace maskprior {

/// The text of one spec and the name it is reported under.
class SourceText {
 public:
  SourceText(std::string text, std::string filename);

  const std::string& text() const { return text_; }
  const std::string& filename() const { return filename_; }

  /// The text of 1-based line `line`, without its newline ("" if out of range).
  std::string line(int line) const;
  /// A diagnostic at `pos` with its source line.
  Diagnostic diagnostic(Severity severity, ast::Pos pos, std::string message) const;
  /// Throws SpecError at `pos`.
  [[noreturn]] void fail(ast::Pos pos, std::string message) const;

 private:
  std::string text_;
  std::string filename_;
  std::vector<size_t> line_starts_;  // offset of each line's first character
};

}  // namespace maskprior
