#!/usr/bin/python3
"""Runs bench/step_bench.py (plain PyTorch) and build/bin/step_bench (maskc) in turn on each size
and thread count, and prints steps/s of each and the ratio maskc time / Python time per step
(< 1: maskc is faster), by wall time and by CPU time (all threads). Runs alternate, so both see
the same machine load; each number is the median over --repeats runs of the median step of a run.
On a busy machine the CPU-time ratio at 1 thread is the steadier one.

  /usr/bin/python3 bench/compare_steps.py [--sizes gotu-quick,gotu-paper,arith-paper]
      [--threads 1,0] [--repeats 3] [--steps 5] [--bin build/bin/step_bench] [--json out.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(command):
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="gotu-quick,gotu-paper,arith-paper")
    parser.add_argument("--threads", default="1,0", help="0 = every core")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "build", "bin", "step_bench"))
    parser.add_argument("--json", help="also write every run here")
    args = parser.parse_args()
    rows, runs = [], []
    print(f"{'size':12} {'threads':>7} {'maskc steps/s':>14} {'python steps/s':>15} "
          f"{'ratio (wall)':>13} {'ratio (cpu)':>12}  blas kernels")
    for size in args.sizes.split(","):
        for threads in args.threads.split(","):
            common = ["--size", size, "--threads", threads, "--steps", str(args.steps)]
            cpp, py = [], []
            for _ in range(args.repeats):
                cpp.append(run([args.bin] + common))
                py.append(run([sys.executable, os.path.join(HERE, "step_bench.py")] + common))
            runs += cpp + py
            c = statistics.median(r["median_step_s"] for r in cpp)
            p = statistics.median(r["median_step_s"] for r in py)
            c_cpu = statistics.median(r["median_step_cpu_s"] for r in cpp)
            p_cpu = statistics.median(r["median_step_cpu_s"] for r in py)
            # OpenBLAS picks its kernels per CPU unless OPENBLAS_CORETYPE names them: the two
            # must run the same ones for the ratio to compare like with like.
            cores = sorted({r.get("blas_core", "") for r in cpp + py})
            if len(cores) > 1:
                print(f"warning: {size}: maskc and Python ran different BLAS kernels {cores}",
                      file=sys.stderr)
            rows.append({"size": size, "threads": cpp[0]["threads"], "maskc_step_s": c,
                         "python_step_s": p, "ratio": c / p, "maskc_step_cpu_s": c_cpu,
                         "python_step_cpu_s": p_cpu, "ratio_cpu": c_cpu / p_cpu,
                         "blas_core": "/".join(cores)})
            print(f"{size:12} {cpp[0]['threads']:>7} {1 / c:>14.3f} {1 / p:>15.3f} {c / p:>13.3f} "
                  f"{c_cpu / p_cpu:>12.3f}  {'/'.join(cores)}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": rows, "runs": runs, "load": os.getloadavg()}, f, indent=1)


if __name__ == "__main__":
    main()
