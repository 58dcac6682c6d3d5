// Text files read line by line — sequence data files (sequence_file.h) and truth-table CSVs
// (truth_table.h) — and their errors: a Diagnostic `FILE:LINE:COLUMN: error: MESSAGE` with the
// line and a caret, thrown as SpecError (it carries the position), as a spec's errors are.
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"

namespace maskprior::tasks {

/// The error `message` at 1-based `line` and byte `column` of the text file `path`, showing
/// `source_line` (left out when longer than 200 bytes) with a caret under that column.
SpecError text_error(const std::string& path, int line, int column, const std::string& message,
                     std::string_view source_line);

/// The error `message` about the file `path` as a whole: `PATH: error: MESSAGE`.
SpecError file_error(const std::string& path, const std::string& message);

/// Throws text_error at the first byte of `line` (line `number` of `path`) that is not text:
/// one that is not part of a UTF-8 character, or a control character other than tab and
/// carriage return (NUL, ESC, vertical tab, DEL, the C1 controls U+0080..U+009F). `kind` names
/// the file in the message ("data file", "truth table").
void check_text_line(const std::string& path, int number, std::string_view line,
                     std::string_view kind);

/// `text` with a leading UTF-8 byte-order mark (which some editors write) replaced by three
/// spaces: it is no part of the first symbol or column name, and every byte keeps its column.
void blank_byte_order_mark(std::string& text);

}  // namespace maskprior::tasks
