#!/usr/bin/env python3
"""Compile specs/arith/addition.mask with the Python module and print its grid.

addition.mask has no `param`, so this overrides its scale instead (as `maskc compile --open 3
--close -3` would). Rows are queries, columns keys: `#` open, `.` closed, `x` hard-excluded
(causal), `+`/`-` other values.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/compile_addition.py
"""
import os
import sys

import maskprior

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def grid(compiled, layer=0, head=0):
    """The mask of one (layer, head) as text, one row per query, labelled."""
    mask = compiled.mask[layer, head]
    hard = compiled.hard
    opened, closed = compiled.metadata["open"], compiled.metadata["close"]
    labels = compiled.labels
    width = max(len(label) for label in labels)
    lines = []
    for q, label in enumerate(labels):
        cells = []
        for k in range(compiled.n):
            value = float(mask[q, k])
            if hard is not None and hard[q, k]:
                cells.append("x")
            elif value == opened:
                cells.append("#")
            elif value == closed:
                cells.append(".")
            else:
                cells.append("+" if value > 0 else "-")
        lines.append("%*s %s" % (width, label, " ".join(cells)))
    return "\n".join(lines)


def main():
    spec = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "specs/arith/addition.mask")
    compiled = maskprior.compile(spec, open=3.0, close=-3.0)
    meta = compiled.metadata
    print("%s: layers=%d heads=%d N=%d open=%g close=%g" % (
        meta["name"], meta["layers"], meta["heads"], meta["n"], meta["open"], meta["close"]))
    print("layout:", ", ".join("%s[%d]" % (s["name"], s["length"]) for s in compiled.layout))
    print(grid(compiled))


if __name__ == "__main__":
    main()
