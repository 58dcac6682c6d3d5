#!/usr/bin/python3
"""The reference for bench/step_bench.cpp: maskprior's model (runtime/model.{h,cpp}) written in
plain PyTorch, as a user would write it, timed per training step on the same shapes.

Same layers and sizes (pre-LN blocks, Wq/Wk/Wv without bias, GELU MLP, token + position
embedding, LayerNorm + Linear head), the same prior log σ(M) (+ −∞ causal bias for the causal
decoder) added to the scaled scores, the same losses (MSE on the CLS readout; cross-entropy on the
K answer rows) and optimizer (Adam / AdamW with weight decay). Prints one JSON line.

  /usr/bin/python3 bench/step_bench.py --size arith-paper --threads 1 --steps 10
"""
import argparse
import json
import math
import statistics
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
                        causal=True, optimizer="adamw", batch=256, answer_offset=8, answer_digits=4),
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


def openblas():
    """The OpenBLAS library this process has loaded (through torch), or None."""
    import ctypes
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libopenblas" in line}
    return ctypes.CDLL(sorted(paths)[0]) if paths else None


def set_compute_threads(threads):
    """torch.set_num_threads does not reach OpenBLAS, which Debian's torch calls for GEMMs and
    which keeps a thread per core: set both, as maskc does (runtime/threads.cpp)."""
    torch.set_num_threads(threads)
    blas = openblas()
    if blas is not None:
        blas.openblas_set_num_threads(threads)


def blas_threads():
    blas = openblas()
    return blas.openblas_get_num_threads() if blas is not None else 0


def blas_core():
    """OpenBLAS's kernel set ("Haswell", "SkylakeX", ...): OPENBLAS_CORETYPE chooses it."""
    import ctypes
    blas = openblas()
    if blas is None:
        return ""
    blas.openblas_get_corename.restype = ctypes.c_char_p
    return blas.openblas_get_corename().decode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), required=True)
    parser.add_argument("--threads", type=int, default=1, help="0 = every core")
    parser.add_argument("--steps", type=int, default=10, help="timed steps")
    parser.add_argument("--warmup", type=int, default=2)
    args = parser.parse_args()
    import os
    set_compute_threads(args.threads if args.threads > 0 else os.cpu_count())
    torch.manual_seed(0)
    c = SIZES[args.size]
    model = MaskedTransformer(c)
    opt_class = torch.optim.AdamW if c["optimizer"] == "adamw" else torch.optim.Adam
    optimizer = opt_class(model.parameters(), lr=LR, weight_decay=WEIGHT_DECAY)
    ids = torch.randint(0, c["vocab"], (TRAIN_ROWS, c["n"]))
    targets = torch.randn(TRAIN_ROWS)

    def step():
        rows = torch.randint(0, TRAIN_ROWS, (c["batch"],))
        inputs = ids.index_select(0, rows)
        out = model(inputs)
        if c["causal"]:
            o, k = c["answer_offset"], c["answer_digits"]
            logits = out[:, o - 1:o - 1 + k]
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                   inputs[:, o:o + k].reshape(-1))
        else:
            loss = F.mse_loss(out, targets.index_select(0, rows))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss.detach()

    for i in range(args.warmup):
        step()
    times, cpu = [], []
    for i in range(args.steps):
        start, start_cpu = time.perf_counter(), time.process_time()
        step()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    median = statistics.median(times)
    print(json.dumps({"impl": "python", "size": args.size, "threads": torch.get_num_threads(),
                      "blas_threads": blas_threads(), "blas_core": blas_core(),
                      "torch": torch.__version__, "steps": args.steps,
                      "median_step_s": median, "median_step_cpu_s": statistics.median(cpu),
                      "steps_per_s": 1.0 / median}))


if __name__ == "__main__":
    main()
