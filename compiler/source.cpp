#include "compiler/source.h"

#include <utility>

namespace maskprior {

SourceText::SourceText(std::string text, std::string filename)
    : text_(std::move(text)), filename_(std::move(filename)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    if (text_[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::string SourceText::line(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts_.size()) return {};
  const size_t begin = line_starts_[static_cast<size_t>(line) - 1];
  if (begin > text_.size()) return {};
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  return text_.substr(begin, end - begin);
}

Diagnostic SourceText::diagnostic(Severity severity, ast::Pos pos, std::string message) const {
  Diagnostic d;
  d.severity = severity;
  d.where = SourceLocation{filename_, pos.line, pos.column};
  d.message = std::move(message);
  d.source_line = line(pos.line);
  return d;
}

void SourceText::fail(ast::Pos pos, std::string message) const {
  throw SpecError(diagnostic(Severity::kError, pos, std::move(message)));
}

}  // namespace maskprior
