#!/usr/bin/env python3
"""Writes the truth table of docs/your-data.md: f(x) = x2 * x5 on 10 bits x in {-1, +1}^10.

The `seen` column marks the training rows: those with x2 = 1 or x5 = 1 (three quarters of the
cube). The unseen quarter, x2 = x5 = -1, is where f = +1 but the minimum-degree interpolator of
the seen rows, x2 + x5 - 1, says -3: a model that generalises like it gets 75% of the rows right.
Columns are named after the tokens of pair.mask (`cls, x[10]`): x0 ... x9, then y and seen.
"""
import argparse
import itertools
import pathlib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bits", type=int, default=10)
    parser.add_argument("--out", default="pair.csv")
    args = parser.parse_args()
    lines = [",".join([f"x{i}" for i in range(args.bits)] + ["y", "seen"])]
    for x in itertools.product((1, -1), repeat=args.bits):
        seen = x[2] == 1 or x[5] == 1
        lines.append(",".join([str(v) for v in x] + [str(x[2] * x[5]), str(int(seen))]))
    pathlib.Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
