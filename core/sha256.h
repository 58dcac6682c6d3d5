// SHA-256 fingerprints: of a spec's source (CompiledMask::source_sha256), and of the files a
// training run depends on (its spec, data files and checkpoint), so that a resumed run can tell
// whether they changed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace maskprior {

/// SHA-256 of `bytes` as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

/// SHA-256 of the regular file `path`, read in pieces (never whole in memory). InputError as for
/// RegularFile (core/regular_file.h; `what` names the file) when it is missing, not a regular
/// file or larger than `max_bytes`. Polls check_stop_requested between pieces.
std::string sha256_file(const std::string& path, uint64_t max_bytes, std::string_view what);

}  // namespace maskprior
