#include "cli/share_dir.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/error.h"

namespace maskprior::cli {

namespace fs = std::filesystem;

std::string share_dir() {
  fs::path dir;
  const char* variable = std::getenv("MASKPRIOR_SHARE_DIR");
  if (variable != nullptr && *variable != '\0') {
    dir = variable;
  } else {
    std::error_code error;
    const fs::path exe = fs::read_symlink("/proc/self/exe", error);
    if (error) {
      throw InputError(
          fmt::format("cannot find maskc's own path (/proc/self/exe: {}) to locate its specs; set "
                      "MASKPRIOR_SHARE_DIR to the folder that holds specs/",
                      error.message()));
    }
    dir = (exe.parent_path() / ".." / "share" / "maskprior").lexically_normal();
  }
  if (!fs::is_directory(dir / "specs")) {
    throw InputError(fmt::format(
        "maskc's specs are not in {} (no specs/ folder there): install maskprior with `cmake "
        "--install`, or set MASKPRIOR_SHARE_DIR to the folder that holds specs/",
        dir.string()));
  }
  return dir.string();
}

}  // namespace maskprior::cli
