// `maskc export SPEC --to numpy|flex-blocks -o OUT`: a compiled mask in the form another
// framework takes (docs/python.md, "Exports"; the same arrays as Python's maskprior.export).
//   numpy        .npy float32 [L, H, N, N]: the additive bias log σ(M), −inf on hard cells, for
//                JAX (jax.nn.dot_product_attention's bias), SDPA's or Hugging Face's float masks
//   flex-blocks  safetensors: FlexAttention's block sparsity of the hard cells (int32 `kind`
//                [Q, K]: 0 empty, 1 partial, 2 full; kv_num_blocks [1, 1, Q], kv_indices
//                [1, 1, Q, K] of the partial blocks, full_kv_num_blocks, full_kv_indices of the
//                full ones), as BlockMask.from_kv_blocks takes them
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli/commands.h"
#include "cli/spec_flags.h"
#include "compiler/compile.h"
#include "core/error.h"
#include "core/text.h"
#include "io/npy.h"
#include "io/safetensors.h"

namespace maskprior::cli {
namespace {

struct ExportArgs {
  std::string spec;
  std::string output;
  std::string to;
  int64_t block_size = 128;
  SpecFlags flags;
};

/// log σ(x), computed without overflow for either sign.
float log_sigmoid(float x) {
  const double v = x;
  return static_cast<float>(v >= 0 ? -std::log1p(std::exp(-v)) : v - std::log1p(std::exp(v)));
}

bool is_hard(const CompiledMask& m, int64_t q, int64_t k) {
  return m.hard && (*m.hard)[static_cast<size_t>(q * m.n + k)] != 0;
}

/// Writes the bias, computed in place of M: export holds no more than the compiled mask, which
/// --max-bytes bounds.
void write_bias(CompiledMask& m, const std::string& path) {
  std::vector<float>& bias = m.mask;
  const int64_t cells = m.n * m.n;
  for (size_t i = 0; i < bias.size(); ++i) {
    const auto cell = static_cast<int64_t>(i) % cells;
    bias[i] = is_hard(m, cell / m.n, cell % m.n) ? -std::numeric_limits<float>::infinity()
                                                 : log_sigmoid(bias[i]);
  }
  write_npy_f32(path, {m.layers, m.heads, m.n, m.n},
                {reinterpret_cast<const char*>(bias.data()), bias.size() * sizeof(float)});
}

Tensor int32_tensor(const std::vector<int32_t>& values, std::vector<int64_t> shape) {
  Tensor t{"I32", std::move(shape), {}};
  t.bytes.resize(values.size() * sizeof(int32_t));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

/// The kind of every block (0 empty, 1 partial, 2 full) of `size` × `size` cells, [Q, Q].
std::vector<int32_t> block_kinds(const CompiledMask& m, int64_t size, int64_t blocks) {
  std::vector<int64_t> allowed(static_cast<size_t>(blocks * blocks), 0);
  for (int64_t q = 0; q < m.n; ++q) {
    for (int64_t k = 0; k < m.n; ++k) {
      if (!is_hard(m, q, k)) ++allowed[static_cast<size_t>(q / size * blocks + k / size)];
    }
  }
  std::vector<int32_t> kind(allowed.size());
  for (int64_t i = 0; i < blocks; ++i) {
    for (int64_t j = 0; j < blocks; ++j) {
      const int64_t cells = std::min(size, m.n - i * size) * std::min(size, m.n - j * size);
      const int64_t open = allowed[static_cast<size_t>(i * blocks + j)];
      kind[static_cast<size_t>(i * blocks + j)] = open == 0 ? 0 : open == cells ? 2 : 1;
    }
  }
  return kind;
}

/// Bytes per block that write_blocks holds: the allowed count (int64), the kinds and two index
/// lists (int32), each also copied into its tensor.
constexpr uint64_t kBytesPerBlock = 8 + 2 * (4 + 4 + 4);

void write_blocks(const CompiledMask& m, int64_t size, const std::string& path,
                  uint64_t max_bytes) {
  const int64_t blocks = (m.n + size - 1) / size;
  const uint64_t bytes =
      static_cast<uint64_t>(blocks) * static_cast<uint64_t>(blocks) * kBytesPerBlock;
  if (bytes > max_bytes) {
    throw InputError(fmt::format(
        "--block-size {}: {} x {} blocks of N = {} tokens take {}, above --max-bytes ({}); give "
        "a larger --block-size",
        size, blocks, blocks, m.n, human_bytes(bytes), human_bytes(max_bytes)));
  }
  const std::vector<int32_t> kind = block_kinds(m, size, blocks);
  SafetensorsData data;
  data.tensors["kind"] = int32_tensor(kind, {blocks, blocks});
  for (const auto& [prefix, which] : {std::pair{"", 1}, {"full_", 2}}) {
    std::vector<int32_t> count(static_cast<size_t>(blocks), 0);
    std::vector<int32_t> indices(static_cast<size_t>(blocks * blocks), 0);
    for (int64_t i = 0; i < blocks; ++i) {
      for (int64_t j = 0; j < blocks; ++j) {
        if (kind[static_cast<size_t>(i * blocks + j)] != which) continue;
        indices[static_cast<size_t>(i * blocks + count[static_cast<size_t>(i)]++)] =
            static_cast<int32_t>(j);
      }
    }
    data.tensors[std::string(prefix) + "kv_num_blocks"] = int32_tensor(count, {1, 1, blocks});
    data.tensors[std::string(prefix) + "kv_indices"] =
        int32_tensor(indices, {1, 1, blocks, blocks});
  }
  data.metadata["format"] = "maskprior-flex-blocks/1";
  data.metadata["block_size"] = std::to_string(size);
  data.metadata["n"] = std::to_string(m.n);
  write_safetensors(path, data);
}

void run_export(const ExportArgs& args) {
  check_output_is_not_input(args.spec, args.output, "-o");
  const CompileOptions options = compile_options(args.flags);
  CompiledMask mask = compile_file(args.spec, options);
  print_warnings(mask, std::cerr);
  std::vector<int32_t>().swap(mask.provenance);  // not exported: its memory goes back now
  if (args.to == "numpy") {
    write_bias(mask, args.output);
    std::cout << fmt::format("{}: bias [{}, {}, {}, {}] -> {}\n", mask.name, mask.layers,
                             mask.heads, mask.n, mask.n, args.output);
  } else {
    std::vector<float>().swap(mask.mask);  // the blocks read only the hard cells
    write_blocks(mask, args.block_size, args.output, options.max_bytes);
    const int64_t blocks = (mask.n + args.block_size - 1) / args.block_size;
    std::cout << fmt::format("{}: {} x {} blocks of {} -> {}\n", mask.name, blocks, blocks,
                             args.block_size, args.output);
  }
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ExportArgs>();
  auto* cmd = app.add_subcommand(
      "export", "Export a spec's mask for JAX/NumPy (the bias) or FlexAttention (block data)");
  cmd->add_option("SPEC", args->spec, "The .mask spec")->required()->type_name("FILE");
  cmd->add_option("--to", args->to,
                  "numpy: .npy float32 [L, H, N, N], log sigmoid(M) with -inf on hard cells; "
                  "flex-blocks: safetensors of FlexAttention's block sparsity of the hard cells")
      ->required()
      ->check(CLI::IsMember({"numpy", "flex-blocks"}));
  cmd->add_option("-o,--output", args->output, "Output file, written atomically")
      ->required()
      ->type_name("OUT");
  cmd->add_option("--block-size", args->block_size, "flex-blocks: block size (default 128)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  add_define_flag(*cmd, args->flags);
  add_digits_flag(*cmd, args->flags);
  add_scale_and_size_flags(*cmd, args->flags);
  cmd->footer(
      "The same arrays as Python's maskprior.export (docs/python.md).\n"
      "Exit status: 0 ok, 1 error in the spec or an input, 2 usage error.\n\n"
      "Examples:\n"
      "  maskc export specs/arith/addition.mask --to numpy -o addition_bias.npy\n"
      "  maskc export specs/gotu/parity2.mask -D n=300 --to flex-blocks -o blocks.safetensors");
  cmd->callback([args, &exit_code] {
    run_export(*args);
    exit_code = kExitOk;
  });
}

}  // namespace maskprior::cli
