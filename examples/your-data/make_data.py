#!/usr/bin/env python3
"""Writes the data files of docs/your-data.md: reversing a few digits, or their running sum.

Each line is one example, one symbol per token of reverse.mask (`a[5], eq, c[5]`):

    3 1 4 1 5 = 5 1 4 1 3

or, with --task running-sum, of running_sum.mask (`a[6], eq, c[6]`; c[j] = (a[0] + ... + a[j])
mod 10, docs/validate.md):

    3 1 4 1 5 9 = 3 4 8 9 4 3

train.txt and test.txt hold different digit strings, drawn with a fixed seed. With --table it
also writes the whole function as a truth table for `maskc validate --truth-table` (columns a[i],
outputs y0..y(k-1) = c[0]..c[k-1]).
"""
import argparse
import pathlib
import random


def reverse(digits: str) -> str:
    return "".join(reversed(digits))


def running_sum(digits: str) -> str:
    sums, total = [], 0
    for d in digits:
        total = (total + int(d)) % 10
        sums.append(str(total))
    return "".join(sums)


TASKS = {"reverse": reverse, "running-sum": running_sum}


def line(number: int, digits: int, answer) -> str:
    text = f"{number:0{digits}d}"
    return " ".join(text) + " = " + " ".join(answer(text))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--train", type=int, default=20, help="training examples")
    parser.add_argument("--test", type=int, default=1000, help="test examples")
    parser.add_argument("--task", choices=sorted(TASKS), default="reverse")
    parser.add_argument("--digits", type=int, help="digits per example (the spec's k; default 5 "
                        "for reverse, 6 for running-sum)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=".", help="folder for train.txt and test.txt")
    parser.add_argument("--table", help="also write every example as a CSV truth table here")
    args = parser.parse_args()
    answer = TASKS[args.task]
    if args.digits is None:
        args.digits = 6 if args.task == "running-sum" else 5
    numbers = random.Random(args.seed).sample(range(10 ** args.digits), args.train + args.test)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, part in (("train.txt", numbers[:args.train]), ("test.txt", numbers[args.train:])):
        (out / name).write_text("".join(line(n, args.digits, answer) + "\n" for n in part))
    if args.table:
        k = args.digits
        header = [f"a[{i}]" for i in range(k)] + [f"y{j}" for j in range(k)]
        rows = []
        for n in range(10 ** k):
            digits = f"{n:0{k}d}"
            rows.append(",".join(list(digits) + list(answer(digits))))
        pathlib.Path(args.table).write_text(",".join(header) + "\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
