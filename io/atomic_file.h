// Atomic file writes: a temporary file in the target's folder, fsync, rename. A failed or
// interrupted write never leaves a partial file at the target.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace maskprior {

/// Writes `bytes` to `path` via a temporary file in the same folder and a rename, so a failed or
/// interrupted write never leaves a partial file at `path`. Throws InputError naming the path.
void write_file_atomic(const std::string& path, std::string_view bytes);
/// As above, writing the concatenation of `parts` (so large buffers need not be joined first).
void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts);

}  // namespace maskprior
