#!/usr/bin/env python3
"""End-to-end tests of the gpumemtrace CLI on the simulated CUDA.

Each test is one function `test_<name>`; ctest runs one per process:

    cli_e2e.py --case NAME --gpumemtrace BIN --probe BIN --cudasim DIR --workdir DIR

Exit 0 pass, 1 fail, 77 skipped (a piece the test needs is not built yet).
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import xml.etree.ElementTree as ET

SKIP = 77
ARGS = None


class Skip(Exception):
    pass


def fail(message, result=None):
    text = message
    if result is not None:
        text += "\n--- exit %d\n--- stdout\n%s\n--- stderr\n%s" % (
            result.returncode, result.stdout, result.stderr)
    raise AssertionError(text)


def expect(condition, message, result=None):
    if not condition:
        fail(message, result)


def env_with_cudasim():
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ARGS.cudasim + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env.pop("LD_PRELOAD", None)
    return env


def run(args, timeout=120, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          env=env_with_cudasim(), cwd=ARGS.workdir, **kwargs)


def gmt(*args, **kwargs):
    return run([ARGS.gpumemtrace] + list(args), **kwargs)


def need_cudasim():
    if not os.path.exists(os.path.join(ARGS.cudasim, "libcudart.so.13")):
        raise Skip("simulated CUDA not built in " + ARGS.cudasim)
    if not os.path.exists(ARGS.probe):
        raise Skip("probe program not built: " + ARGS.probe)


def record(name, *probe_args, expect_code=0):
    """Records the probe into <workdir>/<name>.%p.gmtrace; returns the traces."""
    need_cudasim()
    for f in os.listdir(ARGS.workdir):
        if f.startswith(name + "."):
            os.remove(os.path.join(ARGS.workdir, f))
    r = gmt("record", "-o", name + ".%p.gmtrace", "--", ARGS.probe, *probe_args)
    expect(r.returncode == expect_code, "record exit status", r)
    traces = sorted(os.path.join(ARGS.workdir, f) for f in os.listdir(ARGS.workdir)
                    if f.startswith(name + ".") and f.endswith(".gmtrace"))
    expect(traces, "record wrote no trace", r)
    for t in traces:
        expect(os.path.basename(t) in r.stderr, "record names each trace " + t, r)
    expect("gpumemtrace report" in r.stderr, "record shows the report command", r)
    return traces, r


def one_line_error(r, code=2):
    expect(r.returncode == code, "exit status %d" % code, r)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    expect(len(lines) == 1, "exactly one line on stderr", r)


# ----- help, version, usage errors -------------------------------------------------------

def test_usage():
    r = gmt()
    expect(r.returncode == 2 and "Subcommands:" in r.stdout, "no arguments: help, exit 2", r)
    r = gmt("--version")
    expect(r.returncode == 0 and r.stdout.startswith("gpumemtrace "), "--version", r)
    for sub in ["record", "report", "check", "diff", "dump"]:
        r = gmt(sub, "--help")
        expect(r.returncode == 0 and "Example" in r.stdout, sub + " --help has an example", r)
    one_line_error(gmt("check", "x.gmtrace", "--bogus"))
    one_line_error(gmt("diff", "a", "b", "--bogus"))
    one_line_error(gmt("record", "--bogus", "--", "true"))
    one_line_error(gmt("nosuchcommand"))
    one_line_error(gmt("check", "missing.gmtrace"))
    one_line_error(gmt("check", "x.gmtrace", "--max-leaked-bytes", "12Q"))
    one_line_error(gmt("diff", "missing-a.json", "missing-b.json"))
    r = gmt("record", "sh", "-c", "exit 0")
    one_line_error(r)
    expect("--" in r.stderr, "record without -- explains", r)


# ----- record -----------------------------------------------------------------------------

def test_record_exit_status():
    r = gmt("record", "--", "sh", "-c", "exit 3")
    expect(r.returncode == 3, "exit status passes through", r)
    expect("no trace was written" in r.stderr, "a program without CUDA has no trace", r)
    r = gmt("record", "--", "sh", "-c", "kill -TERM $$")
    expect(r.returncode == 143, "killed by SIGTERM -> 143", r)
    r = gmt("record", "-q", "--", "sh", "-c", "kill -KILL $$")
    expect(r.returncode == 137, "killed by SIGKILL -> 137", r)
    r = gmt("record", "--", "./no-such-program")
    expect(r.returncode == 127, "missing program -> 127", r)


def test_record_forwards_signals():
    for sig, code in [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)]:
        # The child says when it runs: record installs its forwarding before it forks, so
        # from then on the signal is forwarded. (A fixed sleep raced a busy machine.)
        p = subprocess.Popen([ARGS.gpumemtrace, "record", "-q", "--", "sh", "-c",
                              "echo ready; exec sleep 30"],
                             cwd=ARGS.workdir, env=env_with_cudasim(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        expect(p.stdout.readline() == "ready\n", "the child started")
        p.send_signal(sig)
        try:
            out, err = p.communicate(timeout=120)  # a hang guard, not a measure
        except subprocess.TimeoutExpired:
            p.kill()
            fail("record did not forward %s" % sig.name)
        expect(p.returncode == code, "%s forwarded: exit %d, got %d (%s)" %
               (sig.name, code, p.returncode, err))


def test_record_options():
    need_cudasim()
    # Every option reaches the recorder: the run still works and writes its trace.
    r = gmt("record", "-o", "opts.%p.gmtrace", "--stack-depth", "8", "--buffer-size",
            "256K", "--on-full", "drop", "--log-level", "error", "--", ARGS.probe, "clean")
    expect(r.returncode == 0, "record with every option", r)
    expect("opts." in r.stderr, "trace listed", r)
    one_line_error(gmt("record", "--on-full", "never", "--", "true"))
    one_line_error(gmt("record", "--stack-depth", "999", "--", "true"))
    one_line_error(gmt("record", "-o", "no/such/dir/t.%p.gmtrace", "--", "true"))


def test_record_fork():
    traces, r = record("fork", "fork")
    expect(len(traces) == 2, "parent and child traces: %s" % traces, r)
    r = gmt("check", *traces)
    expect(r.returncode == 1, "both processes leak", r)
    expect(r.stdout.count("FAIL pid") == 2, "one verdict per process", r)


# ----- check ------------------------------------------------------------------------------

def test_check_leak():
    traces, _ = record("leak", "leak", "3", "1048576")
    r = gmt("check", *traces)
    expect(r.returncode == 1, "a leak fails the gate", r)
    expect("leak_buffers" in r.stdout, "names the leaking function", r)
    expect("3.0 MiB leaked in 3 allocations" in r.stdout, "says how much", r)
    r = gmt("check", *traces, "--max-leaked-bytes", "3M")
    expect(r.returncode == 0, "within --max-leaked-bytes 3M", r)
    r = gmt("check", *traces, "--max-leaked-bytes", "3MiB", "--max-leaks", "2")
    expect(r.returncode == 1, "--max-leaks 2 exceeded", r)
    r = gmt("check", *traces, "--max-leaked-bytes", "1G", "--max-peak-bytes", "100K")
    expect(r.returncode == 1 and "FAIL peak" in r.stdout, "--max-peak-bytes exceeded", r)
    r = gmt("check", *traces, "--max-leaked-bytes", "1G", "--max-peak-bytes", "1G")
    expect(r.returncode == 0, "--max-peak-bytes within", r)


def test_check_suppressions():
    traces, _ = record("supp", "leak", "2", "4096")
    supp = os.path.join(ARGS.workdir, "gmt.supp")
    with open(supp, "w") as f:
        f.write("# known leaks\n\nleak:leak_buffers\nleak:never_called_*\nerror:nothing\n")
    r = gmt("check", *traces, "--suppressions", supp)
    expect(r.returncode == 0, "suppressed leak passes", r)
    expect("used   leak:leak_buffers" in r.stdout, "reports the suppression used", r)
    expect("unused leak:never_called_*" in r.stdout, "lists unused suppressions", r)
    with open(supp, "w") as f:
        f.write("leak:something_else\n")
    r = gmt("check", *traces, "--suppressions", supp)
    expect(r.returncode == 1, "a suppression that does not match changes nothing", r)
    with open(supp, "w") as f:
        f.write("leek:typo\n")
    one_line_error(gmt("check", *traces, "--suppressions", supp))
    one_line_error(gmt("check", *traces, "--suppressions", "no-such.supp"))


def test_check_clean():
    traces, _ = record("clean", "clean")
    r = gmt("check", *traces)
    expect(r.returncode == 0 and "passed" in r.stdout, "a leak-free program passes", r)


def test_check_errors():
    traces, _ = record("dfree", "double-free")
    r = gmt("check", *traces)
    expect(r.returncode == 1 and "FAIL errors" in r.stdout, "a double free fails", r)
    expect("free_twice" in r.stdout, "names the function", r)
    r = gmt("check", *traces, "--no-fail-on-errors")
    expect(r.returncode == 0, "--no-fail-on-errors", r)
    supp = os.path.join(ARGS.workdir, "errors.supp")
    with open(supp, "w") as f:
        f.write("error:free_twice\n")
    r = gmt("check", *traces, "--suppressions", supp)
    expect(r.returncode == 0 and "used   error:free_twice" in r.stdout, "error suppressed", r)


def test_check_bad_input():
    bad = os.path.join(ARGS.workdir, "corrupt.gmtrace")
    with open(bad, "wb") as f:
        f.write(b"this is not a trace at all" * 10)
    one_line_error(gmt("check", bad))
    empty = os.path.join(ARGS.workdir, "empty.gmtrace")
    open(empty, "wb").close()
    one_line_error(gmt("check", empty))
    one_line_error(gmt("check", ARGS.workdir))
    # A header that claims to be a trace and then breaks off.
    half = os.path.join(ARGS.workdir, "half.gmtrace")
    with open(half, "wb") as f:
        f.write(b"GMTRACE\0" + b"\x01" * 20)
    one_line_error(gmt("check", half))


def test_check_incomplete():
    traces, _ = record("cut", "leak", "2", "4096")
    # Damage the end of the file: the trailer goes, the prefix stays readable.
    size = os.path.getsize(traces[0])
    with open(traces[0], "r+b") as f:
        f.truncate(size - 16)
    r = gmt("check", traces[0], "--max-leaked-bytes", "1G")
    if "FAIL trace" not in r.stdout:
        # The recorder's file may end in slack space; a cut there loses nothing.
        expect(r.returncode in (0, 1), "a cut trace is still analysed", r)
        return
    expect(r.returncode == 1, "an incomplete trace fails the gate", r)
    r = gmt("check", traces[0], "--max-leaked-bytes", "1G", "--allow-incomplete")
    expect(r.returncode == 0, "--allow-incomplete", r)


def test_check_junit():
    traces, _ = record("junit", "leak", "2", "4096")
    ttraces, _ = record("junit-tmpl", "template")
    xml_path = os.path.join(ARGS.workdir, "check.xml")
    r = gmt("check", *(traces + ttraces), "--junit", xml_path)
    expect(r.returncode == 1, "leaks fail", r)
    root = ET.parse(xml_path).getroot()
    expect(root.tag == "testsuites", "root is <testsuites>")
    suites = root.findall("testsuite")
    expect(len(suites) == 2, "one testsuite per process")
    expect(root.get("tests") == "6" and root.get("failures") == "2", "totals: %s" % root.attrib)
    for suite in suites:
        names = [tc.get("name") for tc in suite.findall("testcase")]
        expect(names == ["leaks", "peak", "errors"], "one testcase per check: %s" % names)
        expect(suite.get("failures") == "1", "leaks failed in " + suite.get("name"))
        leaks = suite.find("testcase[@name='leaks']/failure")
        expect(leaks is not None and leaks.get("message"), "failure has a message")
        expect(suite.find("testcase[@name='peak']/failure") is None, "peak passes")
    text = "".join(s.find("testcase[@name='leaks']/failure").text for s in suites)
    expect("leak_buffers" in text, "failure text has the stack")
    expect("leak_typed<float>" in text, "'<' survives escaping: " + text)
    if shutil.which("xmllint"):
        r = subprocess.run(["xmllint", "--noout", xml_path], capture_output=True, text=True)
        expect(r.returncode == 0, "xmllint accepts the file: " + r.stderr)


# ----- diff -------------------------------------------------------------------------------

def test_diff():
    base, _ = record("base", "leak", "1", "1048576")
    new, _ = record("new", "leak", "3", "1048576")
    r = gmt("diff", base[0], new[0])
    expect(r.returncode == 0, "no limits: report only", r)
    expect("leak_buffers" in r.stdout and "peak" in r.stdout, "table shows sites and peak", r)
    r = gmt("diff", base[0], new[0], "--max-leak-growth", "1M")
    expect(r.returncode == 1 and "leaked bytes grew" in r.stdout, "leak growth above limit", r)
    r = gmt("diff", base[0], new[0], "--max-leak-growth", "2M")
    expect(r.returncode == 0, "leak growth at the limit passes", r)
    r = gmt("diff", base[0], new[0], "--max-peak-growth", "10")
    expect(r.returncode == 1 and "peak" in r.stdout, "peak growth above limit", r)
    r = gmt("diff", base[0], new[0], "--max-peak-growth", "1000%")
    expect(r.returncode == 0, "peak growth below limit", r)
    r = gmt("diff", new[0], base[0], "--max-peak-growth", "0", "--max-leak-growth", "0")
    expect(r.returncode == 0, "shrinking never fails", r)
    # JSON reports work as inputs, mixed with traces.
    report = os.path.join(ARGS.workdir, "base.json")
    r = gmt("report", base[0], "--format", "json", "-o", report)
    expect(r.returncode == 0, "report --format json", r)
    r = gmt("diff", report, new[0], "--max-leak-growth", "1M")
    expect(r.returncode == 1, "JSON report as base", r)
    garbage = os.path.join(ARGS.workdir, "garbage.json")
    with open(garbage, "w") as f:
        f.write("{ not json")
    one_line_error(gmt("diff", garbage, new[0]))


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True)
    parser.add_argument("--gpumemtrace", required=True)
    parser.add_argument("--probe", required=True)
    parser.add_argument("--cudasim", required=True)
    parser.add_argument("--workdir", required=True)
    ARGS = parser.parse_args()
    ARGS.workdir = os.path.join(ARGS.workdir, ARGS.case)
    shutil.rmtree(ARGS.workdir, ignore_errors=True)
    os.makedirs(ARGS.workdir)
    test = globals().get("test_" + ARGS.case)
    if test is None:
        print("no such case: " + ARGS.case)
        return 2
    try:
        test()
    except Skip as e:
        print("SKIP: %s" % e)
        return SKIP
    except AssertionError as e:
        print("FAIL: %s" % e)
        return 1
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
