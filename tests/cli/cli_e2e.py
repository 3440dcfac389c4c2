#!/usr/bin/env python3
"""End-to-end tests of the gpumemtrace CLI on the simulated CUDA.

Each test is one function `test_<name>`; ctest runs one per process:

    cli_e2e.py --case NAME --gpumemtrace BIN --probe BIN --cudasim DIR --workdir DIR

Exit 0 pass, 1 fail, 77 skipped (a piece the test needs is not built yet).
"""

import argparse
import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import struct
import socket
import subprocess
import sys
import termios
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from e2e_case import Skip, expect, fail, run_case  # noqa: E402

ARGS = None


def env_with_cudasim():
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ARGS.cudasim + (
        ":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    env.pop("LD_PRELOAD", None)
    return env


def run(args, timeout=120, extra_env=None, **kwargs):
    env = env_with_cudasim()
    env.update(extra_env or {})
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=ARGS.workdir, **kwargs)


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
        expect("{false}" not in r.stdout, sub + " --help shows no CLI11 negation default", r)
        expect(not re.search(r"(traces?|base|new) TEXT", r.stdout), sub + " --help names traces TRACE", r)
    one_line_error(gmt("check", "x.gmtrace", "--bogus"))
    one_line_error(gmt("diff", "a", "b", "--bogus"))
    one_line_error(gmt("record", "--bogus", "--", "true"))
    one_line_error(gmt("nosuchcommand"))
    r = gmt("reprot", "x.gmtrace")
    one_line_error(r)
    expect("unknown command 'reprot'; did you mean 'report'?" in r.stderr, "a typo names the command", r)
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
    with open(os.path.join(ARGS.workdir, "afile"), "w") as f:
        f.write("not a directory")
    r = gmt("record", "-o", "afile/sub/t.%p.gmtrace", "--", "true")
    one_line_error(r)
    expect("afile/ is not a directory" in r.stderr, "says why", r)


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
    # report tells the same story: what check would not fail on is not a leak there either.
    r = gmt("report", *traces, "--suppressions", supp)
    expect(r.returncode == 0 and "leaked 0 B in 0 allocations" in r.stdout,
           "report: a suppressed leak is not leaked", r)
    expect("suppressed (not leaks): " in r.stdout and "by leak:leak_buffers" in r.stdout,
           "report: says what was suppressed and by which rule", r)
    rep = json.loads(gmt("report", *traces, "--suppressions", supp, "--format", "json").stdout)
    expect(rep["summary"]["leaked_bytes"] == 0 and rep["leak_scope"]["suppressed_bytes"] > 0,
           "report JSON: suppressed bytes leave the leaked figures", rep["summary"])
    expect([s["rule"] for s in rep["suppressions"]] == ["leak:leak_buffers"],
           "report JSON: the rule that matched", rep["suppressions"])
    expect(rep["suppressions"][0]["bytes"] == rep["leak_scope"]["suppressed_bytes"],
           "report JSON: the rule's bytes are the suppressed bytes", rep)
    r = gmt("report", *traces)
    expect("leaked 0 B" not in r.stdout and "suppressed" not in r.stdout,
           "report without the file: the leak is a leak", r)
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


def test_decode_threads():
    # GPUMEMTRACE_DECODE_THREADS (docs/configuration.md): the same report with no decoding
    # thread, one or several; anything but a number up to 256 is one line and exit 2.
    traces, _ = record("threads", "leak", "3", "1048576")
    reports = []
    for n in ("0", "1", "3"):
        r = gmt("report", "--format", "json", *traces,
                extra_env={"GPUMEMTRACE_DECODE_THREADS": n})
        expect(r.returncode == 0, "report with %s decoding threads" % n, r)
        reports.append(json.loads(r.stdout))
    expect(reports[0] == reports[1] == reports[2], "the same report whatever the threads")
    for bad in ("", "abc", "-1", "257", "2x"):
        r = gmt("report", *traces, extra_env={"GPUMEMTRACE_DECODE_THREADS": bad})
        one_line_error(r)
        expect("GPUMEMTRACE_DECODE_THREADS" in r.stderr, "the error names the variable", r)


def test_accounting_thread():
    # GPUMEMTRACE_ACCOUNTING_THREAD (docs/configuration.md): the same report, text, JSON and
    # HTML, and the same verdict, with the accounting on the reading thread or on its own;
    # anything but 0 or 1 is one line and exit 2.
    traces, _ = record("acct", "leak", "3", "1048576")
    outputs = []
    for n in ("0", "1"):
        env = {"GPUMEMTRACE_ACCOUNTING_THREAD": n}
        html = os.path.join(ARGS.workdir, "acct.%s.html" % n)
        r = gmt("report", "--format", "html", "-o", html, *traces, extra_env=env)
        expect(r.returncode == 0, "HTML report with GPUMEMTRACE_ACCOUNTING_THREAD=" + n, r)
        with open(html, encoding="utf-8") as f:
            page = f.read()
        text = gmt("report", *traces, extra_env=env)
        js = gmt("report", "--format", "json", *traces, extra_env=env)
        verdict = gmt("check", "--max-leaks", "0", *traces, extra_env=env)
        expect(text.returncode == 0 and js.returncode == 0, "reports", text)
        expect(verdict.returncode == 1, "the leak fails the gate", verdict)
        outputs.append((text.stdout, json.loads(js.stdout), page, verdict.stdout))
    expect(outputs[0] == outputs[1], "the same reports and verdict on either thread")
    for bad in ("", "2", "yes", "1 "):
        r = gmt("report", *traces, extra_env={"GPUMEMTRACE_ACCOUNTING_THREAD": bad})
        one_line_error(r)
        expect("GPUMEMTRACE_ACCOUNTING_THREAD" in r.stderr, "the error names the variable", r)


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


