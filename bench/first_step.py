#!/opt/maskprior/venv/bin/python
"""Time from start to the first training step of `maskc train`: runs it with --stop-after 1 into
a temporary folder and prints wall and CPU seconds (the process's user + system time, read from
/proc at that moment) at two points: the header ("TASK INIT on DEVICE: ..."; process, LibTorch,
data and model ready) and init.json written (step 0 evaluated; the first step comes next); and
the wall time to the end.

  /opt/maskprior/venv/bin/python bench/first_step.py -- --task addition --preset paper \\
      --spec specs/arith/addition.mask --init mask --threads 1
"""
import argparse
import json
import os
import subprocess
import queue
import sys
import tempfile
import threading
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
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        start = time.perf_counter()
        proc = subprocess.Popen([args.maskc, "train", *extra, "--out", out, "--stop-after", "1"],
                                stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        marks = {}
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(l) for l in proc.stderr], daemon=True).start()
        while proc.poll() is None:
            now = {"wall_s": time.perf_counter() - start, "cpu_s": cpu_seconds(proc.pid)}
            while not lines.empty():
                line = lines.get()
                if "to_header" not in marks and " on " in line and "parameters" in line:
                    marks["to_header"] = now
            if "to_first_step" not in marks and os.path.exists(os.path.join(out, "init.json")):
                marks["to_first_step"] = now
            time.sleep(0.005)
        marks["to_end"] = {"wall_s": time.perf_counter() - start}
        print(json.dumps({**marks, "rc": proc.returncode}))

if __name__ == "__main__":
    main()
