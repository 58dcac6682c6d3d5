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

/// `text` as valid UTF-8 without control characters: C0 controls (but tab), DEL, the C1 controls
/// U+0080..U+009F, and every byte that is not part of a well-formed UTF-8 character (overlong
/// forms, surrogates and code points above U+10FFFF included) are written as `\xHH`, one per
/// byte. Well-formed, printable text comes back unchanged.
std::string printable_utf8(std::string_view text);

}  // namespace maskprior
