#!/usr/bin/env python3
"""The README's tour, done as a reader would: its train.cpp pasted into a file, built with
the README's own command line, then every command of its console blocks run in order,
on the simulated CUDA; each must print what the README shows.

    readme_tour.py --readme README.md --bin-dir BUILD/bin --cudasim DIR --cuda-root DIR
                   --workdir DIR

Only the process id and durations may differ from the README (a run has its own); they
are matched as such, everything else character for character. Exit 0 pass, 1 fail,
77 skipped (the simulated CUDA is not built).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

SKIP = 77


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def tour_section(readme):
    start = readme.index("## A 60-second tour")
    end = readme.index("\n## ", start + 1)
    return readme[start:end]


def program(section):
    m = re.search(r"\(`train\.cpp`\):\n\n```cpp\n(.*?)```", section, re.S)
    if not m:
        fail("no ```cpp block for train.cpp in the tour")
    return m.group(1)


def build_line(section):
    m = re.search(r"Built with `(g\+\+ [^`]*)`", section)
    if not m:
        fail("no 'Built with `g++ ...`' line in the tour")
    return m.group(1)


def console_steps(section):
    """(command, expected output lines) for every `$ ` line of the console blocks."""
    steps = []
    for block in re.findall(r"```console\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
    return steps


TIME = re.compile(r"\d+(\.\d+)? (ns|µs|ms|s|min)\b")


def pattern(expected_line, pid):
    """A README line as a regex: its pid and durations stand for any."""
    out = ""
    at = 0
    for m in re.finditer(r"\d+(\.\d+)? (ns|µs|ms|s|min)\b|\b%s\b" % re.escape(pid), expected_line):
        out += re.escape(expected_line[at:m.start()])
        out += r"\d+" if m.group(0) == pid else r"\d+(\.\d+)? (ns|µs|ms|s|min)"
        at = m.end()
    return re.compile(out + re.escape(expected_line[at:]) + "$")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--readme", required=True)
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--cudasim", required=True)
    parser.add_argument("--cuda-root", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    args.bin_dir = os.path.abspath(args.bin_dir)
    args.cudasim = os.path.abspath(args.cudasim)
    if not os.path.exists(os.path.join(args.cudasim, "libcudart.so.13")):
        print("SKIP: simulated CUDA not built in " + args.cudasim)
        return SKIP

    with open(args.readme, encoding="utf-8") as f:
        section = tour_section(f.read())
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    with open(os.path.join(args.workdir, "train.cpp"), "w") as f:
        f.write(program(section))

    env = dict(os.environ)
    env["PATH"] = args.bin_dir + ":" + env.get("PATH", "")
    env["LD_LIBRARY_PATH"] = args.cudasim
    for name in ("LD_PRELOAD", "COLUMNS", "NO_COLOR", "GPUMEMTRACE_OUTPUT"):
        env.pop(name, None)

    # The README's build line for a standard CUDA install; this build's toolkit may be
    # elsewhere.
    build = build_line(section).replace("/usr/local/cuda", args.cuda_root)
    r = subprocess.run(build, shell=True, cwd=args.workdir, env=env, capture_output=True,
                       text=True, timeout=300)
    if r.returncode != 0:
        fail("the README's build line failed: %s\n%s" % (build, r.stderr))

    steps = console_steps(section)
    if len(steps) < 5:
        fail("expected the record, report, check and suppression steps, found %d" % len(steps))
    pid = re.search(r"pid (\d+):", "\n".join(steps[0][1])).group(1)
    status = 0
    actual_pid = None
    for command, expected in steps:
        if command == "echo $?":
            actual = [str(status)]
        else:
            # The README names the trace of its own run; this run's has this run's pid.
            if actual_pid:
                command = re.sub(r"\b%s\b" % pid, actual_pid, command)
            r = subprocess.run(command, shell=True, cwd=args.workdir, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
            status = r.returncode
            actual = r.stdout.decode("utf-8").splitlines()
            if actual_pid is None:
                m = re.search(r"pid (\d+):", "\n".join(actual))
                actual_pid = m.group(1) if m else None
        mismatch = len(actual) != len(expected) or any(
            not pattern(e, pid).match(a) for e, a in zip(expected, actual))
        if mismatch:
            fail("`%s` prints, as the README does not show:\n%s\n--- README shows:\n%s"
                 % (command, "\n".join(actual), "\n".join(expected)))
    # What the tour is about, said plainly.
    report = "\n".join(steps[1][1])
    for must in ("at train.cpp:7", "leaked 64.00 MiB", "peak 112.00 MiB"):
        if must not in report:
            fail("the README's report does not show " + must)
    print("PASS: %d commands print what the README shows" % len(steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
