#include "cli/cli.h"

int main(int argc, char** argv) {
  return maskprior::cli::run(argc, argv);
}
