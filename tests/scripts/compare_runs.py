"""Compares two run folders of `maskc train`: every number in summary.json (but wall times) and
every tensor of weights.safetensors, within a relative tolerance. Exit 0 if they match, 1 if not.

  compare_runs.py RUN_A RUN_B [--rtol 1e-5]
"""
import argparse
import array
import json
import struct
import sys

# safetensors dtypes as array typecodes (no numpy needed)
TYPECODES = {"F32": "f", "F64": "d", "I64": "q", "I32": "i", "U8": "B", "BOOL": "B"}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    body = data[8 + length:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        values = array.array(TYPECODES[info["dtype"]])
        values.frombytes(body[begin:end])
        if sys.byteorder != "little":
            values.byteswap()
        tensors[name] = [float(v) for v in values]
    return tensors


def numbers(value, prefix=""):
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return {}
    if isinstance(value, (int, float)):
        return {prefix: float(value)}
    items = value.items() if isinstance(value, dict) else enumerate(value)
    found = {}
    for key, item in items:
        found.update(numbers(item, f"{prefix}/{key}"))
    return found


def close(a, b, rtol, scale):
    return abs(a - b) <= rtol * max(abs(b), scale)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--rtol", type=float, default=1e-5)
    args = parser.parse_args()
    bad = []
    with open(f"{args.a}/summary.json") as f:
        summary_a = numbers(json.load(f))
    with open(f"{args.b}/summary.json") as f:
        summary_b = numbers(json.load(f))
    for key in sorted(set(summary_a) | set(summary_b)):
        if "wall" in key or "seconds" in key:
            continue
        if key not in summary_a or key not in summary_b:
            bad.append(f"summary {key}: only in one run")
        elif not close(summary_a[key], summary_b[key], args.rtol, 1e-12):
            bad.append(f"summary {key}: {summary_a[key]!r} vs {summary_b[key]!r}")
    weights_a = read_safetensors(f"{args.a}/weights.safetensors")
    weights_b = read_safetensors(f"{args.b}/weights.safetensors")
    if set(weights_a) != set(weights_b):
        bad.append(f"weights: different tensors {sorted(set(weights_a) ^ set(weights_b))}")
    worst = 0.0
    for name in sorted(set(weights_a) & set(weights_b)):
        a, b = weights_a[name], weights_b[name]
        if len(a) != len(b):
            bad.append(f"weights {name}: {len(a)} vs {len(b)} values")
            continue
        scale = max(max((abs(v) for v in b), default=0.0), 1e-12)
        err = max((abs(x - y) for x, y in zip(a, b)), default=0.0) / scale
        worst = max(worst, err)
        if err > args.rtol:
            bad.append(f"weights {name}: max |a-b| / max |b| = {err:.3g}")
    print(f"compared {len(summary_a)} summary numbers and {len(weights_a)} tensors; "
          f"worst weight difference {worst:.3g} (relative to the tensor's largest value)")
    for line in bad:
        print("MISMATCH", line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
