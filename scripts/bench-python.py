#!/usr/bin/env python3
"""Cost of Python stacks per traced event (docs/performance.md, "Python stacks").

Runs tests/bench/python_frames_loop.py (cudaMalloc/cudaFree through ctypes on the simulated
CUDA, the loop below F Python frames, timed by the program itself) with F = 10 and 50, in
three modes, interleaved over ROUNDS rounds (each round runs every mode and F once):

    plain   no preload
    native  LD_PRELOAD=libgpumemtrace.so, GPUMEMTRACE_PYTHON=0 (native stacks only)
    python  LD_PRELOAD=libgpumemtrace.so (native + Python stacks, the default)

    baseline  LD_PRELOAD=the --baseline library (native + Python stacks): another build, in
              the same rounds, so that a change's gain is paired round by round

Extra cost per event = (python - native) / 2 per pair, paired within a round; medians over
rounds. The marginal cost of one more Python frame is the difference between F = 50 and
F = 10, over 40. With --baseline, the change per event = (python - baseline) / 2 per pair.

    scripts/bench-python.py BUILD_DIR [--python /usr/bin/python3] [--rounds 7] [--pairs 200000]
                            [--baseline OTHER/libgpumemtrace.so]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "..", "tests", "bench", "python_frames_loop.py")


def run(args, build, mode, frames, work):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUMEMTRACE_", "PYTHON"))}
    env["LD_LIBRARY_PATH"] = os.path.join(build, "lib", "cudasim")
    if mode == "baseline":
        env["LD_PRELOAD"] = os.path.abspath(args.baseline)
    elif mode != "plain":
        env["LD_PRELOAD"] = os.path.join(build, "lib", "libgpumemtrace.so")
    if mode != "plain":
        env["GPUMEMTRACE_OUTPUT"] = os.path.join(work, "bench.%p.gmtrace")
    if mode == "native":
        env["GPUMEMTRACE_PYTHON"] = "0"
    r = subprocess.run([args.python, LOOP, str(frames), str(args.pairs)], env=env,
                       capture_output=True, text=True, check=True)
    for f in os.listdir(work):
        os.remove(os.path.join(work, f))
    return json.loads(r.stdout.strip().splitlines()[-1])["ns_per_pair"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--python", default="/usr/bin/python3")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--pairs", type=int, default=200000)
    ap.add_argument("--baseline", help="another build's libgpumemtrace.so, run in the same rounds")
    args = ap.parse_args()
    if args.baseline and not os.path.isfile(args.baseline):
        ap.error(f"--baseline {args.baseline}: no such file")
    build = os.path.abspath(args.build)
    version = subprocess.run([args.python, "-c", "import sys; print(sys.version.split()[0])"],
                             capture_output=True, text=True).stdout.strip()
    modes, depths = ("plain", "native", "python") + (("baseline",) if args.baseline else ()), (10, 50)
    times = {(m, d): [] for m in modes for d in depths}
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.rounds):
            for d in depths:
                for m in modes:
                    times[(m, d)].append(run(args, build, m, d, work))
    med = {k: statistics.median(v) for k, v in times.items()}

    def per_event(a, b, d):  # paired per round, median over rounds, per event (half a pair)
        return statistics.median((y - x) / 2 for x, y in zip(times[(a, d)], times[(b, d)]))

    print(f"CPython {version}, {args.rounds} interleaved rounds of {args.pairs} "
          f"cudaMalloc/cudaFree pairs through ctypes (simulated CUDA); medians")
    print()
    print("| Python frames | plain ns/pair | native stacks ns/pair | + Python stacks ns/pair "
          "| native cost per event | extra cost of Python frames per event |")
    print("|---:|---:|---:|---:|---:|---:|")
    extra = {}
    for d in depths:
        extra[d] = per_event("native", "python", d)
        print(f"| {d} | {med[('plain', d)]:.0f} | {med[('native', d)]:.0f} | "
              f"{med[('python', d)]:.0f} | {per_event('plain', 'native', d):.0f} ns | "
              f"{extra[d]:.0f} ns |")
    print()
    print(f"Marginal cost of one more Python frame: {(extra[50] - extra[10]) / 40:.1f} ns per "
          f"event (between 10 and 50 frames).")
    if args.baseline:
        print()
        print(f"Against {args.baseline} (Python stacks on both, paired per round), per event: " +
              ", ".join(f"{d} frames {per_event('baseline', 'python', d):+.0f} ns "
                        f"(baseline {med[('baseline', d)]:.0f} ns/pair)" for d in depths))


if __name__ == "__main__":
    sys.exit(main())
