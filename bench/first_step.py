#!/usr/bin/python3
"""Time from start to the first training step of `maskc train`: runs it with --stop-after 1
and reads its stderr; the first progress note ("TASK INIT on DEVICE: ...") is printed once the
model is built and step 0 is evaluated, just before the first step. Prints wall and CPU seconds
(the process's user + system time, read from /proc at that moment) to that note and to the end.

  /usr/bin/python3 bench/first_step.py -- --task addition --preset paper \\
      --spec specs/arith/addition.mask --init mask --threads 1
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks  # utime, stime


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maskc", default=os.path.join(HERE, "..", "build", "bin", "maskc"))
    parser.add_argument("train_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    extra = [a for a in args.train_args if a != "--"]
    start = time.perf_counter()
    proc = subprocess.Popen([args.maskc, "train", *extra, "--stop-after", "1"],
                            stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    first = None
    for line in proc.stderr:
        if first is None and " on " in line and "parameters" in line:
            first = {"wall_s": time.perf_counter() - start, "cpu_s": cpu_seconds(proc.pid)}
    proc.stdout.read()
    proc.wait()
    end = {"wall_s": time.perf_counter() - start}
    print(json.dumps({"to_first_step": first, "to_end": end, "rc": proc.returncode}))


if __name__ == "__main__":
    main()
