#!/opt/maskprior/venv/bin/python
"""The reference for bench/step_bench.cpp: maskprior's model (runtime/model.{h,cpp}) written in
plain PyTorch, as a user would write it, timed per training step on the same shapes.

Same layers and sizes (pre-LN blocks, Wq/Wk/Wv without bias, GELU MLP, token + position
embedding, LayerNorm + Linear head), the same prior log σ(M) (+ −∞ causal bias for the causal
decoder) added to the scaled scores, the same losses (MSE on the CLS readout; cross-entropy on the
K answer rows) and optimizer (Adam / AdamW with weight decay). Prints one JSON line.

--compile runs the forward pass and the loss through torch.compile (Inductor; the backward pass
is compiled with it, the optimizer step stays eager); the steps are timed after the warm-up, and
the first step, which compiles, is reported apart as `compile_s`. --precision bf16 runs the
forward pass and the loss under torch.autocast("cpu", dtype=torch.bfloat16), parameters,
gradients and the optimizer in float32, as maskc's `step_bench --precision bf16` does.

  /opt/maskprior/venv/bin/python bench/step_bench.py --size arith-paper --threads 1 --steps 10 \
      [--precision fp32|bf16] [--compile [--compile-mode default] [--cold-compile]]
"""
import argparse
import ctypes
import json
import math
import os
import re
import statistics
import tempfile
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# The benchmark sizes, the same table as bench/step_bench.cpp (train/presets.cpp).
SIZES = {
    # boolean quick: d64 x 2 layers x 2 heads of 16, N = 16, Adam, MSE on the CLS readout
    "gotu-quick": dict(vocab=3, n=16, dim=64, depth=2, heads=2, head_dim=16, mlp=64,
                       causal=False, optimizer="adam", batch=256),
    # boolean paper: d256 x 12 layers x 6 heads of 64
    "gotu-paper": dict(vocab=3, n=16, dim=256, depth=12, heads=6, head_dim=64, mlp=256,
                       causal=False, optimizer="adam", batch=256),
    # arithmetic paper (addition layout a[3] + b[3] = c[4]: N = 12, K = 4), AdamW, causal
    "arith-paper": dict(vocab=13, n=12, dim=256, depth=6, heads=4, head_dim=64, mlp=256,
                        causal=True, optimizer="adamw", batch=256, answer_offset=8,
                        answer_digits=4),
}
LR, WEIGHT_DECAY = 1e-3, 1e-3
TRAIN_ROWS = 4096  # the batches are index_select'ed from a training set of this many rows


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        inner = c["heads"] * c["head_dim"]
        self.heads, self.head_dim = c["heads"], c["head_dim"]
        self.ln_attention = nn.LayerNorm(c["dim"])
        self.wq = nn.Linear(c["dim"], inner, bias=False)
        self.wk = nn.Linear(c["dim"], inner, bias=False)
        self.wv = nn.Linear(c["dim"], inner, bias=False)
        self.wo = nn.Linear(inner, c["dim"])
        self.ln_mlp = nn.LayerNorm(c["dim"])
        self.fc_in = nn.Linear(c["dim"], c["mlp"])
        self.fc_out = nn.Linear(c["mlp"], c["dim"])

    def forward(self, x, bias):
        b, n, _ = x.shape
        h = self.ln_attention(x)
        q, k, v = (w(h).view(b, n, self.heads, self.head_dim).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim) + bias
        mixed = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, n, -1)
        x = x + self.wo(mixed)
        return x + self.fc_out(F.gelu(self.fc_in(self.ln_mlp(x))))


