"""The release packages as a user gets them (tests/package/CMakeLists.txt): the wheel
installed into a fresh virtual environment with nothing else, the .deb unpacked into an empty
root, each running gpumemtrace on the simulated CUDA.

  --case wheel: `python3 -m venv --system-site-packages` (only for the system's pytest, which
  the plugin's test needs; pip installs nothing but the wheel, with --no-index), then the
  command, `import gpumemtrace`, `python -m gpumemtrace`, the pytest plugin listed in
  `pytest --help`, a leaking ctypes test failing under `pytest --gpumemtrace`, what the
  plugin says without the recorder, and `gpumemtrace.load` of the trace.
  --case deb: `dpkg-deb -x` of both packages into an empty root, then `gpumemtrace --version`,
  the man page and completion, and a record + report from that root.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

ARGS = None

LEAKING_TEST = '''
import ctypes

import pytest

cudart = ctypes.CDLL("libcudart.so.13")  # the simulated CUDA, through LD_LIBRARY_PATH
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
KEPT = []


@pytest.mark.gpu_no_leaks
def test_leaking():
    pointer = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(pointer), 64 << 20) == 0
    KEPT.append(pointer)
'''

LEAKING_PROGRAM = '''
import ctypes
cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
pointer = ctypes.c_void_p()
assert cudart.cudaMalloc(ctypes.byref(pointer), 32 << 20) == 0
'''


def fail(message, run=None):
    if run is not None:
        message += "\n$ %s\nexit %d\n--- stdout\n%s\n--- stderr\n%s" % (
            " ".join(run.args), run.returncode, run.stdout, run.stderr)
    print("FAIL: " + message)
    sys.exit(1)


def expect(condition, message, run=None):
    if not condition:
        fail(message, run)


def run(args, env=None, **kwargs):
    full = dict(os.environ)
    full.pop("PYTHONPATH", None)
    full.update(env or {})
    return subprocess.run(args, capture_output=True, text=True, env=full,
                          cwd=ARGS.workdir, **kwargs)


def one(pattern):
    found = glob.glob(os.path.join(ARGS.dist, pattern))
    expect(len(found) == 1, "one %s in %s: %s" % (pattern, ARGS.dist, found))
    return found[0]


def simulated():
    return {"LD_LIBRARY_PATH": ARGS.cudasim}


def test_wheel():
    wheel = one("gpumemtrace-*-py3-none-*.whl")
    expect(run([sys.executable, "-c", "import pytest"]).returncode == 0,
           "%s has pytest (Debian: python3-pytest, in scripts/lib/deps.sh)" % sys.executable)
    venv = os.path.join(ARGS.workdir, "venv")
    r = run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    expect(r.returncode == 0, "venv created", r)
    bin_dir = os.path.join(venv, "bin")
    python = os.path.join(bin_dir, "python")
    r = run([python, "-m", "pip", "install", "-q", "--no-index", wheel])
    expect(r.returncode == 0, "pip install --no-index of the wheel", r)
    path_env = {"PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}

    r = run(["gpumemtrace", "--version"], env=path_env)
    expect(r.returncode == 0 and r.stdout.strip(), "gpumemtrace --version on PATH", r)
    expect(shutil.which("gpumemtrace", path=path_env["PATH"]).startswith(bin_dir),
           "the venv's gpumemtrace is the one run")
    r = run([python, "-c", "import gpumemtrace; print(gpumemtrace.__version__)"])
    expect(r.returncode == 0 and r.stdout.strip() != "unknown", "import gpumemtrace", r)
    r2 = run([python, "-m", "gpumemtrace", "--version"])
    expect(r2.returncode == 0 and r2.stdout.strip().endswith(r.stdout.strip()),
           "python -m gpumemtrace runs the CLI of the package's version", r2)
    r = run([python, "-m", "pytest", "--help"])
    expect(r.returncode == 0 and "--gpumemtrace" in r.stdout,
           "pytest --help lists the plugin's options (pytest11 entry point)", r)

    with open(os.path.join(ARGS.workdir, "test_leak.py"), "w") as f:
        f.write(LEAKING_TEST)
    pytest_args = [python, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--gpumemtrace",
                   "test_leak.py"]
    r = run(["gpumemtrace", "record", "-q", "-o", "leak.%p.gmtrace", "--", *pytest_args],
            env={**path_env, **simulated()})
    expect(r.returncode == 1 and "FAILED test_leak.py::test_leaking" in r.stdout,
           "the leaking test fails under pytest --gpumemtrace", r)
    expect("FAIL leaks: 64.0 MiB leaked in phase test_leak.py::test_leaking" in r.stdout,
           "with the leak's verdict", r)
    # Without the recorder: it says exactly what to run.
    r = run(pytest_args, env={**path_env, **simulated()})
    expect(r.returncode == 0 and "not running under the gpumemtrace recorder" in r.stdout,
           "without the recorder it says so", r)
    expect("Run: gpumemtrace record -- " in r.stdout and "--gpumemtrace test_leak.py" in
           r.stdout, "and what to run", r)

    traces = glob.glob(os.path.join(ARGS.workdir, "leak.*.gmtrace"))
    expect(len(traces) == 1, "one trace: %s" % traces)
    script = ("import gpumemtrace, sys\n"
              "report = gpumemtrace.load(sys.argv[1])\n"
              "print(report.summary.leaked_bytes, report['schema_version'])\n"
              "print('<html' in report._repr_html_().lower())\n")
    r = run([python, "-c", script, traces[0]])
    expect(r.returncode == 0 and r.stdout.split() == [str(64 << 20), "1", "True"],
           "gpumemtrace.load: the leak, the schema version, the HTML page", r)
    saved = os.path.join(ARGS.workdir, "report.json")
    r = run(["gpumemtrace", "report", traces[0], "--format", "json", "-o", saved],
            env=path_env)
    expect(r.returncode == 0, "report saved as JSON", r)
    r = run([python, "-c", script.replace("'<html' in ", "'<pre>' in "), saved])
    expect(r.returncode == 0 and r.stdout.split() == [str(64 << 20), "1", "True"],
           "gpumemtrace.load of saved JSON", r)


def test_deb():
    root = os.path.join(ARGS.workdir, "root")
    for deb in (one("gpumemtrace_*.deb"), one("gpumemtrace-cudasim_*.deb")):
        r = run(["dpkg-deb", "-x", deb, root])
        expect(r.returncode == 0, "dpkg-deb -x " + deb, r)
    cli = os.path.join(root, "usr", "bin", "gpumemtrace")
    r = run([cli, "--version"])
    expect(r.returncode == 0 and r.stdout.strip(), "gpumemtrace --version from the root", r)
    for path in ("usr/share/man/man1/gpumemtrace.1", "usr/share/bash-completion/completions/"
                 "gpumemtrace", "usr/share/doc/gpumemtrace/LICENSE",
                 "usr/include/gpumemtrace.h", "usr/lib/cmake/gpumemtrace/gpumemtraceConfig.cmake"):
        expect(os.path.isfile(os.path.join(root, path)), "the package has /" + path)
    r = run(["file", "-L", cli, os.path.join(root, "usr", "lib", "libgpumemtrace.so")])
    expect(r.returncode != 0 or r.stdout.count("not stripped") == 0, "stripped binaries", r)

    with open(os.path.join(ARGS.workdir, "leak.py"), "w") as f:
        f.write(LEAKING_PROGRAM)
    cudasim = os.path.join(root, "usr", "lib", "gpumemtrace", "cudasim")
    r = run([cli, "record", "-q", "-o", "deb.%p.gmtrace", "--", sys.executable, "leak.py"],
            env={"LD_LIBRARY_PATH": cudasim})
    expect(r.returncode == 0, "record from the unpacked root", r)
    traces = glob.glob(os.path.join(ARGS.workdir, "deb.*.gmtrace"))
    expect(len(traces) == 1, "one trace: %s" % traces)
    r = run([cli, "report", traces[0], "--format", "json"])
    expect(r.returncode == 0 and json.loads(r.stdout)["summary"]["leaked_bytes"] == 32 << 20,
           "report from the unpacked root: the leak", r)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=["wheel", "deb"], required=True)
    parser.add_argument("--dist", required=True)
    parser.add_argument("--cudasim", required=True)
    parser.add_argument("--workdir", required=True)
    ARGS = parser.parse_args()
    if not glob.glob(os.path.join(ARGS.dist, "*")):
        print("SKIP: no packages in %s (package.build did not make them)" % ARGS.dist)
        sys.exit(77)
    shutil.rmtree(ARGS.workdir, ignore_errors=True)
    os.makedirs(ARGS.workdir)
    {"wheel": test_wheel, "deb": test_deb}[ARGS.case]()
    print("ok")


if __name__ == "__main__":
    main()