# ----- text as a person sees it: a terminal, a pipe -----------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def in_terminal(argv, columns, extra_env=None):
    """Runs argv with stdin, stdout and stderr on a new pseudo-terminal `columns` wide;
    returns what the terminal received (\r\n turned back into \n)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    env = env_with_cudasim()
    env.pop("COLUMNS", None)
    env.pop("NO_COLOR", None)
    env["TERM"] = "xterm"
    env.update(extra_env or {})
    p = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=ARGS.workdir,
                         env=env, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            p.kill()
            fail("no output from %s within 60 s" % argv)
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the terminal's last writer is gone
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    expect(p.wait() == 0, "%s in a terminal: exit %d" % (argv, p.returncode))
    return out.decode("utf-8").replace("\r\n", "\n")


def test_text_terminal_and_pipe():
    traces, _ = record("tty", "template")
    report = [ARGS.gpumemtrace, "report", traces[0]]
    on_terminal = in_terminal(report, 100)
    expect(ANSI.search(on_terminal), "colour on a terminal:\n" + on_terminal)
    plain = ANSI.sub("", on_terminal)
    expect("leak_typed<float>" in plain and "Leaks (largest first)" in plain,
           "the report:\n" + plain)
    # `| cat` in that terminal: the same text without colour, as wide.
    piped = in_terminal(["sh", "-c", '"$0" report "$1" | cat', ARGS.gpumemtrace, traces[0]], 100)
    expect(not ANSI.search(piped), "no colour through a pipe:\n" + piped)
    expect(piped == plain, "| cat shows what the terminal shows:\n%s\n---\n%s" % (piped, plain))
    no_color = in_terminal(report, 100, {"NO_COLOR": "1"})
    expect(no_color == plain, "NO_COLOR: the same text without colour:\n" + no_color)
    # Lines respect the width; a frame keeps its file:line when its signature is cut.
    narrow = ANSI.sub("", in_terminal(report, 50))
    too_wide = [l for l in narrow.splitlines() if len(l) > 50]
    expect(not too_wide, "lines over 50 columns: %s" % too_wide)
    expect("at cli_probe.cpp:" in narrow, "file:line kept when cut:\n" + narrow)
    # No terminal at all: text, whole lines, the same as a wide terminal shows.
    r = gmt("report", traces[0])
    expect(r.returncode == 0 and not ANSI.search(r.stdout), "text through a pipe", r)
    wide = ANSI.sub("", in_terminal(report, 250))
    expect(r.stdout == wide, "a pipe without a terminal shows whole lines:\n%s\n---\n%s"
           % (r.stdout, wide))
    # check and diff colour only on a terminal too.
    check = in_terminal(["sh", "-c", '"$0" check "$1" || true', ARGS.gpumemtrace, traces[0]], 100)
    expect(ANSI.search(check) and "FAIL" in check, "check in colour on a terminal:\n" + check)
    r = gmt("check", traces[0])
    expect(r.returncode == 1 and not ANSI.search(r.stdout), "check without colour in a pipe", r)
    expect(ANSI.sub("", check).replace("\n", "") .startswith(r.stdout.replace("\n", "")[:20]),
           "check says the same", r)


def test_strings_any_bytes():
    """A program run with an argument that is not UTF-8 and one with escape sequences."""
    need_cudasim()
    for f in os.listdir(ARGS.workdir):
        if f.startswith("bytes."):
            os.remove(os.path.join(ARGS.workdir, f))
    args = [ARGS.gpumemtrace.encode(), b"record", b"-o", b"bytes.%p.gmtrace", b"--",
            ARGS.probe.encode(), b"leak", b"1", b"4096", b"caf\xe9", b"\x1b[31mred\x07"]
    r = subprocess.run(args, capture_output=True, env=env_with_cudasim(), cwd=ARGS.workdir,
                       timeout=120)
    expect(r.returncode == 0, "record: exit %d: %r" % (r.returncode, r.stderr))
    expect(b"\x1b[31m" not in r.stderr, "record's summary escapes control characters")
    trace = sorted(f for f in os.listdir(ARGS.workdir) if f.startswith("bytes."))[0]
    r = gmt("report", "--format", "json", trace)
    expect(r.returncode == 0, "report --format json", r)
    command = json.loads(r.stdout)["processes"][0]["command"]
    expect("caf\ufffd" in command and "\x1b[31mred" in command, "command in JSON: %r" % command)
    r = gmt("dump", trace)
    expect(r.returncode == 0, "dump", r)
    for line in r.stdout.splitlines():
        json.loads(line)
    r = gmt("report", trace)
    expect(r.returncode == 0 and "caf\\xe9" in r.stdout and "\x1b" not in r.stdout
           and "\\x1b[31mred\\x07" in r.stdout, "text escapes the bytes", r)
    xml_path = os.path.join(ARGS.workdir, "bytes.xml")
    r = gmt("check", trace, "--junit", xml_path)
    expect(r.returncode == 1, "check fails on the leak", r)
    ET.parse(xml_path)
    if shutil.which("xmllint"):
        r = subprocess.run(["xmllint", "--noout", xml_path], capture_output=True, text=True)
        expect(r.returncode == 0, "xmllint accepts the file: " + r.stderr)
# ----- ranks, output templates, NCCL's VMM use ----------------------------------------------

def files_under(folder):
    out = []
    for root, _, files in os.walk(os.path.join(ARGS.workdir, folder)):
        out += [os.path.relpath(os.path.join(root, f), ARGS.workdir) for f in files]
    return sorted(out)


def report_json(trace):
    r = gmt("report", "--format", "json", trace)
    expect(r.returncode == 0, "report " + trace, r)
    return json.loads(r.stdout)


def test_record_output_template():
    need_cudasim()
    # Missing directories are created; %q{VAR} and %r come from the traced process.
    r = gmt("record", "-o", "made/%q{GMT_JOB}/rank%r.%p.gmtrace", "--", ARGS.probe, "clean",
            extra_env={"GMT_JOB": "job7", "RANK": "3", "LOCAL_RANK": "1", "WORLD_SIZE": "4"})
    expect(r.returncode == 0, "record", r)
    traces = files_under("made")
    expect(len(traces) == 1 and traces[0].startswith("made/job7/rank3."), str(traces), r)
    expect(os.path.basename(traces[0]) in r.stderr, "record lists the trace", r)
    header = json.loads(gmt("dump", traces[0]).stdout.splitlines()[0])
    expect(header.get("rank") == 3 and header.get("local_rank") == 1 and
           header.get("world_size") == 4 and header.get("rank_source") == "RANK",
           "header rank block: %s" % header)
    process = report_json(traces[0])["processes"][0]
    expect(process["rank"] == 3 and process["host"] == socket.gethostname(),
           "report rank and host: %s" % process)
    # Without a launcher's variables: "norank", and rank null in the report.
    r = gmt("record", "-o", "solo/%h/rank%r.gmtrace", "--", ARGS.probe, "clean")
    expect(r.returncode == 0, "record", r)
    traces = files_under("solo")
    expect(traces == ["solo/%s/ranknorank.gmtrace" % socket.gethostname()], str(traces), r)
    expect(report_json(traces[0])["processes"][0]["rank"] is None, "no rank")
    # An Open MPI rank when torchrun's is absent.
    r = gmt("record", "-o", "mpi/rank%r.gmtrace", "--", ARGS.probe, "clean",
            extra_env={"OMPI_COMM_WORLD_RANK": "5", "SLURM_PROCID": "0"})
    expect(files_under("mpi") == ["mpi/rank5.gmtrace"], str(files_under("mpi")), r)


def test_record_long_command():
    need_cudasim()
    # 500 arguments of 40 letters: a 20 KiB command line, over what a header keeps.
    long_args = ["x" * 40] * 500
    for f in files_under("longcmd"):
        os.remove(os.path.join(ARGS.workdir, f))
    r = gmt("record", "--check", "-o", "longcmd/%p.gmtrace", "--", ARGS.probe, "clean",
            *long_args)
    expect(r.returncode == 0 and "gpumemtrace check: passed" in r.stderr,
           "a clean program with a long command line passes the gate", r)
    expect("FAIL" not in r.stderr and "pid 0" not in r.stderr, "a whole header", r)
    traces = files_under("longcmd")
    expect(len(traces) == 1, str(traces), r)
    process = report_json(traces[0])["processes"][0]
    expect(process["pid"] > 0 and process["complete"], "pid and complete: %s" % process)
    expect(process.get("command_truncated") is True and
           process["command"].startswith(ARGS.probe + " clean xxxx"),
           "the command's start, said to be cut: %s" % process.get("command_truncated"))
    r = gmt("report", traces[0])
    expect(r.returncode == 0 and "(command line truncated)" in r.stdout, "report says so", r)
    # A short one is whole, and says nothing.
    trace = record("shortcmd", "clean")[0][0]
    expect("command_truncated" not in report_json(trace)["processes"][0], "whole command")


def test_record_no_trace():
    need_cudasim()
    # A trace that cannot be created is not "did not call CUDA", and fails the gate. A file
    # size limit below the ring stops any user's trace; /proc refuses a directory even to root
    # (whom `record`'s own early check of the directory lets through).
    limited = ["sh", "-c", 'ulimit -f 64; exec "$0" clean', ARGS.probe]
    cases = [("nt.%p.gmtrace", limited, "cannot reserve")]
    if os.geteuid() == 0:
        cases.append(("/proc/gmt-x/%p.gmtrace", [ARGS.probe, "clean"], "cannot create directory"))
    for template, command, reason in cases:
        r = gmt("record", "-o", template, "--", *command)
        expect(r.returncode == 0, "the command's status", r)
        expect("the recorder could not create its trace at " in r.stderr and reason in r.stderr,
               "says why", r)
        expect("did not call CUDA" not in r.stderr, "not taken for a run without CUDA", r)
        r = gmt("record", "--check", "-o", template, "--", *command)
        expect(r.returncode == 2, "the gate fails", r)
        ours = [l for l in r.stderr.splitlines() if l.startswith("gpumemtrace")]
        expect(len(ours) == 1 and ours[0].startswith("gpumemtrace record --check: the recorder "
                                                     "could not create its trace at ") and
               reason in ours[0], "one line saying why", r)
        expect("nothing to check" not in r.stderr and "passed" not in r.stderr, "no pass", r)
    # One process traced, one not: the traced one is checked, the run still fails.
    r = gmt("record", "--check", "-o", "nt.%p.gmtrace", "--", "sh", "-c",
            '"$0" clean; ulimit -f 64; "$0" clean', ARGS.probe)
    expect(r.returncode == 2 and "gpumemtrace check: passed" in r.stderr, "the gate fails", r)
    expect(r.stderr.rstrip().splitlines()[-1].startswith(
        "gpumemtrace record --check: the recorder could not create its trace at "),
        "the untraced process is the last word", r)
    # The command's own failure still wins.
    r = gmt("record", "--check", "-o", "nt.%p.gmtrace", "--", "sh", "-c",
            'ulimit -f 64; "$0" clean; exit 3', ARGS.probe)
    expect(r.returncode == 3 and "could not create its trace" in r.stderr, "CMD's status", r)
    # No CUDA at all: still nothing to check.
    r = gmt("record", "--check", "-o", "nt.%p.gmtrace", "--", ARGS.probe, "none")
    expect(r.returncode == 0 and "nothing to check" in r.stderr, "no CUDA: nothing to check", r)


def test_record_buffer_size_clamped():
    need_cudasim()
    for f in files_under("bs"):
        os.remove(os.path.join(ARGS.workdir, f))
    r = gmt("record", "--buffer-size", "99999999G", "-o", "bs/%p.gmtrace", "--", ARGS.probe,
            "clean")
    expect(r.returncode == 0, "record", r)
    clamped = [l for l in r.stderr.splitlines() if "clamped to" in l]
    expect(len(clamped) == 1 and clamped[0].startswith("gpumemtrace record: --buffer-size ") and
           "clamped to 256.0 MiB" in clamped[0], "said once, by record", r)
    traces = files_under("bs")
    expect(len(traces) == 1, str(traces), r)
    size = os.path.getsize(os.path.join(ARGS.workdir, traces[0]))
    expect(size < (257 << 20), "a 256 MiB ring, not 2 GiB: %d bytes" % size)


def test_nccl_single():
    need_cudasim()
    r = gmt("record", "-o", "nccl.%p.gmtrace", "--", ARGS.nccl_like, "single")
    expect(r.returncode == 0, "record", r)
    traces = files_under(".")
    traces = [t for t in traces if t.startswith("nccl.")]
    expect(len(traces) == 1, str(traces), r)
    r = gmt("check", *traces)
    expect(r.returncode == 0 and "ok   errors: no errors" in r.stdout, "check passes", r)
    rep = report_json(traces[0])
    s = rep["summary"]
    expect(s["errors"] == 0 and s["leaked_bytes"] == 0, "no errors, no leaks: %s" % s)
    # 4 + 2 MiB created; the buffer mapped again through its own export is not counted twice.
    expect(s["peak_bytes"] == 6 << 20, "peak %d" % s["peak_bytes"])


def test_nccl_ranks():
    need_cudasim()
    host = socket.gethostname()
    r = gmt("record", "-o", "ranks/%h/rank%r.gmtrace", "--", ARGS.nccl_like, "launch")
    expect(r.returncode == 0, "record", r)
    traces = files_under("ranks")
    expect(traces == ["ranks/%s/rank0.gmtrace" % host, "ranks/%s/rank1.gmtrace" % host],
           "one trace per rank, named by rank: %s" % traces, r)
    r = gmt("check", *traces)
    expect(r.returncode == 0 and "invalid" not in r.stdout, "both ranks pass check", r)
    peaks = {}
    for t in traces:
        rep = report_json(t)
        p = rep["processes"][0]
        expect(p["host"] == host and p["errors"] == 0, "process %s" % p)
        peaks[p["rank"]] = rep["summary"]["peak_bytes"]
    # Rank 1 maps rank 0's 8 MiB buffer: rank 0's memory, not rank 1's.
    expect(peaks == {0: 8 << 20, 1: 2 << 20}, "peaks by rank: %s" % peaks)

    # The same job with a leak planted on rank 1, gated in one step.
    r = gmt("record", "--check", "-o", "leaky/rank%r.gmtrace", "--", ARGS.nccl_like, "launch",
            "leak-on-rank1")
    expect(r.returncode == 1, "the gate fails", r)
    expect("ok   pid" in r.stderr and "rank0.gmtrace" in r.stderr, "rank 0 passes", r)
    fails = [l for l in r.stderr.splitlines() if l.startswith("FAIL pid")]
    expect(len(fails) == 1 and "rank1.gmtrace" in fails[0], "rank 1 only fails", r)
    expect("leakOnPurpose" in r.stderr and "1.0 MiB leaked" in r.stderr, "names the leak", r)
    expect("invalid_free" not in r.stderr, "no false errors", r)


def test_record_check():
    need_cudasim()
    r = gmt("record", "--check", "-o", "g1.%p.gmtrace", "--", ARGS.probe, "leak", "2", "4096")
    expect(r.returncode == 1, "a leak fails the one-step gate", r)
    expect("FAIL leaks" in r.stderr and "leak_buffers" in r.stderr, "verdict on stderr", r)
    expect("FAIL" not in r.stdout, "stdout is the command's", r)
    r = gmt("record", "--check", "-o", "g2.%p.gmtrace", "--", ARGS.probe, "clean")
    expect(r.returncode == 0 and "gpumemtrace check: passed" in r.stderr, "clean passes", r)
    r = gmt("record", "--check", "--max-leaked-bytes", "8K", "--junit", "g3.xml", "-o",
            "g3.%p.gmtrace", "--", ARGS.probe, "leak", "2", "4096")
    expect(r.returncode == 0, "within the limit given", r)
    ET.parse(os.path.join(ARGS.workdir, "g3.xml"))
    r = gmt("record", "--check", "--max-leaks", "1", "-o", "g4.%p.gmtrace", "--", ARGS.probe,
            "leak", "2", "4096")
    expect(r.returncode == 1, "--max-leaks 1 exceeded", r)
    # The command's own failure wins over the verdict.
    r = gmt("record", "--check", "-o", "g5.%p.gmtrace", "--", "sh", "-c",
            '"$0" leak 1 4096; exit 3', ARGS.probe)
    expect(r.returncode == 3, "the command's status", r)
    expect("FAIL leaks" in r.stderr, "the verdict is still shown", r)
    r = gmt("record", "--check", "--", ARGS.probe, "none")
    expect(r.returncode == 0 and "nothing to check" in r.stderr, "no trace: nothing to check", r)
    # Check options need --check; a bad suppressions file stops before the run.
    one_line_error(gmt("record", "--max-leaks", "1", "--", "true"))
    before = files_under(".")
    one_line_error(gmt("record", "--check", "--suppressions", "missing.supp", "-o",
                       "g6.%p.gmtrace", "--", ARGS.probe, "clean"))
    expect(files_under(".") == before, "the command did not run")


# ----- growth across iterations ---------------------------------------------------------

def frames_of(stack):
    return [f.get("function", "").split("(")[0] for f in stack]


def test_growth():
    need_cudasim()
    if not os.path.exists(ARGS.training_loop):
        raise Skip("training loop not built: " + ARGS.training_loop)
    expected_source = {"phases": "phase", "nvtx": "phase", "nested": "phase", "none": "pattern"}
    for marks in ["phases", "nvtx", "nested", "none"]:
        for keep in ["keep", "constant"]:
            trace = "g-%s-%s.gmtrace" % (marks, keep)
            r = gmt("record", "-q", "-o", trace, "--", ARGS.training_loop, marks, keep)
            expect(r.returncode == 0, "record " + trace, r)
            report = report_json(trace)
            what = "%s/%s: %s %s" % (marks, keep, report["iterations"], report["growth"])
            it = report["iterations"][0]
            expect(it["source"] == expected_source[marks], "iterations from " + what)
            if marks != "none":
                expect(it["phase"] == "step" and it["boundaries"] == 50, "step x50: " + what)
            if keep == "constant":
                expect(report["growth"] == [] and it["growing_sites"] == 0, "no growth: " + what)
                continue
            expect(len(report["growth"]) == 1, "one growing site: " + what)
            g = report["growth"][0]
            expect(g["bytes_per_iteration"] == 1 << 20 and g["first_iteration"] == 1 and
                   g["growing_iterations"] == 49 and g["confidence"] > 0.95, "1 MiB/step: " + what)
            expect("keep_activation" in frames_of(g["stack"]), "at keep_activation: " + what)
            # Nothing leaks at exit: the loop frees its list at the end.
            expect(report["summary"]["leaked_bytes"] == 0, "no leak at exit: " + what)
    # NVTX ranges became nested phases.
    phases = {" > ".join(p["path"]) for p in report_json("g-nvtx-keep.gmtrace")["phases"]}
    expect(phases == {"step", "step > forward", "step > backward"}, "NVTX phases: %s" % phases)

    # The gate: growth is noted without a limit, fails above one, passes under one.
    r = gmt("check", "g-none-keep.gmtrace")
    expect(r.returncode == 0 and "ok   growth: 1.0 MiB more per iteration from 1 growing site" in r.stdout,
           "check without --max-growth notes it", r)
    r = gmt("check", "g-phases-keep.gmtrace", "--max-growth", "512K")
    expect(r.returncode == 1 and "FAIL growth" in r.stdout and "keep_activation" in r.stdout,
           "--max-growth 512K fails, naming the stack", r)
    r = gmt("check", "g-phases-keep.gmtrace", "--max-growth", "2M")
    expect(r.returncode == 0 and "ok   growth" in r.stdout, "--max-growth 2M passes", r)
    r = gmt("check", "g-phases-constant.gmtrace", "--max-growth", "0")
    expect(r.returncode == 0, "a constant working set passes --max-growth 0", r)
    r = gmt("check", "g-nested-keep.gmtrace", "--max-growth", "0", "--phase", "train")
    expect(r.returncode == 1, "the growth is in phase train", r)
    r = gmt("check", "g-nvtx-keep.gmtrace", "--max-growth", "0", "--iteration", "nosuch")
    expect(r.returncode == 0 and "phase nosuch was never marked" in r.stdout,
           "an --iteration never marked says so", r)
    r = gmt("report", "g-nvtx-keep.gmtrace")
    expect(r.returncode == 0 and "Growth across iterations" in r.stdout and
           "keep_activation" in r.stdout, "the text report shows the growth", r)


# ----- CI formats -------------------------------------------------------------------------

def source_line(path, text):
    """The 1-based line of `path` (under the source root) that contains `text`."""
    with open(os.path.join(ARGS.source_root, path)) as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return number
    fail("%s has no line with %r" % (path, text))


def validate(document, schema_path, draft):
    try:
        import jsonschema
    except ImportError:
        fail("python3-jsonschema is needed (scripts/test.sh installs it: GMT_TEST_PACKAGES)")
    with open(schema_path) as f:
        schema = json.load(f)
    getattr(jsonschema, draft)(schema).validate(document)


def test_ci_formats():
    need_cudasim()
    leaky, _ = record("ci-leaky", "leak", "2", "4096")
    probe = "tests/cli/programs/cli_probe.cpp"
    leak_line = source_line(probe, "check(cudaMalloc(&p, bytes), \"cudaMalloc\");")
    sarif = os.path.join(ARGS.workdir, "out.sarif")
    r = gmt("check", *leaky, "--format", "github", "--source-root", ARGS.source_root,
            "--sarif", sarif)
    expect(r.returncode == 1, "the leak fails", r)
    # GitHub annotations: the leaking file and line, relative to the repository.
    annotations = [l for l in r.stdout.splitlines() if l.startswith("::error ")]
    expect(len(annotations) == 1, "one annotation per leaking site", r)
    expect(annotations[0].startswith("::error file=%s,line=%d,title=gpumemtrace%%3A GPU memory "
                                     "leak::" % (probe, leak_line)), "annotation " + annotations[0])
    expect("leak_buffers" in annotations[0], "the annotation names the function", r)
    # SARIF 2.1.0, valid against the schema the SARIF project publishes.
    if not ARGS.sarif_schema or not os.path.exists(ARGS.sarif_schema):
        fail("the SARIF schema is missing (%r): scripts/test.sh installs it "
             "(gmt_install_npm tests/cli/sarif, scripts/lib/deps.sh)" % ARGS.sarif_schema)
    with open(sarif) as f:
        log = json.load(f)
    validate(log, ARGS.sarif_schema, "Draft4Validator")
    results = log["runs"][0]["results"]
    expect(len(results) == 1 and results[0]["ruleId"] == "gpumemtrace/leak", str(results))
    location = results[0]["locations"][0]["physicalLocation"]
    expect(location["artifactLocation"] == {"uri": probe, "uriBaseId": "SRCROOT"} and
           location["region"]["startLine"] == leak_line, "SARIF location %s" % location)
    expect(any("leak_buffers" in fr["location"]["message"]["text"]
               for fr in results[0]["stacks"][0]["frames"]), "SARIF stack")
    # A clean run: valid SARIF without results.
    clean, _ = record("ci-clean", "clean")
    r = gmt("check", *clean, "--sarif", sarif)
    expect(r.returncode == 0, "clean passes", r)
    with open(sarif) as f:
        log = json.load(f)
    validate(log, ARGS.sarif_schema, "Draft4Validator")
    expect(log["runs"][0]["results"] == [], "no results for a clean run")

    # check --format json follows docs/check.schema.json.
    schema = os.path.join(ARGS.source_root, "docs", "check.schema.json")
    r = gmt("check", *leaky, "--format", "json", "--source-root", ARGS.source_root)
    expect(r.returncode == 1, "json: the leak fails", r)
    verdict = json.loads(r.stdout)
    validate(verdict, schema, "Draft202012Validator")
    leaks = verdict["processes"][0]["checks"][0]
    expect(verdict["passed"] is False and leaks["name"] == "leaks" and leaks["value"] == 8192
           and leaks["findings"][0]["file"] == probe and
           leaks["findings"][0]["line"] == leak_line, "json verdict %s" % leaks)

    # JUnit names are the same from run to run: the command (and rank), no pid.
    names = []
    for run_number in range(2):
        traces, _ = record("ci-junit%d" % run_number, "leak", "1", "4096")
        junit = os.path.join(ARGS.workdir, "junit%d.xml" % run_number)
        gmt("check", *traces, "--junit", junit)
        root = ET.parse(junit).getroot()
        names.append([(s.get("name"), [c.get("classname") for c in s.iter("testcase")])
                      for s in root.iter("testsuite")])
    expect(names[0] == names[1], "JUnit names differ between runs: %s" % names)
    expect(str(names[0]).count("pid") == 0 and "cli_probe leak 1 4096" in str(names[0]),
           "named after the command: %s" % names)


# ----- a job's ranks --------------------------------------------------------------------------

def record_job(folder, leaky_rank):
    """Three ranks of the probe into FOLDER/rankN.gmtrace; one of them leaks."""
    for rank in range(3):
        mode = ["leak", "2", str(1 << 20)] if rank == leaky_rank else ["clean"]
        r = gmt("record", "-q", "-o", folder + "/rank%r.gmtrace", "--", ARGS.probe, *mode,
                extra_env={"RANK": str(rank), "WORLD_SIZE": "3"})
        expect(r.returncode == 0, "record rank %d" % rank, r)


def test_fleet():
    need_cudasim()
    record_job("job1", 1)
    # check over the directory: each rank judged, the table flags rank 1 only.
    for jobs in ["1", "2"]:
        r = gmt("check", "job1", "--jobs", jobs)
        expect(r.returncode == 1, "rank 1 leaks", r)
        expect(r.stdout.count("FAIL pid") == 1 and r.stdout.count("ok   pid") == 2,
               "one failing process of three", r)
        # Rank 1 also peaks higher than the others: it holds its leak and a buffer at once.
        expect("outliers: rank 1 (peak, leaked)" in r.stdout, "rank 1 is the outlier", r)
    rows = [l for l in r.stdout.splitlines() if re.match(r"^\s+[0-2]\s+\S+\s+\d+\s", l)]
    expect(len(rows) == 3 and "!" in rows[1] and "!" not in rows[0] + rows[2],
           "the per-rank table marks rank 1: %s" % rows, r)
    # report over the directory: the same table, in the JSON too.
    report = report_json("job1")
    ranks = report["ranks"]
    expect([row["rank"] for row in ranks] == [0, 1, 2], "ranks %s" % ranks)
    expect([row["outlier"] for row in ranks] == [[], ["peak", "leaked"], []],
           "outliers %s" % ranks)
    expect(all(row["device_peaks"] and row["device_peaks"][0]["peak_bytes"] >= 1 << 20
               for row in ranks), "peaks per device %s" % ranks)
    validate(report, os.path.join(ARGS.source_root, "docs", "report.schema.json"),
             "Draft202012Validator")
    # diff of two jobs: processes matched by rank; only rank 2's leak is new.
    record_job("job2", 2)
    r = gmt("diff", "job1", "job2", "--max-leak-growth", "0", "--format", "json")
    expect(r.returncode == 1, "the new leak on rank 2 breaks the limit", r)
    diff = json.loads(r.stdout)
    validate(diff, os.path.join(ARGS.source_root, "docs", "diff.schema.json"),
             "Draft202012Validator")
    names = [p["name"] for p in diff["pairs"]]
    expect(len(names) == 3 and all(n.startswith("rank %d (" % i) for i, n in enumerate(names)),
           "pairs by rank %s" % names)
    expect(len(diff["violations"]) == 1 and diff["violations"][0].startswith("rank 2 ("),
           "only rank 2 grew: %s" % diff["violations"])
    r = gmt("diff", "job1", "job2")
    expect(r.returncode == 0 and "== rank 1 (" in r.stdout, "diff text per rank", r)


# ----- the pytest plugin -------------------------------------------------------------------

def python_with_pytest():
    """An interpreter that has pytest: this one, or Debian's (python3-pytest)."""
    for python in [sys.executable, "/usr/bin/python3"]:
        if python and subprocess.run([python, "-c", "import pytest"],
                                     capture_output=True).returncode == 0:
            return python
    fail("no python3 with pytest (Debian: python3-pytest, in scripts/lib/deps.sh)")


