"""Writes the parity data of docs/RESULTS.md, "Beyond the trained size": train.txt, 2,000 lines
`x[n] | y[n]` of n = 1..8 bits, 250 of each, where y[i] is the parity of x[0..i] (the running
parity, so y[n - 1] is the parity of all n bits: a scratchpad written out, one bit per step);
test.txt, 100 lines each of 8 (trained), 16, 32, 64 and 128 bits. Seeded, so it writes the same
files every time:
  /opt/maskprior/venv/bin/python examples/parity/make_data.py examples/parity"""
import os
import random
import sys


def line(rng, n):
    x = [rng.randrange(2) for _ in range(n)]
    y, p = [], 0
    for bit in x:
        p ^= bit
        y.append(p)
    return " ".join([str(b) for b in x] + ["|"] + [str(b) for b in y]) + "\n"


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
