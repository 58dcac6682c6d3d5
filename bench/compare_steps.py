#!/opt/maskprior/venv/bin/python
"""Runs build/bin/step_bench (maskc) and bench/step_bench.py (plain PyTorch), eager and through
torch.compile, in turn on each size, thread count and precision, and prints steps/s of each and
the ratio maskc time / PyTorch time per step, against the faster of eager and compiled (< 1:
maskc is faster), by wall time and by CPU time (all threads). Runs alternate, so all three see
the same machine load; each number is the median over --repeats runs of the median step of a run
(each compiled run compiles in its own process, so after the first run of a shape Inductor's
cache serves it). On a busy machine the CPU-time ratio at 1 thread is the steadier one.

  /opt/maskprior/venv/bin/python bench/compare_steps.py [--sizes gotu-quick,gotu-paper,arith-paper]
      [--threads 1,0] [--precisions fp32,bf16] [--repeats 3] [--steps 5] [--warmup 2]
      [--compile-mode default] [--bin build/bin/step_bench] [--json out.json]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
IMPLS = ("maskc", "eager", "compiled")


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:  # e.g. torch.compile without a working C++ compiler
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def libtorch_of_binary(path):
    """The libtorch_cpu.so the maskc binary loads (from ldd), or ""."""
    try:
        out = subprocess.run(["ldd", path], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""
    found = re.search(r"libtorch_cpu\.so\S* => (\S+)", out)
    return os.path.realpath(found.group(1)) if found else ""


def libtorch_of_python():
    """The libtorch_cpu.so of this interpreter's torch, found without importing it (a second
    process would then start with torch's threads already configured)."""
    code = ("import os, importlib.util; s = importlib.util.find_spec('torch'); "
            "print(os.path.realpath(os.path.join(os.path.dirname(s.origin), 'lib', "
            "'libtorch_cpu.so')))")
    return subprocess.run([sys.executable, "-c", code], capture_output=True,
                          text=True).stdout.strip()


def blas_name(run):
    """The BLAS a run used, comparable between maskc and PyTorch: maskc's step_bench prints MKL's
    version string ("Intel(R) oneAPI Math Kernel Library Version 2024.2-Product ..."), the
    reference "MKL 2024.2" and MKL's branch; OpenBLAS's kernel set is compared as it is."""
    core = run.get("blas_core", "")
    match = re.search(r"Math Kernel Library Version (\d+\.\d+)", core)
    if match:
        return "MKL " + match.group(1)
    if run.get("blas", "").startswith("MKL"):
        return " ".join(run["blas"].split()[:2])
    return f"{run.get('blas', '')} {core}".strip()


def check_kernels(size, results):
    """Warns where the runs did not multiply their matrices with the same kernels. OpenBLAS names
    its kernel set in each run (`blas_core`); maskc does not see MKL, which the PyPI wheel links
    into libtorch_cpu.so, so an empty maskc `blas_core` is left out (main() checks that maskc
    and PyTorch load the same libtorch_cpu.so instead)."""
    kernels = sorted({blas_name(r) for impl in IMPLS for r in results[impl]
                      if r.get("blas_core", "")})
    if len(kernels) > 1:
        print(f"warning: {size}: the runs used different BLAS kernels {kernels}", file=sys.stderr)
    return "/".join(kernels)


def measure(args, size, threads, precision):
    """--repeats rounds of maskc, PyTorch eager and PyTorch compiled, one after the other."""
    common = ["--size", size, "--threads", threads, "--steps", str(args.steps),
              "--warmup", str(args.warmup), "--precision", precision]
    python = [sys.executable, os.path.join(HERE, "step_bench.py")] + common
    commands = {"maskc": [args.bin] + common, "eager": python,
                "compiled": python + ["--compile", "--compile-mode", args.compile_mode]}
    results = {impl: [] for impl in IMPLS}
    for _ in range(args.repeats):
        for impl in IMPLS:
            results[impl].append(run(commands[impl]))
    return results


def summarise(size, precision, results):
    """The medians of each implementation and maskc's ratio to the faster of the two PyTorch
    runs, taken separately by wall time and by CPU time."""
    row = {"size": size, "threads": results["maskc"][0]["threads"], "precision": precision}
    for impl in IMPLS:
        row[f"{impl}_step_s"] = statistics.median(r["median_step_s"] for r in results[impl])
        row[f"{impl}_step_cpu_s"] = statistics.median(r["median_step_cpu_s"]
                                                      for r in results[impl])
    for suffix, key in (("step_s", "ratio"), ("step_cpu_s", "ratio_cpu")):
        best = min(("eager", "compiled"), key=lambda impl: row[f"{impl}_{suffix}"])
        row[key] = row[f"maskc_{suffix}"] / row[f"{best}_{suffix}"]
        row[f"{key}_against"] = best
    row["compile_s"] = statistics.median(r["compile_s"] for r in results["compiled"])
    row["compile_s_first"] = results["compiled"][0]["compile_s"]
    row["blas_core"] = check_kernels(size, results)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="gotu-quick,gotu-paper,arith-paper")
    parser.add_argument("--threads", default="1,0", help="0 = every core")
    parser.add_argument("--precisions", default="fp32,bf16", help="fp32, bf16 or both")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed steps of every run (compiled: the compiling step counts)")
    parser.add_argument("--compile-mode", default="default", help="torch.compile's mode")
    parser.add_argument("--bin", default=os.path.join(HERE, "..", "build", "bin", "step_bench"))
    parser.add_argument("--json", help="also write every run here")
    args = parser.parse_args()
    maskc_lib, python_lib = libtorch_of_binary(args.bin), libtorch_of_python()
    if maskc_lib != python_lib:
        print(f"warning: maskc loads {maskc_lib or '?'}, PyTorch {python_lib or '?'}: their "
              "BLAS and oneDNN may differ", file=sys.stderr)
    rows, runs = [], []
    print(f"{'size':12} {'threads':>7} {'prec':>4} {'maskc':>8} {'eager':>8} {'compiled':>8} "
          f"{'ratio (wall)':>13} {'ratio (cpu)':>12} {'compile s':>9}  blas kernels")
    print(f"{'':12} {'':>7} {'':>4} {'steps/s':>8} {'steps/s':>8} {'steps/s':>8} "
          f"{'/ best':>13} {'/ best':>12}")
    for size in args.sizes.split(","):
        for threads in args.threads.split(","):
            for precision in args.precisions.split(","):
                results = measure(args, size, threads, precision)
                runs += [r for impl in IMPLS for r in results[impl]]
                r = summarise(size, precision, results)
                rows.append(r)
                ratio = f"{r['ratio']:.3f} ({r['ratio_against'][0]})"
                ratio_cpu = f"{r['ratio_cpu']:.3f} ({r['ratio_cpu_against'][0]})"
                print(f"{size:12} {r['threads']:>7} {precision:>4} {1 / r['maskc_step_s']:>8.3f} "
                      f"{1 / r['eager_step_s']:>8.3f} {1 / r['compiled_step_s']:>8.3f} "
                      f"{ratio:>13} {ratio_cpu:>12} {r['compile_s']:>9.1f}  {r['blas_core']}",
                      flush=True)
    print("best: (e) eager, (c) compiled, the faster PyTorch run the ratio is taken against")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": rows, "runs": runs, "load": os.getloadavg(),
                       "libtorch": {"maskc": maskc_lib, "pytorch": python_lib}}, f, indent=1)


if __name__ == "__main__":
    main()
