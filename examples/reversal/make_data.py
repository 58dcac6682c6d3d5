"""Writes the reversal data of docs/RESULTS.md, "Beyond the trained size": train.txt, 2,000
lines `x[n] | y[n]` (y = x reversed, digits) of n = 1..8 digits, 250 of each; test.txt, 100 lines
each of 8 (trained), 16, 32, 64 and 128 digits. Seeded, so it writes the same files every time:
  /opt/maskprior/venv/bin/python examples/reversal/make_data.py examples/reversal"""
import os
import random
import sys


def line(rng, n):
    x = [str(rng.randrange(10)) for _ in range(n)]
    return " ".join(x + ["|"] + x[::-1]) + "\n"


def main(folder):
    rng = random.Random(48)
    with open(os.path.join(folder, "train.txt"), "w") as f:
        for k in range(2000):
            f.write(line(rng, 1 + k % 8))
    with open(os.path.join(folder, "test.txt"), "w") as f:
        for n in (8, 16, 32, 64, 128):
            for _ in range(100):
                f.write(line(rng, n))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