def pytest_with_plugin(*args):
    """python -m pytest --gpumemtrace ARGS, run in the workdir, where the modules of
    tests/cli/pytest_module are copied."""
    need_cudasim()
    python = python_with_pytest()
    folder = os.path.join(ARGS.source_root, "tests", "cli", "pytest_module")
    for name in os.listdir(folder):
        if name.endswith(".py"):
            shutil.copy(os.path.join(folder, name), ARGS.workdir)
    return [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--gpumemtrace", *args]


def test_pytest_plugin():
    pytest_args = pytest_with_plugin("test_gpu_memory.py", "--junitxml=junit.xml", "-o",
                                     "junit_family=xunit1")
    r = gmt("record", "-q", "-o", "pytest.%p.gmtrace", "--", *pytest_args)
    expect(r.returncode == 1, "pytest fails: two tests fail", r)
    out = r.stdout
    # Exactly those verdicts: the leak, the limit, and nothing else.
    expect("FAILED test_gpu_memory.py::test_leaking" in out, "test_leaking fails", r)
    expect("FAILED test_gpu_memory.py::test_over_limit" in out, "test_over_limit fails", r)
    expect("2 failed, 1 passed" in out, "one test passes", r)
    summary = out[out.index("gpumemtrace: GPU memory per test"):]
    expect("FAIL test_gpu_memory.py::test_leaking: leaked 64.0 MiB" in summary,
           "the summary's leak verdict", r)
    expect("FAIL test_gpu_memory.py::test_over_limit: over limit: 3.0 GiB" in summary,
           "the summary's limit verdict", r)
    expect("ok   test_gpu_memory.py::test_clean: peak +1.0 GiB" in summary,
           "the summary's clean verdict", r)
    # The failing test's report shows the verdict and the allocation stack.
    expect("FAIL leaks: 64.0 MiB leaked in phase test_gpu_memory.py::test_leaking" in out,
           "the leak's verdict in the failure", r)
    expect("allocated at:" in out and "cudaMalloc" not in out.split("allocated at:")[1][:0],
           "the failure lists where it was allocated", r)
    # One short block: the size and the user's line first (the helper that called CUDA,
    # then the test), no pytest or interpreter internals.
    lines = out[out.index("GPU memory verdict of test_gpu_memory.py::test_leaking"):].splitlines()
    end = next((i for i, l in enumerate(lines) if i > 0 and not l.startswith("  ")), len(lines))
    block = "\n".join(lines[:end])
    site = [l.split("allocated at: ")[-1].strip() for l in lines[2:end]]
    expect(re.search(r"64\.0 MiB allocated at: device_buffer at \S*cuda_buffers\.py:\d+$",
                     block.splitlines()[2]) and
           any(re.match(r"test_leaking at \S*test_gpu_memory\.py:\d+$", l) for l in site) and
           not re.search(r"_pytest|pluggy|python3\.\d+\+0x", block) and
           len(block.splitlines()) <= 8,
           "a short block: the size, the user's line, its callers, nothing of pytest:\n" + block, r)
    expect("FAIL peak_increase: 3.0 GiB more device memory at the peak of phase "
           "test_gpu_memory.py::test_over_limit than when it began (limit 2.0 GiB)" in out,
           "the limit's verdict in the failure", r)
    # ... and what held the peak: the test's buffer, at the user's line, then the test.
    lines = out[out.index("GPU memory verdict of test_gpu_memory.py::test_over_limit"):]
    lines = lines.splitlines()
    end = next((i for i, l in enumerate(lines) if i > 0 and not l.startswith("  ")), len(lines))
    block = "\n".join(lines[:end])
    site = [l.split("allocated at: ")[-1].strip() for l in lines[2:end]]
    expect(re.search(r"3\.0 GiB allocated at: device_buffer at \S*cuda_buffers\.py:\d+$",
                     block.splitlines()[2]) and
           any(re.match(r"test_over_limit at \S*test_gpu_memory\.py:\d+$", l) for l in site) and
           not re.search(r"_pytest|pluggy", block),
           "the limit's failure shows what held the peak, the user's line first:\n" + block, r)
    # JUnit, by pytest itself: the failures and the figures as properties.
    cases = {c.get("name"): c for c in ET.parse(os.path.join(ARGS.workdir, "junit.xml"))
             .getroot().iter("testcase")}
    expect(set(cases) == {"test_leaking", "test_over_limit", "test_clean"}, str(cases))
    expect(cases["test_leaking"].find("failure") is not None and
           cases["test_over_limit"].find("failure") is not None and
           cases["test_clean"].find("failure") is None, "JUnit failures")
    props = {p.get("name"): p.get("value") for p in cases["test_leaking"].iter("property")}
    expect(props.get("gpumemtrace_leaked_bytes") == str(64 << 20), "JUnit property %s" % props)

    # The same module without the recorder (the plugin importable, as when installed): a
    # clear warning, no verdicts, the tests pass.
    plugin_env = {"PYTHONPATH": os.path.join(os.path.dirname(ARGS.gpumemtrace), os.pardir,
                                             "lib", "gpumemtrace", "python")}
    r = run(pytest_args, extra_env=plugin_env)
    expect(r.returncode == 0 and "3 passed" in r.stdout, "without the recorder tests pass", r)
    expect("not running under the gpumemtrace recorder" in r.stdout,
           "without the recorder it says so", r)
    r = run(pytest_args + ["--gpumemtrace-require"], extra_env=plugin_env)
    expect(r.returncode == 4 and "not running under the gpumemtrace recorder" in r.stderr,
           "--gpumemtrace-require stops", r)


def pytest_summary(r):
    """The plugin's per-test lines and its count of verdicts, from a pytest run's output."""
    out = r.stdout
    expect("gpumemtrace: GPU memory per test" in out, "the plugin's summary", r)
    lines = out[out.index("gpumemtrace: GPU memory per test"):].splitlines()
    tests = [l for l in lines if l.startswith(("ok   ", "FAIL "))]
    counts = [l for l in lines if l.startswith("verdicts: ")]
    expect(len(counts) == 1, "one line counts the verdicts", r)
    return tests, counts[0]


def test_pytest_fast_path():
    """Tests that record nothing get their verdict from the recorder's count, tests that
    free what they allocate from its accounting, without a `gpumemtrace check`; every other
    test still gets check's: the same verdicts either way."""
    pytest_args = pytest_with_plugin("test_gpu_fast_path.py")
    r = gmt("record", "-q", "-o", "pytest_fast.%p.gmtrace", "--", *pytest_args)
    expect(r.returncode == 1 and "3 failed, 6 passed" in r.stdout, "three tests fail", r)
    tests, counts = pytest_summary(r)
    name = "test_gpu_fast_path.py::"
    expected = [
        "ok   " + name + "test_empty: ok",
        "ok   " + name + "test_empty_marked: peak +0 B",
        "FAIL " + name + "test_leak_kept: leaked 8.0 MiB",
        "ok   " + name + "test_frees_earlier_leak: ok",
        "FAIL " + name + "test_leak_in_nested_phase: leaked 4.0 MiB",
        "FAIL " + name + "test_over_limit: over limit: 16.0 MiB",
        "ok   " + name + "test_clean_allocating: peak +32.0 MiB",
        "ok   " + name + "test_empty_nested_phase: ok",
        "ok   " + name + "test_empty_last: peak +0 B",
    ]
    expect(tests == expected, "the verdicts: %s" % tests, r)
    # The three tests that recorded nothing ran no check, nor the three that freed what they
    # allocated (or allocated nothing: a nested phase); the leaks and the limit one each.
    expect(counts == "verdicts: 6 from the recorder (3 with nothing recorded, 3 from its "
           "accounting of what the test allocated and freed), 3 by gpumemtrace check",
           "checks run: " + counts, r)
    expect("FAIL leaks: 4.0 MiB leaked in phase " + name + "test_leak_in_nested_phase" in
           r.stdout, "the nested phase's leak is the test's", r)

    # Every verdict made by check: the same lines.
    r = gmt("record", "-q", "-o", "pytest_fast.%p.gmtrace", "--", *pytest_args,
            "--gpumemtrace-always-check")
    expect(r.returncode == 1 and "3 failed, 6 passed" in r.stdout, "three tests fail", r)
    checked, counts = pytest_summary(r)
    expect(checked == expected, "check's verdicts: %s" % checked, r)
    expect(counts.startswith("verdicts: 0 from") and counts.endswith(", 9 by gpumemtrace check"),
           "every test checked: " + counts, r)

    # A test id run twice: check judges its occurrences together, so the second is checked.
    twice = pytest_with_plugin("--keep-duplicates", "test_gpu_fast_path.py",
                               "test_gpu_fast_path.py", "-k",
                               "test_empty and not marked and not nested and not last")
    r = gmt("record", "-q", "-o", "pytest_fast.%p.gmtrace", "--", *twice)
    expect(r.returncode == 0 and "2 passed" in r.stdout, "both runs pass", r)
    tests, counts = pytest_summary(r)
    expect(tests == ["ok   " + name + "test_empty: ok"] * 2, "two verdicts: %s" % tests, r)
    expect(counts.startswith("verdicts: 1 from") and counts.endswith(", 1 by gpumemtrace check"),
           "the second occurrence is checked: " + counts, r)

    # Past the analysis's cap on phase names (1000 per process, the rest share one entry),
    # the checked test keeps its own phase: its verdict, not "never marked".
    with open(os.path.join(ARGS.workdir, "test_gpu_many.py"), "w") as f:
        f.write("import pytest\nfrom cuda_buffers import device_buffer, release\n\n")
        for i in range(1001):
            f.write("def test_%04d():\n    pass\n\n" % i)
        f.write("@pytest.mark.gpu_limit_memory('2 MiB')\n"
                "def test_over_limit_last():\n    release(device_buffer(16 << 20))\n")
    many = pytest_with_plugin("test_gpu_many.py")
    r = gmt("record", "-q", "-o", "pytest_fast.%p.gmtrace", "--", *many)
    expect(r.returncode == 1 and "1 failed, 1001 passed" in r.stdout, "the last test fails", r)
    tests, counts = pytest_summary(r)
    expect(tests[-1] == "FAIL test_gpu_many.py::test_over_limit_last: over limit: 16.0 MiB",
           "the 1002nd phase's verdict: " + tests[-1], r)
    expect(counts.startswith("verdicts: 1001 from") and
           counts.endswith(", 1 by gpumemtrace check"), "one check: " + counts, r)


def accounted_and_checked(module, outcome, extra_env=None):
    """The pytest plugin run on MODULE twice, its verdicts from the recorder where it can
    (accounted) and every one from check (checked); each run must end with OUTCOME."""
    pytest_args = pytest_with_plugin(module)
    runs = {}
    for mode in ("accounted", "checked"):
        extra = ["--gpumemtrace-always-check"] if mode == "checked" else []
        r = gmt("record", "-q", "-o", "pytest_accounting.%p.gmtrace", "--", *pytest_args,
                *extra, extra_env=extra_env)
        expect(r.returncode == 1 and outcome in r.stdout, outcome, r)
        runs[mode] = r
    return runs


def same_verdicts_either_way(runs, expected, accounted_counts):
    """Both runs give EXPECTED's lines, the accounted one with ACCOUNTED_COUNTS, and the
    failures read the same, figures and stacks (the traces' names aside)."""
    tests, counts = pytest_summary(runs["accounted"])
    expect(tests == expected, "the verdicts: %s" % tests, runs["accounted"])
    expect(counts == accounted_counts, "the verdicts by route: " + counts, runs["accounted"])
    checked, counts = pytest_summary(runs["checked"])
    expect(checked == expected, "check's verdicts: %s" % checked, runs["checked"])
    expect(counts.endswith(", %d by gpumemtrace check" % len(expected)),
           "all checked: " + counts, runs["checked"])

    def failures(r):
        out = re.sub(r"pytest_accounting\.\d+\.gmtrace", "TRACE", r.stdout)
        start = out.index("= FAILURES =")
        return out[start:out.index("gpumemtrace: GPU memory per test", start)]
    expect(failures(runs["accounted"]) == failures(runs["checked"]),
           "the same failures either way:\n" + failures(runs["accounted"]))


def test_pytest_accounting():
    """Tests that allocate and free get their verdict from the recorder's accounting of their
    phase (allocations of other threads included), and exactly check's: the same lines,
    failures and figures as with --gpumemtrace-always-check; the tests it cannot settle (a
    leak, a peak over its limit, memory an earlier test allocated freed under a limit, a
    site that grows) are checked, with their stacks."""
    runs = accounted_and_checked("test_gpu_accounting.py", "4 failed, 6 passed")
    name = "test_gpu_accounting.py::"
    expected = [
        "ok   " + name + "test_alloc_free: ok",
        "ok   " + name + "test_alloc_free_limited: peak +24.0 MiB",
        "ok   " + name + "test_thread_allocates: peak +48.0 MiB",
        "FAIL " + name + "test_thread_leaks: leaked 2.0 MiB",
        "ok   " + name + "test_frees_earlier: ok",
        "ok   " + name + "test_frees_earlier_limited: peak +0 B",
        "FAIL " + name + "test_over_limit: over limit: 16.0 MiB",
        "FAIL " + name + "test_grows_in_steps: grows 1.0 MiB/iteration",
        "FAIL " + name + "test_leaks: leaked 8.0 MiB",
        "ok   " + name + "test_nested_phase_frees: ok",
    ]
    # The tests that freed what they allocated ran no check.
    same_verdicts_either_way(runs, expected, "verdicts: 5 from the recorder (0 with nothing "
                             "recorded, 5 from its accounting of what the test allocated and "
                             "freed), 5 by gpumemtrace check")
    out = runs["accounted"].stdout
    # A peak over its limit still lists what held it, at the user's line, then the test.
    lines = out[out.index("GPU memory verdict of " + name + "test_over_limit"):].splitlines()
    end = next((i for i, l in enumerate(lines) if i > 0 and not l.startswith("  ")), len(lines))
    block = "\n".join(lines[:end])
    expect(re.search(r"16\.0 MiB allocated at: device_buffer at \S*cuda_buffers\.py:\d+\n.*\n"
                     r"\s+test_over_limit at \S*test_gpu_accounting\.py:\d+$", block),
           "the limit's failure shows what held the peak:\n" + block, runs["accounted"])
    # A thread's leak is the test's, with the thread's stack.
    expect("FAIL leaks: 2.0 MiB leaked in phase " + name + "test_thread_leaks" in out,
           "the thread's allocation counts in the test", runs["accounted"])


def test_pytest_accounting_blocks():
    """PyTorch-style tests, on the stand-in caching allocator: a test whose tensors are all
    freed gets its verdict from the recorder's accounting of the block events, the segments
    the allocator keeps cached being no leak, exactly as check says; a leaked tensor, a peak
    over its limit and a tensor site that grows are checked, with their stacks."""
    if not os.path.exists(os.path.join(ARGS.fake_torch, "lib", "libc10_cuda.so")):
        raise Skip("the stand-in libc10_cuda.so is not built in " + ARGS.fake_torch)
    stand_in = os.path.join(ARGS.source_root, "tests", "frameworks", "programs",
                            "site-packages")
    env = {"FAKE_TORCH": ARGS.fake_torch, "PYTHONPATH": stand_in}
    runs = accounted_and_checked("test_gpu_blocks.py", "3 failed, 6 passed", env)
    name = "test_gpu_blocks.py::"
    expected = [
        "ok   " + name + "test_tensors_freed_segments_cached: ok",
        "ok   " + name + "test_new_segment_limited: peak +32.0 MiB",
        "ok   " + name + "test_cached_segments_reused: peak +0 B",
        "FAIL " + name + "test_tensor_leak: leaked 1.0 MiB",
        "ok   " + name + "test_frees_earlier_tensor: ok",
        "ok   " + name + "test_no_allocations: ok",
        "FAIL " + name + "test_over_limit: over limit: 40.0 MiB",
        "FAIL " + name + "test_tensor_site_grows: grows 256.0 KiB/iteration",
        "ok   " + name + "test_record_stream: ok",
    ]
    same_verdicts_either_way(runs, expected, "verdicts: 6 from the recorder (1 with nothing "
                             "recorded, 5 from its accounting of what the test allocated and "
                             "freed), 3 by gpumemtrace check")
    out = runs["accounted"].stdout
    # The leaked tensor is named at the test's line, not inside the allocator.
    expect(re.search(r"1\.0 MiB allocated at: test_tensor_leak at \S*test_gpu_blocks\.py:\d+",
                     out), "the leaked tensor's line", runs["accounted"])


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True)
    parser.add_argument("--gpumemtrace", required=True)
    parser.add_argument("--probe", required=True)
    parser.add_argument("--nccl-like", default="")
    parser.add_argument("--training-loop", default="")
    parser.add_argument("--source-root", default="")
    parser.add_argument("--sarif-schema", default="")
    parser.add_argument("--cudasim", required=True)
    parser.add_argument("--fake-torch", default="")
    parser.add_argument("--workdir", required=True)
    ARGS = parser.parse_args()
    return run_case(globals(), ARGS)


if __name__ == "__main__":
    sys.exit(main())
