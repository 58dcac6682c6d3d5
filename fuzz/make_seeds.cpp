// make_seeds OUT_DIR SPEC...: seed tensor files for fuzz_safetensors and fuzz_npy. Each SPEC that
// compiles within 1 MiB becomes OUT_DIR/safetensors/STEM.safetensors and OUT_DIR/npy/STEM.npy
// (STEM: the spec's folder and name; the writers of io/, as maskc compile writes them); a few plain
// safetensors files of every dtype and a 0-d and an empty .npy array are added. Used by
// scripts/fuzz.sh; not a fuzz target.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/compile.h"
#include "core/error.h"
#include "io/mask_file.h"
#include "io/npy.h"
#include "io/safetensors.h"

namespace fs = std::filesystem;
using namespace maskprior;

namespace {

Tensor tensor(const std::string& dtype, std::vector<int64_t> shape, size_t bytes) {
  Tensor t{dtype, std::move(shape), std::vector<uint8_t>(bytes)};
  for (size_t i = 0; i < bytes; ++i) t.bytes[i] = static_cast<uint8_t>(i * 37 + 1);
  return t;
}

void write_plain_seeds(const fs::path& out) {
  SafetensorsData all;
  all.tensors["f32"] = tensor("F32", {2, 3}, 24);
  all.tensors["f64"] = tensor("F64", {1}, 8);
  all.tensors["i32"] = tensor("I32", {2, 1, 2}, 16);
  all.tensors["i64"] = tensor("I64", {0}, 0);
  all.tensors["u8"] = tensor("U8", {5}, 5);
  all.metadata["format"] = "pt";
  write_safetensors((out / "safetensors" / "dtypes.safetensors").string(), all);
  SafetensorsData empty;
  write_safetensors((out / "safetensors" / "empty.safetensors").string(), empty);
  const std::string four(16, '\x01');
  write_npy_f32((out / "npy" / "scalar.npy").string(), {}, std::string_view(four).substr(0, 4));
  write_npy_f32((out / "npy" / "empty.npy").string(), {0, 3}, "");
  write_npy_f32((out / "npy" / "2x2.npy").string(), {2, 2}, four);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: make_seeds OUT_DIR SPEC...\n");
    return 2;
  }
  const fs::path out = argv[1];
  fs::create_directories(out / "safetensors");
  fs::create_directories(out / "npy");
  write_plain_seeds(out);
  CompileOptions options;
  options.max_bytes = uint64_t{1} << 20;
  int written = 0;
  for (int i = 2; i < argc; ++i) {
    // parent_stem: specs/gotu/parity2.mask and tests/data/pass/parity2.mask differ.
    const fs::path spec = argv[i];
    const std::string stem = spec.parent_path().filename().string() + "_" + spec.stem().string();
    try {
      const CompiledMask mask = compile_file(argv[i], options);
      write_mask_file(mask, (out / "safetensors" / (stem + ".safetensors")).string());
      write_mask_file(mask, (out / "npy" / (stem + ".npy")).string(), TensorFormat::kNpy);
      ++written;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "make_seeds: skipped %s: %s\n", argv[i], e.what());
    }
  }
  std::printf("make_seeds: %d specs written as .safetensors and .npy under %s\n", written,
              out.string().c_str());
  return 0;
}
