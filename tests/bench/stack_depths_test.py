"""scripts/stack-depths.py on traces of known depths: gen_trace's stacks have DEPTH frames and
its header a limit of 64, so a trace made with DEPTH 64 has every stack at the limit and one
made with DEPTH 5 none; a trace that cannot be read, or a dump that is not JSON lines, exits
2 with its reason."""
import argparse
import os
import re
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument("--script", required=True)
ap.add_argument("--cli", required=True)
ap.add_argument("--gen-trace", required=True)
ap.add_argument("--workdir", required=True)
args = ap.parse_args()
os.makedirs(args.workdir, exist_ok=True)


def depths(depth):
    trace = os.path.join(args.workdir, "depth%d.gmtrace" % depth)
    if os.path.exists(trace):
        os.remove(trace)
    subprocess.run([args.gen_trace, trace, "100", "4", "2", "-", str(depth)], check=True,
                   stdout=subprocess.DEVNULL)
    p = subprocess.run([sys.executable, args.script, "--cli", args.cli, trace],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return p.stdout


failures = []


def expect(text, pattern, what):
    if not re.search(pattern, text, re.M):
        failures.append("%s: no match for %r in:\n%s" % (what, pattern, text))


shallow = depths(5)
expect(shallow, r"stack depth limit 64; 3 stacks, 0 of them at the limit", "depth 5 summary")
expect(shallow, r"^\| alloc/cudaMalloc \| 52 \| 52 \| 5 / 5 / 5 \| 0 \(0\.0 %\) \| 0 \|$",
       "depth 5 allocations")
deep = depths(64)
expect(deep, r"stack depth limit 64; 3 stacks, 3 of them at the limit", "depth 64 summary")
expect(deep, r"^\| alloc/cudaMalloc \| 52 \| 52 \| 64 / 64 / 64 \| 52 \(100\.0 %\) \| 0 \|$",
       "depth 64 allocations")
expect(deep, r"^\| free/cudaFree \| 48 \| 48 \| 64 / 64 / 64 \| 48 \(100\.0 %\) \| 0 \|$",
       "depth 64 frees")

missing = os.path.join(args.workdir, "missing.gmtrace")
p = subprocess.run([sys.executable, args.script, "--cli", args.cli, missing],
                   capture_output=True, text=True)
if p.returncode != 2 or "cannot open" not in p.stderr or p.stdout:
    failures.append("missing trace: rc %d, stdout %r, stderr %r" % (p.returncode, p.stdout, p.stderr))

# A "dump" that is not JSON lines (another program given as --cli): no traceback, exit 2.
fake = os.path.join(args.workdir, "not_a_dump.sh")
with open(fake, "w") as f:
    f.write("#!/bin/sh\necho 'not json'\n")
os.chmod(fake, 0o755)
p = subprocess.run([sys.executable, args.script, "--cli", fake, missing],
                   capture_output=True, text=True)
if p.returncode != 2 or "unreadable dump" not in p.stderr or "Traceback" in p.stderr:
    failures.append("not a dump: rc %d, stderr %r" % (p.returncode, p.stderr))

for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