class MaskedTransformer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.causal = c["causal"]
        n = c["n"]
        self.token_embedding = nn.Embedding(c["vocab"], c["dim"])
        self.position_embedding = nn.Parameter(torch.randn(n, c["dim"]))
        self.blocks = nn.ModuleList(Block(c) for _ in range(c["depth"]))
        self.ln_final = nn.LayerNorm(c["dim"])
        self.head = nn.Linear(c["dim"], c["vocab"] if self.causal else 1)
        self.mask = nn.Parameter(torch.randn(1, 1, n, n))  # the learnable prior M
        self.register_buffer("excluded", torch.ones(n, n, dtype=torch.bool).triu(1)
                             if self.causal else torch.zeros(n, n, dtype=torch.bool))

    def forward(self, ids):
        x = self.token_embedding(ids) + self.position_embedding
        bias = F.logsigmoid(self.mask).masked_fill(self.excluded, -math.inf)
        for block in self.blocks:
            x = block(x, bias[0])
        if self.causal:
            return self.head(self.ln_final(x))
        return self.head(self.ln_final(x[:, 0])).squeeze(-1)


# MKL's code branches (mkl_cbwr.h): the kernel set MKL picked for this CPU (MKL_ENABLE_INSTRUCTIONS
# or MKL_CBWR narrow it), the counterpart of OpenBLAS's core name.
MKL_BRANCHES = {4: "SSE2", 6: "SSSE3", 7: "SSE4_1", 8: "SSE4_2", 9: "AVX", 10: "AVX2",
                11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1", 14: "AVX512_E1"}


def loaded_library(symbol, hint):
    """The library this process has loaded (through torch) whose path contains `hint` and which
    exports `symbol`, or None. Debian's torch calls the system OpenBLAS (libopenblas*.so); the
    PyPI wheel links MKL statically into libtorch_cpu.so and exports its service functions."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if hint in line.split()[-1]})
    for path in paths:
        lib = ctypes.CDLL(path)
        if hasattr(lib, symbol):
            return lib
    return None


def openblas():
    return loaded_library("openblas_get_num_threads", "openblas")


def mkl():
    if not torch.backends.mkl.is_available():
        return None
    return (loaded_library("mkl_get_max_threads", "libmkl")
            or loaded_library("mkl_get_max_threads", "libtorch_cpu"))


def set_compute_threads(threads):
    """torch.set_num_threads sets ATen's OpenMP pool, MKL and oneDNN. It does not reach OpenBLAS,
    which Debian's torch calls for GEMMs and which keeps a thread per core: set that too where it
    is loaded, as maskc does (runtime/host.cpp)."""
    torch.set_num_threads(threads)
    blas = openblas()
    if blas is not None:
        blas.openblas_set_num_threads(threads)


def blas_info():
    """What runs the float32 matrix products here: `blas` (library and version), `blas_threads`
    (its own thread count) and `blas_core` (its kernel set: OpenBLAS's core name, "Haswell",
    "SkylakeX", ...; MKL's code branch, "AVX2", "AVX512_E1", ...), plus oneDNN (bfloat16 matrix
    products and some element-wise operations) and ATen's own vectorised kernels."""
    config = torch.__config__.show()
    onednn = re.search(r"MKL-DNN (v[\d.]+)", config)
    info = {"blas": "", "blas_threads": 0, "blas_core": "",
            "onednn": f"oneDNN {onednn.group(1)}" if onednn and torch.backends.mkldnn.is_available()
            else "", "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    blas = openblas()
    if blas is not None:
        blas.openblas_get_corename.restype = ctypes.c_char_p
        blas.openblas_get_config.restype = ctypes.c_char_p
        version = re.search(r"OpenBLAS ([\d.]+)", blas.openblas_get_config().decode())
        info.update(blas="OpenBLAS " + (version.group(1) if version else ""),
                    blas_threads=blas.openblas_get_num_threads(),
                    blas_core=blas.openblas_get_corename().decode())
        return info
    blas = mkl()
    if blas is not None:
        version = re.search(r"Math Kernel Library Version ([\d.]+)", config)
        info.update(blas="MKL " + (version.group(1) if version else ""),
                    blas_threads=blas.mkl_get_max_threads())
        # mkl_cbwr_get_auto_branch is not exported by the wheel; its service twin is.
        if hasattr(blas, "mkl_serv_cbwr_get_auto_branch"):
            branch = blas.mkl_serv_cbwr_get_auto_branch()
            info["blas_core"] = MKL_BRANCHES.get(branch, str(branch))
        return info
    blas_name = re.search(r"BLAS_INFO=(\w+)", config)  # another BLAS: name it at least
    info["blas"] = blas_name.group(1) if blas_name else ""
    return info


def make_step(c, model, optimizer, precision, compile_mode):
    """One training step: a batch index-selected from the training set, forward pass and loss
    (under bfloat16 autocast for `precision` bf16; through torch.compile unless `compile_mode`
    is None), backward pass, optimizer step."""
    ids = torch.randint(0, c["vocab"], (TRAIN_ROWS, c["n"]))
    targets = torch.randn(TRAIN_ROWS)

    def forward_loss(rows):
        inputs = ids.index_select(0, rows)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=precision == "bf16"):
            out = model(inputs)
            if c["causal"]:
                o, k = c["answer_offset"], c["answer_digits"]
                logits = out[:, o - 1:o - 1 + k]
                return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                       inputs[:, o:o + k].reshape(-1))
            return F.mse_loss(out, targets.index_select(0, rows))

    if compile_mode is not None:
        forward_loss = torch.compile(forward_loss, mode=compile_mode)

    def step():
        loss = forward_loss(torch.randint(0, TRAIN_ROWS, (c["batch"],)))
        optimizer.zero_grad()  # set_to_none, as maskc's clear_gradients
        loss.backward()
        optimizer.step()
        return loss.detach()

    return step


