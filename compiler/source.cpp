#include "compiler/source.h"

#include <utility>

namespace maskprior {

SourceText::SourceText(std::string text, std::string filename)
    : text_(std::move(text)), filename_(std::move(filename)) {}

std::string SourceText::line(int line) const {
  if (line < 1) return {};
  size_t begin = 0;
  for (int current = 1; current < line; ++current) {
    begin = text_.find('\n', begin);
    if (begin == std::string::npos) return {};
    ++begin;
  }
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
