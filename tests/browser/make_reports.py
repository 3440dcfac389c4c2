#!/usr/bin/env python3
"""The reports the browser tests load: programs recorded on the simulated CUDA, then their
HTML reports (and, to compare with, their JSON reports and event dumps).

    make_reports.py --gpumemtrace BIN --cudasim DIR --samples DIR --readme README.md
                    --cuda-root DIR --training-loop BIN --nccl-like BIN --python BIN
                    --torch-like PY --fake-c10-cuda LIB --crafted-traces BIN --out DIR

Writes into OUT, for each NAME: NAME.html, NAME.json, NAME.dump (gpumemtrace dump of its
traces), for some NAME.whatif.json (gpumemtrace whatif of its traces), and manifest.json
listing them. The README tour's program is built from the
README with its own build line (tests/cli/readme_tour.py) and recorded with
`record --html`, so that option is what produces its page. The PyTorch stand-in's runs
(tests/frameworks/programs/torch_like.py on tests/frameworks/fake_c10_cuda.cpp) also keep
what the program's allocator said of itself, NAME.stats.json. tests/browser/programs/
step_leak.py leaks through ctypes, step by step, until its small device is out of memory.
Exit 0, 1 on failure, 77
when the simulated CUDA is not built.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
import readme_tour  # noqa: E402  (the tour's program and build line, read as that test reads them)

SKIP = 77


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def run(args, cwd, env, check=True):
    r = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        fail("`%s` exited %d:\n%s%s" % (" ".join(args), r.returncode, r.stdout, r.stderr))
    return r


def main():
    p = argparse.ArgumentParser()
    for name in ("--gpumemtrace", "--cudasim", "--samples", "--readme", "--cuda-root",
                 "--training-loop", "--nccl-like", "--python", "--torch-like", "--fake-c10-cuda",
                 "--crafted-traces", "--out"):
        p.add_argument(name, required=True)
    a = p.parse_args()
    gmt = os.path.abspath(a.gpumemtrace)
    if not os.path.exists(os.path.join(a.cudasim, "libcudart.so.13")):
        print("SKIP: simulated CUDA not built in " + a.cudasim)
        return SKIP
    out = os.path.abspath(a.out)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = os.path.abspath(a.cudasim)
    for name in ("LD_PRELOAD", "GPUMEMTRACE_OUTPUT", "NO_COLOR", "COLUMNS", "NVTX_INJECTION64_PATH"):
        env.pop(name, None)

    manifest = {}

    # `dump` prints an incomplete trace's records too, and exits 1 (docs/trace-format.md).
    def reports(name, traces, incomplete=False):
        run([gmt, "report", "--format", "json", "-o", name + ".json"] + traces, out, env)
        with open(os.path.join(out, name + ".dump"), "w") as f:
            for t in traces:
                r = run([gmt, "dump", t], out, env, check=not incomplete)
                if incomplete and (r.returncode != 1 or "incomplete trace" not in r.stderr):
                    fail("`gpumemtrace dump %s` should say the trace is incomplete and exit 1;"
                         " it exited %d:\n%s" % (t, r.returncode, r.stderr))
                f.write(r.stdout)
        manifest[name] = {"html": os.path.join(out, name + ".html"),
                          "json": os.path.join(out, name + ".json"),
                          "dump": os.path.join(out, name + ".dump"),
                          "traces": [os.path.join(out, t) for t in traces]}

    # What `gpumemtrace whatif` says of the same traces, for the page's What if section.
    def whatif(name, traces):
        run([gmt, "whatif", "--format", "json", "-o", name + ".whatif.json"] + traces, out, env)
        manifest[name]["whatif"] = os.path.join(out, name + ".whatif.json")

    # The README tour: its train.cpp, its build line, recorded with --html.
    with open(a.readme, encoding="utf-8") as f:
        section = readme_tour.tour_section(f.read())
    with open(os.path.join(out, "train.cpp"), "w") as f:
        f.write(readme_tour.program(section))
    build = readme_tour.build_line(section).replace("/usr/local/cuda", a.cuda_root)
    r = subprocess.run(build, shell=True, cwd=out, env=env, capture_output=True, text=True,
                       timeout=300)
    if r.returncode != 0:
        fail("the README's build line failed: %s\n%s" % (build, r.stderr))
    run([gmt, "record", "--html", "-o", "tour.%p.gmtrace", "--", "./train"], out, env)
    traces = sorted(os.path.basename(t) for t in glob.glob(os.path.join(out, "tour.*.gmtrace")))
    if len(traces) != 1:
        fail("expected one trace of the tour, found %s" % traces)
    page = traces[0][: -len(".gmtrace")] + ".html"
    if not os.path.exists(os.path.join(out, page)):
        fail("record --html wrote no " + page)
    shutil.copy(os.path.join(out, page), os.path.join(out, "tour.html"))
    reports("tour", traces)

    # Samples: an out-of-memory, holes, pools, VMM.
    for sample in ("oom", "fragmentation", "stream_pool", "vmm"):
        run([gmt, "record", "-q", "-o", sample + ".%p.gmtrace", "--",
             os.path.join(os.path.abspath(a.samples), sample)], out, env)
        traces = sorted(os.path.basename(t)
                        for t in glob.glob(os.path.join(out, sample + ".*.gmtrace")))
        run([gmt, "report", "--format", "html", "-o", sample + ".html"] + traces, out, env)
        reports(sample, traces)
        if sample == "oom":
            whatif(sample, traces)

    # Nested phases: tests/cli/programs/training_loop.cpp's NVTX ranges ("step", with
    # "forward" and "backward" inside it), which `record` makes phases; each step keeps a
    # 1 MiB buffer, so the steps are iterations that grow.
    run([gmt, "record", "-q", "-o", "phases.%p.gmtrace", "--",
         os.path.abspath(a.training_loop), "nvtx", "keep", "6"], out, env)
    traces = sorted(os.path.basename(t) for t in glob.glob(os.path.join(out, "phases.*.gmtrace")))
    run([gmt, "report", "--format", "html", "-o", "phases.html"] + traces, out, env)
    reports("phases", traces)

    # A job of two ranks (tests/cli/programs/nccl_like.cpp: NCCL's VMM buffers shared
    # between them, 1 MiB leaked on rank 1 only), one trace per rank.
    run([gmt, "record", "-q", "-o", "ranks.rank%r.gmtrace", "--",
         os.path.abspath(a.nccl_like), "launch", "leak-on-rank1"], out, env)
    traces = sorted(os.path.basename(t) for t in glob.glob(os.path.join(out, "ranks.rank*.gmtrace")))
    if traces != ["ranks.rank0.gmtrace", "ranks.rank1.gmtrace"]:
        fail("expected one trace per rank, found %s" % traces)
    run([gmt, "report", "--format", "html", "-o", "ranks.html"] + traces, out, env)
    reports("ranks", traces)

    # Several processes in one report: the tour and the out-of-memory run.
    multi = manifest["tour"]["traces"] + manifest["oom"]["traces"]
    multi = [os.path.basename(t) for t in multi]
    run([gmt, "report", "-o", "multi.html"] + multi, out, env)  # the format from the name
    reports("multi", multi)

    # The tensor level: torch_like.py's training run (its caching allocator keeps its
    # segments to the end; the model's blocks are freed by the interpreter at exit) and its
    # out-of-memory run (fragmentation inside segments) on a 256 MiB device, with the
    # stand-in libc10_cuda.so laid out as in a wheel (torch/lib beside torch/version.py).
    torch_env = dict(env)
    torch_env["FAKE_TORCH"] = os.path.dirname(os.path.dirname(os.path.abspath(a.fake_c10_cuda)))
    torch_env["PYTHONDONTWRITEBYTECODE"] = "1"
    for name, scenario, extra in (("torch_train", "train", {}),
                                  ("torch_oom", "oom", {"CUDASIM_MEMORY_BYTES": str(256 << 20)})):
        run_env = dict(torch_env, **extra)
        run([gmt, "record", "-q", "-o", name + ".%p.gmtrace", "--", a.python,
             os.path.abspath(a.torch_like), scenario, name + ".stats.json"], out, run_env)
        traces = sorted(os.path.basename(t)
                        for t in glob.glob(os.path.join(out, name + ".*.gmtrace")))
        if len(traces) != 1:
            fail("expected one trace of torch_like.py %s, found %s" % (scenario, traces))
        run([gmt, "report", "--format", "html", "-o", name + ".html"] + traces, out, env)
        reports(name, traces)
        manifest[name]["stats"] = os.path.join(out, name + ".stats.json")
        whatif(name, traces)

    # A Python program leaking through ctypes from a function another calls
    # (tests/python/programs/leak_stacks.py): the leak table names the leaking line.
    leak_stacks = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python",
                               "programs", "leak_stacks.py")
    run([gmt, "record", "-q", "-o", "python_leak.%p.gmtrace", "--", a.python,
         os.path.abspath(leak_stacks)], out, dict(env, PYTHONDONTWRITEBYTECODE="1"))
    traces = sorted(os.path.basename(t)
                    for t in glob.glob(os.path.join(out, "python_leak.*.gmtrace")))
    run([gmt, "report", "--format", "html", "-o", "python_leak.html"] + traces, out, env)
    reports("python_leak", traces)
    manifest["python_leak"]["program"] = os.path.abspath(leak_stacks)

    # A Python program leaking 16 MiB per step through ctypes until its 320 MiB device is
    # out of memory (tests/browser/programs/step_leak.py).
    step_env = dict(env, CUDASIM_MEMORY_BYTES=str(320 << 20), PYTHONDONTWRITEBYTECODE="1")
    step_leak = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs", "step_leak.py")
    run([gmt, "record", "-q", "-o", "step_leak.%p.gmtrace", "--", a.python, step_leak, "40",
         "until-oom"], out, step_env)
    traces = sorted(os.path.basename(t) for t in glob.glob(os.path.join(out, "step_leak.*.gmtrace")))
    run([gmt, "report", "--format", "html", "-o", "step_leak.html"] + traces, out, env)
    reports("step_leak", traces)
    manifest["step_leak"]["program"] = step_leak

    # Both runs in one report: the process picker narrows the tensor level to each.
    both = [os.path.basename(t)
            for t in manifest["torch_train"]["traces"] + manifest["torch_oom"]["traces"]]
    run([gmt, "report", "--format", "html", "-o", "torch_both.html"] + both, out, env)
    reports("torch_both", both)

    # Crafted traces (tests/browser/crafted_traces.cpp): leaks whose sum saturates; a run
    # killed after a failed allocation, with phases before its first allocation.
    run([os.path.abspath(a.crafted_traces), out], out, env)
    for name in ("saturated", "killed"):
        run([gmt, "report", "--format", "html", "-o", name + ".html", name + ".gmtrace"], out, env)
        reports(name, [name + ".gmtrace"], incomplete=name == "killed")

    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
    print("PASS: %d reports in %s" % (len(manifest), out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