def compiled_graphs():
    """Graphs torch.compile has built in this process so far (0 without it)."""
    from torch._dynamo.utils import counters
    return counters["stats"]["unique_graphs"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), required=True)
    parser.add_argument("--threads", type=int, default=1,
                        help="torch.set_num_threads (and OpenBLAS's where loaded); 0 = every core")
    parser.add_argument("--steps", type=int, default=10, help="timed steps")
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed steps; with --compile at least 1, the compiling step")
    parser.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    parser.add_argument("--compile", action="store_true",
                        help="torch.compile the forward pass and the loss (Inductor)")
    parser.add_argument("--compile-mode", default="default",
                        help="torch.compile's mode: default, reduce-overhead, max-autotune, ...")
    parser.add_argument("--cold-compile", action="store_true",
                        help="compile into an empty Inductor cache, so compile_s is a compile from "
                             "scratch (otherwise earlier runs' cached kernels are reused)")
    return parser.parse_args()


def main():
    args = parse_args()
    cache = None
    if args.compile and args.cold_compile:
        cache = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
    if cache is not None:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache.name
    set_compute_threads(args.threads if args.threads > 0 else os.cpu_count())
    torch.manual_seed(0)
    c = SIZES[args.size]
    model = MaskedTransformer(c)
    opt_class = torch.optim.AdamW if c["optimizer"] == "adamw" else torch.optim.Adam
    optimizer = opt_class(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    step = make_step(c, model, optimizer, args.precision,
                     args.compile_mode if args.compile else None)
    extra = {}
    warmup = args.warmup
    if args.compile:  # the first step compiles the forward and the backward graphs
        start = time.perf_counter()
        step()
        extra["compile_s"] = time.perf_counter() - start
        warmup = max(warmup - 1, 0)
    for i in range(warmup):
        step()
    graphs = compiled_graphs() if args.compile else 0
    times, cpu = [], []
    for i in range(args.steps):
        start, start_cpu = time.perf_counter(), time.process_time()
        step()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    if args.compile:
        extra.update(compile_mode=args.compile_mode, compiled_graphs=compiled_graphs(),
                     recompiled_in_timed_steps=compiled_graphs() != graphs)
    median = statistics.median(times)
    print(json.dumps({"impl": "pytorch-compile" if args.compile else "pytorch-eager",
                      "size": args.size, "precision": args.precision, "compile": args.compile,
                      "threads": torch.get_num_threads(), **blas_info(),
                      "torch": torch.__version__, "steps": args.steps,
                      "median_step_s": median, "median_step_cpu_s": statistics.median(cpu),
                      "steps_per_s": 1.0 / median, **extra}))
    if cache is not None:
        cache.cleanup()


if __name__ == "__main__":
    main()
