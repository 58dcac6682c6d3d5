// Where maskc's data (the shipped specs/) lives: <prefix>/share/maskprior beside <prefix>/bin, in
// the build tree (build/share/maskprior/specs links to the source's specs/) and once installed
// (`cmake --install`) alike. Found from the running binary's own path, so an installed maskc
// needs no checkout.
#pragma once

#include <string>

namespace maskprior::cli {

/// The folder holding specs/: $MASKPRIOR_SHARE_DIR when set, else ../share/maskprior from the
/// running binary's folder. Throws InputError naming the folder when it holds no specs/.
std::string share_dir();

}  // namespace maskprior::cli
