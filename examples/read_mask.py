#!/usr/bin/env python3
"""Read a mask file written by `maskc compile` using only the Python standard library.

Prints the tensors' shapes, the metadata (name, layout, scale, params) and a text grid of one
(layer, head): rows are queries, columns are keys; `#` open value, `.` close value, `+`/`-`/`0`
other positive/negative/zero values, `x` hard-excluded.

    python3 examples/read_mask.py parity2.safetensors --layer 0 --head 0
"""
import argparse
import json
import struct
import sys

DTYPE_FORMATS = {"F32": "f", "F64": "d", "I32": "i", "I64": "q", "U8": "B"}  # little-endian


def read_header(f):
    """Returns (header dict, byte offset where the data section starts)."""
    raw = f.read(8)
    if len(raw) != 8:
        raise ValueError("file too short for a safetensors header")
    (header_size,) = struct.unpack("<Q", raw)
    header = json.loads(f.read(header_size))
    return header, 8 + header_size


def read_slice(f, data_start, entry, first, count):
    """Reads `count` elements of a tensor starting at element `first` (row-major)."""
    code = DTYPE_FORMATS[entry["dtype"]]
    size = struct.calcsize(code)
    begin = entry["data_offsets"][0]
    f.seek(data_start + begin + first * size)
    raw = f.read(count * size)
    if len(raw) != count * size:
        raise ValueError("file is truncated")
    return struct.unpack("<%d%s" % (count, code), raw)


def token_labels(layout):
    labels = []
    for span in layout:
        if span["length"] == 1:
            labels.append(span["name"])
        else:
            labels.extend("%s[%d]" % (span["name"], i) for i in range(span["length"]))
    return labels


def symbol(value, hard, open_value, close_value):
    if hard:
        return "x"
    if value == open_value:
        return "#"
    if value == close_value:
        return "."
    return "+" if value > 0 else "-" if value < 0 else "0"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", help="a .safetensors file written by `maskc compile`")
    parser.add_argument("--layer", type=int, default=0)
    parser.add_argument("--head", type=int, default=0)
    parser.add_argument("--max-tokens", type=int, default=64, help="largest N drawn as a grid")
    args = parser.parse_args()

    with open(args.file, "rb") as f:
        header, data_start = read_header(f)
        meta = header.get("__metadata__", {})
        if meta.get("format") != "mask/1":
            sys.exit("%s: not a maskc mask file (format %r)" % (args.file, meta.get("format")))
        layers, heads, n, _ = header["mask"]["shape"]
        for name in ("mask", "provenance", "hard"):
            if name in header:
                print("%-10s %-3s %s" % (name, header[name]["dtype"], header[name]["shape"]))
        layout = json.loads(meta["layout"])
        params = json.loads(meta["params"])
        # Compare in float32, as the file stores them (0.1 is not exactly representable).
        open_value, close_value = (struct.unpack("<f", struct.pack("<f", float(meta[key])))[0]
                                   for key in ("open", "close"))
        print("name:   %s" % meta["name"])
        print("sha256: %s" % meta["source_sha256"])
        print("scale:  open %s, close %s" % (meta["open"], meta["close"]))
        print("params: %s" % json.dumps(params))
        print("layout:")
        for span in layout:
            extras = "".join(
                " %s=%s" % (key, span[key]) for key in ("grid", "digits") if key in span)
            print("  %-8s offset %d, length %d%s" % (span["name"], span["offset"], span["length"],
                                                     extras))

        if not (0 <= args.layer < layers and 0 <= args.head < heads):
            sys.exit("layer %d, head %d out of range: the mask has %d layers, %d heads"
                     % (args.layer, args.head, layers, heads))
        if n > args.max_tokens:
            print("N = %d is too large to print as a grid (see --max-tokens)" % n)
            return
        first = (args.layer * heads + args.head) * n * n
        cells = read_slice(f, data_start, header["mask"], first, n * n)
        hard = read_slice(f, data_start, header["hard"], 0, n * n) if "hard" in header else None

    labels = token_labels(layout)
    width = max(len(label) for label in labels)
    print("\nlayer %d, head %d (rows = query, columns = key)" % (args.layer, args.head))
    for line in range(max(len(label) for label in labels)):
        print((" " * (width + 1) + "".join(
            " " + (label[line] if line < len(label) else " ") for label in labels)).rstrip())
    for q in range(n):
        row = "".join(" " + symbol(cells[q * n + k], hard and hard[q * n + k], open_value,
                                   close_value) for k in range(n))
        print("%*s %s" % (width, labels[q], row))


if __name__ == "__main__":
    main()
