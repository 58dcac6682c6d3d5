// Compiles a spec given on the command line with the installed maskprior and prints what the
// compiled mask holds, so the test can compare it with `maskc compile`.
#include <cstdio>
#include <exception>

#include "compiler/compile.h"
#include "core/cells.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SPEC\n");
    return 2;
  }
  try {
    const maskprior::CompiledMask mask = maskprior::compile_file(argv[1]);
    int64_t open = 0;
    for (uint8_t cell : maskprior::open_pattern(mask)) open += cell;
    std::printf("%s: N = %lld, %lld open cells\n", mask.name.c_str(),
                static_cast<long long>(mask.n), static_cast<long long>(open));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
