#!/usr/bin/env python3
"""Writes the data files of docs/your-data.md: reversing a few digits.

Each line is one example, one symbol per token of reverse.mask (`a[5], eq, c[5]`):

    3 1 4 1 5 = 5 1 4 1 3

train.txt and test.txt hold different digit strings, drawn with a fixed seed. With --table it
also writes the whole function as a truth table for `maskc validate --truth-table` (columns a[i],
outputs y0..y(k-1) = c[0]..c[k-1]).
"""
import argparse
import pathlib
import random


def line(number: int, digits: int) -> str:
    text = f"{number:0{digits}d}"
    return " ".join(text) + " = " + " ".join(reversed(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=int, default=20, help="training examples")
    parser.add_argument("--test", type=int, default=1000, help="test examples")
    parser.add_argument("--digits", type=int, default=5, help="digits per example (the spec's k)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=".", help="folder for train.txt and test.txt")
    parser.add_argument("--table", help="also write every example as a CSV truth table here")
    args = parser.parse_args()
    numbers = random.Random(args.seed).sample(range(10 ** args.digits), args.train + args.test)
    out = pathlib.Path(args.out)
    for name, part in (("train.txt", numbers[:args.train]), ("test.txt", numbers[args.train:])):
        (out / name).write_text("".join(line(n, args.digits) + "\n" for n in part))
    if args.table:
        k = args.digits
        header = [f"a[{i}]" for i in range(k)] + [f"y{j}" for j in range(k)]
        rows = []
        for n in range(10 ** k):
            digits = f"{n:0{k}d}"
            rows.append(",".join(list(digits) + list(reversed(digits))))
        pathlib.Path(args.table).write_text(",".join(header) + "\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
