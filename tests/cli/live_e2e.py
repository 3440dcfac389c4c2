#!/usr/bin/env python3
"""End-to-end tests of watching running processes (docs/live.md): `top`, `snapshot`,
`control` and GPUMEMTRACE_START=paused, on the simulated CUDA with
tests/cli/programs/live_server.cpp, a program that works in batches on command (files).
Every step waits for the program to say it is done with a file: nothing depends on how
fast anything runs; timeouts only end a test that went wrong.

    live_e2e.py --case NAME --gpumemtrace BIN --server BIN --cudasim DIR --workdir DIR
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from e2e_case import Skip, expect, fail, run_case  # noqa: E402

ARGS = None
GUARD_S = 60  # a failure guard, never a wait for something to happen


def env_with_cudasim(extra=None):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ARGS.cudasim + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env.pop("LD_PRELOAD", None)
    env.update(extra or {})
    return env


def gmt(*args):
    return subprocess.run([ARGS.gpumemtrace] + list(args), capture_output=True, text=True,
                          timeout=120, env=env_with_cudasim(), cwd=ARGS.workdir)


def wait_for(path, what):
    deadline = time.monotonic() + GUARD_S
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            fail("timed out waiting for " + what)
        time.sleep(0.005)


class Server:
    """live_server under `gpumemtrace record`, driven batch by batch."""

    def __init__(self, extra_env=None):
        if not os.path.exists(os.path.join(ARGS.cudasim, "libcudart.so.13")):
            raise Skip("simulated CUDA not built in " + ARGS.cudasim)
        self.dir = os.path.join(ARGS.workdir, "server")
        os.makedirs(self.dir)
        self.batch = 0
        self.record = subprocess.Popen(
            [ARGS.gpumemtrace, "record", "-q", "-o", os.path.join(ARGS.workdir, "live.%p.gmtrace"),
             "--", ARGS.server, self.dir],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=env_with_cudasim(extra_env), cwd=ARGS.workdir)
        wait_for(os.path.join(self.dir, "pid"), "the server's pid")
        with open(os.path.join(self.dir, "pid")) as f:
            self.pid = f.read().strip()

    def do(self, word):
        """Runs one batch (steps, release, stop) and waits until it is done."""
        self.batch += 1
        go = os.path.join(self.dir, "go-%d" % self.batch)
        with open(go + ".tmp", "w") as f:
            f.write(word + "\n")
        os.rename(go + ".tmp", go)
        wait_for(os.path.join(self.dir, "done-%d" % self.batch), "batch %d (%s)" % (self.batch, word))

    def trace(self):
        return os.path.join(ARGS.workdir, "live.%s.gmtrace" % self.pid)

    def stop(self):
        self.do("stop")
        out, err = self.record.communicate(timeout=GUARD_S)
        expect(self.record.returncode == 0, "the server ends well: " + err)

    def kill(self):
        if self.record.poll() is None:
            os.kill(int(self.pid), signal.SIGKILL)
            self.record.communicate(timeout=GUARD_S)  # reaps it: its pid is gone after


def leak_line_number():
    """The line of live_server.cpp marked `// LINE:leak`: the planted leak."""
    with open(ARGS.server_source) as f:
        for number, text in enumerate(f, 1):
            if "// LINE:leak" in text:
                return number
    fail("no // LINE:leak in " + ARGS.server_source)


def leak_line():
    return "live_server.cpp:%d" % leak_line_number()


def site_bytes(top_output, label):
    """The live bytes top shows for `label` under "live by site", in MiB."""
    lines = top_output.splitlines()
    start = next((i for i, l in enumerate(lines) if "live by site" in l), len(lines))
    for line in lines[start:]:
        if label in line:
            m = re.search(r"([\d.]+) MiB", line)
            if m:
                return float(m.group(1))
    fail("top shows no line for " + label + ":\n" + top_output)


def snapshot_json(target, name):
    r = gmt("snapshot", target, "-o", name)
    expect(r.returncode == 0, "snapshot exit status", r)
    with open(os.path.join(ARGS.workdir, name)) as f:
        return json.load(f)


# ----- cases --------------------------------------------------------------------------------

def test_live_top():
    s = Server()
    try:
        s.do("steps")
        first = gmt("top", s.pid, "--once")
        expect(first.returncode == 0, "top --once exit status", first)
        expect("\x1b" not in first.stdout, "no escape codes through a pipe", first)
        expect("pid " + s.pid + " running" in first.stdout, "the process is running", first)
        expect("live by site" in first.stdout, "top lists the sites", first)
        s.do("steps")
        second = gmt("top", s.trace(), "--once")  # the trace itself, this time
        expect(second.returncode == 0, "top --once on the trace", second)
        before, after = site_bytes(first.stdout, leak_line()), site_bytes(second.stdout, leak_line())
        expect(before == 5 and after == 10, "the leak's line grows 5 -> 10 MiB: %s -> %s" % (before, after), second)
        expect("growth:" in second.stdout and "per iteration" in second.stdout, "top shows the growth", second)
        r = gmt("top", ARGS.workdir, "--once")  # a directory of traces
        expect(r.returncode == 0 and "pid " + s.pid in r.stdout, "top of a directory", r)
    finally:
        s.kill()


def test_live_snapshot():
    s = Server()
    try:
        s.do("steps")
        s.do("steps")
        report = snapshot_json(s.pid, "snap.json")
        expect(report["snapshot"]["running"] == 1, "the snapshot says the process runs")
        expect(report["processes"][0]["running"] is True, "its process is running")
        leak = report["leaks"][0]
        expect(leak["bytes"] == 10 << 20, "the leak's 10 MiB are live now: %d" % leak["bytes"])
        expect(any(f.get("line") == leak_line_number() for f in leak["stack"]),
               "the leak's stack names its line")
        text = gmt("snapshot", s.trace())
        expect(text.returncode == 0 and "gpumemtrace snapshot" in text.stdout and
               "live now" in text.stdout and "Live now (largest first)" in text.stdout,
               "the text says live now, not leaked", text)
        expect("INCOMPLETE" not in text.stdout, "a running process's trace is not called incomplete", text)
        r = gmt("check", os.path.join(ARGS.workdir, "snap.json"), "--max-leaked-bytes", "100M")
        expect(r.returncode == 0, "check on the snapshot's JSON", r)
        r = gmt("check", s.trace(), "--max-leaked-bytes", "1M")
        expect(r.returncode == 1, "check on the running trace fails on the leak", r)
        r = gmt("snapshot", s.pid, "--every", "1ms", "--count", "2", "-o", "periodic-%n.json")
        expect(r.returncode == 0, "periodic snapshots", r)
        for n in (1, 2):
            expect(os.path.exists(os.path.join(ARGS.workdir, "periodic-%d.json" % n)), "snapshot %d written" % n)
        r = gmt("snapshot", s.pid, "--every", "1", "-o", "unnumbered.json")
        expect(r.returncode == 2 and "%n" in r.stderr, "several snapshots need %n", r)
        s.stop()
        report = snapshot_json(s.trace(), "after.json")
        expect(report["snapshot"]["running"] == 0 and report["processes"][0]["running"] is False,
               "after the end: not running")
    finally:
        s.kill()


def test_live_pause():
    s = Server({"GPUMEMTRACE_START": "paused"})
    try:
        s.do("steps")  # batch 1: before recording started (the model too)
        r = gmt("control", s.pid, "status")
        expect(r.returncode == 0 and "paused" in r.stdout, "control status: paused", r)
        r = gmt("control", s.pid, "resume")
        expect(r.returncode == 0 and "resume" in r.stdout, "control resume", r)
        s.do("release")  # batch 2: frees batch 1's buffers, allocated before recording
        s.do("steps")    # batch 3: recorded
        r = gmt("control", s.trace(), "pause")
        expect(r.returncode == 0, "control pause (by trace)", r)
        s.do("steps")    # batch 4: paused
        gmt("control", s.pid, "resume")
        s.do("release")  # batch 5: frees batch 4's, allocated while paused
        live = snapshot_json(s.pid, "paused.json")
        s.stop()
        report = snapshot_json(s.trace(), "end.json")
        for name, rep in (("snapshot", live), ("final", report)):
            p = rep["processes"][0]
            expect(rep["summary"]["errors"] == 0, name + ": frees of unseen memory are no errors: %s" % rep["errors"])
            expect(p.get("paused", {}).get("frees") == 10, name + ": 10 frees of unseen memory: %s" % p.get("paused"))
            expect(p["paused"]["started_paused"] is True, name + ": started paused")
            expect([c["change"] for c in p["paused"]["changes"]] == ["pause", "resume", "pause", "resume"],
                   name + ": the changes in order: %s" % p["paused"]["changes"])
            expect(rep["summary"]["allocations"] == 5 * 2 + 0, name + ": only batch 3's allocations are seen: %d" % rep["summary"]["allocations"])
            expect(rep["summary"]["leaked_bytes"] == 5 << 20, name + ": batch 3's 5 MiB live: %d" % rep["summary"]["leaked_bytes"])
        r = gmt("report", s.trace())
        expect("it started paused" in r.stdout and "not errors" in r.stdout, "the text report says what pausing did", r)
    finally:
        s.kill()


def test_live_killed():
    s = Server()
    top = None
    try:
        s.do("steps")
        out_path = os.path.join(ARGS.workdir, "top.out")
        with open(out_path, "w") as out:
            top = subprocess.Popen([ARGS.gpumemtrace, "top", s.pid, "--interval", "0.01"],
                                   stdout=out, stderr=subprocess.STDOUT, env=env_with_cudasim(),
                                   cwd=ARGS.workdir)
        deadline = time.monotonic() + GUARD_S
        while "live by site" not in open(out_path).read():
            expect(time.monotonic() < deadline and top.poll() is None, "top shows a frame")
            time.sleep(0.005)
        s.kill()  # while top refreshes
        top.wait(timeout=GUARD_S)
        text = open(out_path).read()
        expect(top.returncode == 0, "top ends well when its process is killed:\n" + text[-3000:])
        last = text[text.rfind("gpumemtrace top"):]
        expect("ended without a trailer" in last, "the last frame says the process ended:\n" + last)
        expect("\x1b" not in text, "no escape codes into a file")
    finally:
        if top and top.poll() is None:
            top.kill()
        s.kill()


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True)
    parser.add_argument("--gpumemtrace", required=True)
    parser.add_argument("--server", required=True)
    parser.add_argument("--server-source", required=True)
    parser.add_argument("--cudasim", required=True)
    parser.add_argument("--workdir", required=True)
    ARGS = parser.parse_args()
    return run_case(globals(), ARGS)


if __name__ == "__main__":
    sys.exit(main())
