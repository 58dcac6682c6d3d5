// Text from outside (folder names, file contents) made safe to show: on a terminal, in a Markdown
// report, or to a library (PLplot) that aborts on bytes that are not UTF-8.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace maskprior {

/// The length of the well-formed UTF-8 character that starts at text[i] (RFC 3629), or 0 when the
/// bytes there are none: a stray continuation byte, an overlong form, a surrogate, a value above
/// U+10FFFF, a cut sequence.
size_t utf8_length(std::string_view text, size_t i);

/// A byte count for people: "512 B", "1.5 GiB", "95.0 PiB"; "more than 16 EiB" for the largest
/// uint64_t (a saturated count).
std::string human_bytes(uint64_t bytes);

/// A duration for people: "42 s", "7.5 min", "2.3 h" (seconds under 2 minutes, minutes under 2
/// hours); a negative or non-finite duration as "0 s".
std::string human_duration(double seconds);

/// Whether code point `c` shows nothing, or passes for a plain space, where it is printed: the
/// no-break and other non-ASCII spaces (U+00A0, U+2000..U+200A, U+202F, U+3000, ...), zero-width
/// characters (U+200B..U+200D, U+2060, the byte-order mark U+FEFF), the soft hyphen and the
/// bidirectional controls (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069) that reorder what
/// follows them.
bool is_invisible(char32_t c);

/// `text` as valid UTF-8 that shows every character it holds: C0 controls (but tab, and newline
/// when `keep_newlines`), DEL, the C1 controls U+0080..U+009F and every byte that is not part of
/// a well-formed UTF-8 character (overlong forms, surrogates and code points above U+10FFFF
/// included) are written as `\xHH`, one per byte; invisible characters (is_invisible) as
/// `\uHHHH` (`\UHHHHHHHH` above U+FFFF). Well-formed, visible text comes back unchanged. Every
/// message that echoes input goes through it (escape_control_chars, quote_input,
/// format_diagnostic), and so does text a report or plot shows.
std::string printable_utf8(std::string_view text, bool keep_newlines = false);

}  // namespace maskprior
