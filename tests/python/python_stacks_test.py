#!/usr/bin/env python3
"""Python stacks end to end: Python programs (tests/python/programs) allocate through
ctypes on the simulated CUDA with libgpumemtrace.so preloaded; the report and the dump of
their traces must name their Python functions, files and lines.

One case per process, as ctest runs them:

    python_stacks_test.py --case NAME --python TRACED_PYTHON --gpumemtrace BIN
                          --preload LIB --cudasim DIR --workdir DIR

Exit 0 pass, 1 fail, 77 skipped (the simulated CUDA or the traced interpreter is missing).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import e2e_case  # noqa: E402
from e2e_case import Skip, expect, run_case  # noqa: E402

ARGS = None
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def marker_lines(program):
    return e2e_case.marker_lines(os.path.join(PROGRAMS, program))


def traced(name, program, *args, env=None):
    """Runs a program under the recorder; returns (result, trace path)."""
    if not os.path.exists(os.path.join(ARGS.cudasim, "libcudart.so.13")):
        raise Skip("simulated CUDA not built in " + ARGS.cudasim)
    if not os.path.exists(ARGS.python):
        raise Skip("no interpreter at " + ARGS.python)
    run_env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUMEMTRACE_", "PYTHON"))}
    # No bytecode caches written next to the programs, in the source tree.
    run_env.update({"LD_PRELOAD": ARGS.preload, "LD_LIBRARY_PATH": ARGS.cudasim,
                    "PYTHONDONTWRITEBYTECODE": "1",
                    "GPUMEMTRACE_OUTPUT": os.path.join(ARGS.workdir, name + ".%p.gmtrace")})
    run_env.update(env or {})
    r = subprocess.run([ARGS.python, os.path.join(PROGRAMS, program), *map(str, args)],
                       capture_output=True, text=True, env=run_env, timeout=900)
    expect(r.returncode == 0, f"{program} exits 0", r)
    traces = [f for f in os.listdir(ARGS.workdir) if f.startswith(name + ".")]
    expect(len(traces) == 1, f"{program} leaves one trace, not {traces}", r)
    return r, os.path.join(ARGS.workdir, traces[0])


def gmt(*args, status=0):
    r = subprocess.run([ARGS.gpumemtrace, *args], capture_output=True, text=True, timeout=600)
    expect(r.returncode == status, "gpumemtrace " + " ".join(args), r)
    return r.stdout


def report(trace, *extra):
    return json.loads(gmt("report", "--format", "json", *extra, trace))


def dump(trace):
    return [json.loads(line) for line in gmt("dump", trace).splitlines() if line.strip()]


def python_frames(stack):
    return [f for f in stack if f.get("language") == "python"]


def described(stack):
    return [(f.get("language", "native"), f["function"], os.path.basename(f["file"]), f["line"])
            for f in stack]


def leak_of(rep, size):
    found = [l for l in rep["leaks"] if l["bytes"] == size and l["allocations"] == 1]
    expect(len(found) == 1, f"one leak of {size} bytes in {[l['bytes'] for l in rep['leaks']]}")
    return found[0]


def interpreter_version():
    r = subprocess.run([ARGS.python, "-c", "import sys; print(sys.hexversion)"],
                       capture_output=True, text=True)
    v = int(r.stdout)
    return f"{v >> 24}.{(v >> 16) & 255}.{(v >> 8) & 255}", (v >> 16) & 255


def expect_python_part(stack, expected, what):
    """The Python frames of `stack` are `expected` [(function, file, line)], in order, and
    native frames come before and after them."""
    got = [(f["function"], os.path.basename(f["file"]), f["line"]) for f in python_frames(stack)]
    expect(got == expected, f"{what}: Python frames {got}, expected {expected}\n"
           f"whole stack: {described(stack)}")
    languages = [f.get("language", "native") for f in stack]
    first = languages.index("python")
    last = len(languages) - 1 - languages[::-1].index("python")
    expect(first > 0 and last < len(stack) - 1,
           f"{what}: native frames before and after the Python ones: {described(stack)}")


# ----- cases ---------------------------------------------------------------------------

def test_leak_stacks():
    """The leak stack reads leak_here / main / <module> with the script's file and exact
    lines, interleaved with the native frames, from the main thread and a worker thread."""
    _, trace = traced("leak", "leak_stacks.py")
    rep = report(trace)
    lines = marker_lines("leak_stacks.py")
    main_leak = leak_of(rep, 1234567)
    expect_python_part(main_leak["stack"],
                       [("leak_here", "leak_stacks.py", lines["alloc"]),
                        ("main", "leak_stacks.py", lines["main_call"]),
                        ("<module>", "leak_stacks.py", lines["module_call"])],
                       "main thread's leak")
    worker = python_frames(leak_of(rep, 7654321)["stack"])
    expect([(f["function"], os.path.basename(f["file"]), f["line"]) for f in worker[:1]] ==
           [("leak_here", "leak_stacks.py", lines["alloc"])], f"worker's leak: {worker}")
    # Below leak_here the threading module runs the thread: Thread.run (3.11+ qualified
    # names; 3.10 has the plain name), each with a line.
    rest = [(f["function"].split(".")[-1], os.path.basename(f["file"])) for f in worker[1:]]
    expect(rest[:1] == [("run", "threading.py")] and all(f["line"] > 0 for f in worker),
           f"worker's leak below leak_here: {described(worker)}")
    expect(all(f.get("language") != "python" for f in rep["peak"]["top_sites"][0]["stack"][:1]),
           "the innermost frame is native (the CUDA call)")
    # Every frame says its language: the native ones too.
    languages = {f.get("language") for f in main_leak["stack"]}
    expect(languages == {"native", "python"}, f"languages in the stack: {languages}")


def test_header():
    """The trace says which interpreter it saw and that its frames were read."""
    _, trace = traced("header", "leak_stacks.py")
    records = dump(trace)
    header = records[0]
    trailer = records[-1]
    version, _ = interpreter_version()
    expect(header["record"] == "header" and header["python_version"] == version,
           f"header python_version {header.get('python_version')} is {version}")
    expect(header["python_status"] == "captured", f"header status {header['python_status']}")
    expect(trailer["record"] == "trailer" and trailer["python_status"] == "captured",
           f"trailer {trailer}")
    process = report(trace)["processes"][0]
    expect(process.get("python") == {"version": version, "status": "captured"},
           f"the report's process says {process.get('python')}")
    codes = [r for r in records if r["record"] == "python_code"]
    names = {r["name"] for r in codes}
    expect({"leak_here", "main", "<module>"} <= names, f"code records {sorted(names)}")
    expect(len(codes) == len({r["id"] for r in codes}), "each code object is written once")


def test_disabled():
    """GPUMEMTRACE_PYTHON=0: the interpreter is named, its frames are not read."""
    _, trace = traced("off", "leak_stacks.py", env={"GPUMEMTRACE_PYTHON": "0"})
    records = dump(trace)
    version, _ = interpreter_version()
    expect(records[0]["python_status"] == "disabled" and records[0]["python_version"] == version,
           f"header {records[0]}")
    expect(not any(r["record"] == "python_code" or "python" in r
                   for r in records if r["record"] in ("stack", "python_code")),
           "no Python frames or code records")
    rep = report(trace)
    expect(not python_frames(leak_of(rep, 1234567)["stack"]), "no Python frame in the report")
    expect(rep["processes"][0]["python"]["status"] == "disabled", "the report says why")
    text = gmt("report", "--format", "text", trace)
    expect("Python frames not recorded (GPUMEMTRACE_PYTHON=0)" in text, "the text says why:\n" + text)


def test_record_no_python():
    """`gpumemtrace record --no-python` is GPUMEMTRACE_PYTHON=0; without it, frames are read."""
    if not os.path.exists(os.path.join(ARGS.cudasim, "libcudart.so.13")):
        raise Skip("simulated CUDA not built in " + ARGS.cudasim)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUMEMTRACE_", "PYTHON"))}
    env["LD_LIBRARY_PATH"] = ARGS.cudasim
    for flag, status in ((["--no-python"], "disabled"), ([], "captured")):
        out = os.path.join(ARGS.workdir, f"rec{len(flag)}.%p.gmtrace")
        r = subprocess.run([ARGS.gpumemtrace, "record", "-q", "-o", out, *flag, "--", ARGS.python,
                            os.path.join(PROGRAMS, "leak_stacks.py")],
                           capture_output=True, text=True, env=env, timeout=300)
        expect(r.returncode == 0, "record " + " ".join(flag), r)
        traces = [f for f in os.listdir(ARGS.workdir) if f.startswith(f"rec{len(flag)}.")]
        expect(len(traces) == 1, f"one trace: {traces}", r)
        header = dump(os.path.join(ARGS.workdir, traces[0]))[0]
        expect(header["python_status"] == status, f"record {flag}: header {header}")


def test_python_frames_alone():
    """GPUMEMTRACE_STACK_DEPTH=0 leaves native frames out; the Python frames stay."""
    _, trace = traced("pyonly", "leak_stacks.py", env={"GPUMEMTRACE_STACK_DEPTH": "0"})
    lines = marker_lines("leak_stacks.py")
    stack = leak_of(report(trace), 1234567)["stack"]
    expect(described(stack) == [("python", "leak_here", "leak_stacks.py", lines["alloc"]),
                                ("python", "main", "leak_stacks.py", lines["main_call"]),
                                ("python", "<module>", "leak_stacks.py", lines["module_call"])],
           f"stack {described(stack)}")


def test_text_report():
    """The text report (through a pipe) shows the Python frames with file:line."""
    _, trace = traced("text", "leak_stacks.py")
    text = gmt("report", "--format", "text", trace)
    version, _ = interpreter_version()
    expect(f"CPython {version}: Python frames recorded" in text, "the process line says so")
    lines = marker_lines("leak_stacks.py")
    for function, key in (("leak_here", "alloc"), ("main", "main_call")):
        expect(re.search(rf"\n +{function} at /\S*/leak_stacks\.py:{lines[key]}\n", text),
               f"{function} at leak_stacks.py:{lines[key]} in the text report:\n{text}")
    # Own code first: the leaking line, how it reached CUDA (libffi, for ctypes), then its
    # callers; --frames limits native frames only, so every Python frame is there.
    text = gmt("report", "--format", "text", "--frames", "1", trace)
    stack = leak_text(text, "1.18 MiB")
    expect(stack[0] == f"leak_here at {PROGRAMS}/leak_stacks.py:{lines['alloc']}" and
           re.fullmatch(r"via libffi\.so\.\d+", stack[1]),
           f"the leaking line first, then how it reached CUDA: {stack}")
    expect([l for l in stack if " at /" in l] == [
        f"leak_here at {PROGRAMS}/leak_stacks.py:{lines['alloc']}",
        f"main at {PROGRAMS}/leak_stacks.py:{lines['main_call']}",
        f"<module> at {PROGRAMS}/leak_stacks.py:{lines['module_call']}"],
           f"every Python frame with --frames 1: {stack}")
    expect(not any("libffi" in l or "_ctypes" in l for l in stack[2:]),
           f"no library frame shown past the via line: {stack}")


def test_check_suppressions():
    """`check` fails on the leaks, shows their Python lines, and a suppression by Python file
    (leak:FILE:*) or by Python function covers them."""
    _, trace = traced("check", "leak_stacks.py")
    lines = marker_lines("leak_stacks.py")
    r = subprocess.run([ARGS.gpumemtrace, "check", trace], capture_output=True, text=True)
    expect(r.returncode == 1, "check fails on the leaks", r)
    expect(f"leak_here at {PROGRAMS}/leak_stacks.py:{lines['alloc']}" in r.stdout + r.stderr,
           "check shows leak_here with its line", r)
    # Own code first in SARIF and JUnit too: each leak's location is the leaking line
    # (through ctypes, from a function another calls), never libffi's frame.
    sarif, junit = (os.path.join(ARGS.workdir, n) for n in ("check.sarif", "check.xml"))
    subprocess.run([ARGS.gpumemtrace, "check", trace, "--sarif", sarif, "--junit", junit],
                   capture_output=True, text=True)
    with open(sarif) as f:
        results = json.load(f)["runs"][0]["results"]
    leaks = [x for x in results if "leak" in x["ruleId"].lower()]
    places = [(x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
               x["locations"][0]["physicalLocation"]["region"]["startLine"]) for x in leaks]
    expect(len(places) == 2 and all(uri.endswith("leak_stacks.py") and line == lines["alloc"]
                                    for uri, line in places),
           f"SARIF places both leaks at leak_stacks.py:{lines['alloc']}: {places}")
    xml = "\n".join(f.text or "" for f in ET.parse(junit).getroot().iter("failure"))
    first = re.findall(r"allocated at:\s*\n\s*(\S+ at \S+)", xml)
    expect(first and all(l == f"leak_here at {PROGRAMS}/leak_stacks.py:{lines['alloc']}"
                         for l in first),
           f"JUnit: each stack begins with the leaking line: {first}\n{xml[:2000]}")
    for pattern in ("leak:leak_stacks.py:*", f"leak:leak_stacks.py:{lines['alloc']}",
                    "leak:leak_here"):
        supp = os.path.join(ARGS.workdir, "s.supp")
        with open(supp, "w") as f:
            f.write(pattern + "\n")
        r = subprocess.run([ARGS.gpumemtrace, "check", trace, "--suppressions", supp],
                           capture_output=True, text=True)
        expect(r.returncode == 0, f"{pattern} suppresses both leaks", r)
    with open(supp, "w") as f:
        f.write("leak:other.py:*\n")
    r = subprocess.run([ARGS.gpumemtrace, "check", trace, "--suppressions", supp],
                       capture_output=True, text=True)
    expect(r.returncode == 1, "a pattern for another file suppresses nothing", r)


def leak_text(text, size):
    """The stack lines under the first leak line of `size` in a text report or check output,
    stripped."""
    out, inside = [], False
    for line in text.splitlines():
        if inside:
            if not line.startswith("      "):
                break
            out.append(line.strip())
        elif re.match(rf" +(#\d+ )?{re.escape(size)} in 1 allocation", line):
            inside = True
    expect(out, f"a leak of {size} with a stack in:\n{text}")
    return out


def test_python_only():
    """report/check --python-only: of the native frames only the one that called CUDA (here
    libffi's, for ctypes), then the Python frames; the native frames left out are counted."""
    _, trace = traced("pyonly", "leak_stacks.py")
    lines = marker_lines("leak_stacks.py")
    rep = report(trace)
    native = leak_of(rep, 1234567)["stack"]
    caller = [f for f in native if f["language"] == "native"][0]
    expected_caller = caller["function"] or re.sub(r".*/", "", caller["module"])
    py = [f"leak_here at {PROGRAMS}/leak_stacks.py:{lines['alloc']}",
          f"main at {PROGRAMS}/leak_stacks.py:{lines['main_call']}",
          f"<module> at {PROGRAMS}/leak_stacks.py:{lines['module_call']}"]
    # (report and check round sizes differently)
    outputs = {"report": (gmt("report", "--python-only", trace), "1.18 MiB"),
               "check": (gmt("check", "--python-only", trace, status=1), "1.2 MiB")}
    for command, (text, size) in outputs.items():
        stack = leak_text(text, size)
        # Counts of native frames left out: between the shown frames (3.10 runs each Python
        # frame in its own evaluation call, so native frames lie between them too), and
        # after the last one.
        counts = [l for l in stack if l.startswith("... ")]
        expect(stack[0].startswith(expected_caller) and
               [l for l in stack if not l.startswith("... ")] == stack[:1] + py and
               all(re.fullmatch(r"\.\.\. \d+ native frames?", l) for l in counts[:-1]) and
               re.fullmatch(r"\.\.\. \d+ more frames?", stack[-1]) and
               stack[1] == counts[0],
               f"{command} --python-only: the caller {expected_caller}, the Python frames, "
               f"counts of what is left out: {stack}")
    # Without it, own code first: the leaking line, the via line, the Python callers;
    # with --full-stacks every frame.
    default = leak_text(gmt("report", trace), "1.18 MiB")
    expect([l for l in default if not l.startswith(("...", "via "))] == py,
           f"default stack: {default}")
    full = leak_text(gmt("report", "--full-stacks", trace), "1.18 MiB")
    expect(len([l for l in full if not l.startswith("...")]) > 4 and
           full[0] != py[0], f"--full-stacks stack, as recorded: {full}")
    # JSON keeps every frame whatever the text options.
    expect(report(trace, "--python-only") == report(trace), "JSON unchanged by --python-only")


def test_diff():
    """diff matches leak sites across runs by their Python frames' functions and files, and
    names a site by its Python line."""
    _, base = traced("base", "leak_stacks.py", 1)
    _, now = traced("now", "leak_stacks.py", 3)
    lines = marker_lines("leak_stacks.py")
    saved = os.path.join(ARGS.workdir, "base.json")
    gmt("report", "-o", saved, base)
    out = gmt("diff", saved, now)
    sites = out.split("leaked bytes (total, then sites that changed)\n")[1].split("counts\n")[0]
    rows = sites.splitlines()[1:]  # after the total
    # The main thread's site grew from one allocation to three, matched across the runs by
    # its frames; the worker's stayed the same, so it is not listed.
    # Named by its own line, nothing else.
    label = f"leak_here at {PROGRAMS}/leak_stacks.py:{lines['alloc']}"
    expect(len(rows) == 1 and rows[0].split()[:6] == ["1.2", "MiB", "3.5", "MiB", "+2.4", "MiB"]
           and rows[0].rstrip().endswith(label), f"one site, the main thread's, grew:\n{out}")


def test_record_summary():
    """`record`'s summary says which CPython ran and that its frames were recorded."""
    if not os.path.exists(os.path.join(ARGS.cudasim, "libcudart.so.13")):
        raise Skip("simulated CUDA not built in " + ARGS.cudasim)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUMEMTRACE_", "PYTHON"))}
    env.update({"LD_LIBRARY_PATH": ARGS.cudasim, "PYTHONDONTWRITEBYTECODE": "1"})
    version, _ = interpreter_version()
    for flag, said in (([], "Python frames recorded"),
                       (["--no-python"], "Python frames not recorded (GPUMEMTRACE_PYTHON=0)")):
        r = subprocess.run([ARGS.gpumemtrace, "record", "-o",
                            os.path.join(ARGS.workdir, "summary.%p.gmtrace"), *flag, "--",
                            ARGS.python, os.path.join(PROGRAMS, "leak_stacks.py")],
                           capture_output=True, text=True, env=env, timeout=300)
        expect(r.returncode == 0, "record " + " ".join(flag), r)
        expect(f"gpumemtrace:   CPython {version}: {said}\n" in r.stderr,
               f"record {flag}: the summary says so", r)


def test_check_note():
    """check says why a CPython process's stacks have no Python frames."""
    _, trace = traced("note", "leak_stacks.py", env={"GPUMEMTRACE_PYTHON": "0"})
    version, _ = interpreter_version()
    out = gmt("check", trace, status=1)
    expect(f"note: CPython {version}: Python frames not recorded (GPUMEMTRACE_PYTHON=0)" in out,
           "check's note:\n" + out)
    _, trace = traced("captured", "leak_stacks.py")
    expect("note: CPython" not in gmt("check", trace, status=1), "no note when they were")


def test_gil_stress():
    """100 000 allocations through ctypes, which releases the GIL around each, while another
    thread runs Python: the program ends normally and every event names its own frames."""
    pairs = 100000
    r, trace = traced("stress", "gil_stress.py", pairs)
    expect(r.stdout.strip() == "2", "the program finished its work", r)
    lines = marker_lines("gil_stress.py")
    rep = report(trace)
    records = dump(trace)
    stacks = {s["id"]: s for s in records if s["record"] == "stack"}
    codes = {c["id"]: c for c in records if c["record"] == "python_code"}

    def python_of(event):
        return [(f["code"], f["instruction"]) for f in stacks[event["stack"]].get("python", [])]

    # The two kept buffers: the report gives their lines; the dump, their Python frames.
    reference = {}
    for size, function, key in ((100999, "alloc_a", "alloc_a"), (200999, "alloc_b", "alloc_b")):
        leak = leak_of(rep, size)
        frames = python_frames(leak["stack"])
        expect([(f["function"], f["line"] if f["function"] == function else 0)
                for f in frames] == [("malloc", 0), (function, lines[key]), ("main", 0),
                                     ("<module>", 0)],
               f"{function}'s leak: {described(frames)}")
        reference[function] = python_of({"stack": leak["stack_id"]})
    events = [r for r in records if r["record"] == "event"]
    allocs = [e for e in events if e["event"] == "alloc"]
    frees = [e for e in events if e["event"] == "free"]
    expect(len(allocs) == pairs + 2 and len(frees) == pairs,
           f"{len(allocs)} allocations and {len(frees)} frees recorded")
    # The kept buffers were allocated from another line of main(): below alloc_a/alloc_b only
    # the functions must agree.
    wrong = []
    for e in allocs:
        want = reference["alloc_a" if e["size"] < 200000 else "alloc_b"]
        got = python_of(e)
        if got[:2] != want[:2] or [c for c, _ in got[2:]] != [c for c, _ in want[2:]]:
            wrong.append(e)
    free_frames = {tuple(python_of(e)) for e in frees}
    expect(not wrong, f"{len(wrong)} allocations name other frames than their function's, "
           f"e.g. {wrong[:1]} with {[python_of(e) for e in wrong[:1]]} vs {reference}")
    expect(len(free_frames) == 1, f"every free names the same frames: {len(free_frames)} kinds")
    names = [codes[c]["name"] for c, _ in next(iter(free_frames))]
    expect(names == ["free", "release", "main", "<module>"], f"free's frames {names}")


def test_code_reuse():
    """Code objects freed and their memory taken by others never lend their names or lines
    to the new ones."""
    rounds = 200
    r, trace = traced("reuse", "code_reuse.py", rounds)
    info = json.loads(r.stdout.strip().splitlines()[-1])
    expect(info["reused"] > 0, "some code object took a freed one's address (else this test "
           "proves nothing): " + r.stdout)
    rep = report(trace, "--top", str(rounds))
    variants = info["variants"]
    # A variant's allocations may fall in more than one leak group (the first call of a
    # function can take another native path than the next ones); each group is one variant.
    allocations = [0] * variants
    for leak in rep["leaks"]:
        per_round = leak["bytes"] // leak["allocations"]
        variant = per_round // 1000 - 1
        expect(leak["bytes"] == leak["allocations"] * 1000 * (variant + 1) and
               0 <= variant < variants,
               f"group of {leak['allocations']} allocations, {leak['bytes']} bytes: one variant")
        allocations[variant] += leak["allocations"]
        generated = [f for f in python_frames(leak["stack"]) if f["function"] == "generated"]
        expect(len(generated) == 1 and generated[0]["file"] == "<generated>" and
               generated[0]["line"] == 2 + variant,
               f"variant {variant} allocates on line {2 + variant}: {described(generated)}")
    expect(allocations == [rounds // variants] * variants, f"allocations per variant {allocations}")


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    for option in ("case", "python", "gpumemtrace", "preload", "cudasim", "workdir"):
        parser.add_argument("--" + option, required=True)
    ARGS = parser.parse_args()
    return run_case(globals(), ARGS)


if __name__ == "__main__":
    sys.exit(main())
