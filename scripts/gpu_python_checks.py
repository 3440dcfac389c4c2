"""Python-stack checks of scripts/gpu-validate.sh (groups `python` and `python_overhead`):
the workloads of tests/gpu/python_stacks.py traced on the real GPU, and the PyTorch training
loop's cost with Python stacks on. docs/python.md says what they showed.

Every check is independent: one that cannot run (a framework missing) is a FAIL row with
its reason, and the others still run. Logs, reports and dumps land in OUT/logs.
"""
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKLOADS = HERE.parent / "tests" / "gpu" / "python_stacks.py"
TRAINING = HERE.parent / "tests" / "gpu" / "torch_workload.py"


def python_frames(stack):
    return [(f["function"], Path(f["file"]).name, f["line"]) for f in stack
            if f.get("language") == "python"]


def names_line(stack, function, line):
    return (function, "python_stacks.py", line) in python_frames(stack)


def workload(env, name, mode, extra=None):
    """Runs one workload traced; returns (info, report, traces) or raises with the reason."""
    p, traces, _ = env.record(name, [sys.executable, str(WORKLOADS), mode], extra=extra,
                              timeout=600)
    if p.returncode != 0 or len(traces) != 1 or not p.stdout.strip():
        raise RuntimeError(f"rc={p.returncode}, {len(traces)} traces: {p.stderr[-400:]}")
    info = json.loads(p.stdout.strip().splitlines()[-1])
    rep = env.report(traces, name, top=1000)
    return info, rep, traces


def header_of(env, trace):
    return env.dump(trace)[0]


def check_interpreter(env, row):
    info, rep, traces = workload(env, "py_ctypes", "ctypes")
    header = header_of(env, traces[0])
    lines = info["lines"]
    main = next((l for l in rep["leaks"] if l["bytes"] == 1234567), {})
    worker = next((l for l in rep["leaks"] if l["bytes"] == 7654321), {})
    want = [("ctypes_leak", "python_stacks.py", lines["ctypes_alloc"]),
            ("run_ctypes", "python_stacks.py", lines["ctypes_call"])]
    got_main = python_frames(main.get("stack", []))
    got_worker = python_frames(worker.get("stack", []))
    row("Python stacks: interpreter and ctypes leak (real libcudart)",
        header.get("python_status") == "captured" and got_main[:2] == want and
        got_worker[:1] == want[:1],
        f"python {header.get('python_version')} status {header.get('python_status')}; "
        f"main-thread leak {got_main[:3]}; worker leak {got_worker[:2]}; expected {want}")


def python_only_block(env, trace, name, marker):
    """The stack lines of the text report's leak whose stack has `marker` (a Python frame's
    text), with --python-only."""
    # Into a file: whole lines, whatever terminal the checks were started from.
    out = env.logs / f"{name}.python_only.txt"
    env.run(f"{name}.python_only", [str(env.cli), "report", "--python-only", "--top", "1000",
                                    "-o", str(out), str(trace)], env=env.cli_env)
    text = out.read_text() if out.exists() else ""
    leaks = text.split("Leaks (largest first)\n", 1)[-1].split("\n\n", 1)[0]
    blocks = [[l.strip() for l in b.splitlines()[1:]] for b in leaks.split("\n  #")]
    return next((b for b in blocks if marker in b), None)


def check_torch_nocache(env, row):
    info, rep, traces = workload(env, "py_torch_nocache", "torch_nocache",
                                 {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"})
    lines = info["lines"]
    top = rep["peak"]["top_sites"][0] if rep["peak"]["top_sites"] else {}
    kept = [l for l in rep["leaks"] if l["bytes"] == info["keep_bytes"]]
    row("Python stacks: PyTorch no-caching peak site",
        top.get("bytes") == info["peak_bytes"] and names_line(top["stack"], "peak_here",
                                                              lines["peak"]),
        f"top peak site {top.get('bytes')} B at {python_frames(top.get('stack', []))[:3]}; "
        f"expected peak_here line {lines['peak']}")
    row("Python stacks: PyTorch no-caching kept tensor",
        len(kept) == 1 and names_line(kept[0]["stack"], "keep_tensor", lines["keep"]),
        f"leak of {info['keep_bytes']} B at "
        f"{python_frames(kept[0]['stack'])[:3] if kept else 'not found'}; expected keep_tensor "
        f"line {lines['keep']}")
    # --python-only on a real PyTorch stack: the native frame that called CUDA (PyTorch's
    # allocator, not the tracer's or CUDA's), the count of those left out, the Python frames.
    block = python_only_block(env, traces[0], "py_torch_nocache",
                              f"keep_tensor at {WORKLOADS}:{lines['keep']}") or []
    natives = [l for l in block if not l.startswith("...") and ".py:" not in l]
    row("Python stacks: PyTorch no-caching kept tensor, report --python-only",
        bool(block) and 1 <= len(natives) <= 2 and block[0] in natives and
        not any(h in block[0] for h in ("libgpumemtrace", "libcudart", "libcuda.so")),
        f"stack lines: {block}")


def check_torch_caching(env, row):
    info, rep, _ = workload(env, "py_torch_caching", "torch_caching")
    lines = info["lines"]
    seen, ok = [], True
    for function, size in info["expect"].items():
        # The segment is the tensor's size rounded up to 2 MiB.
        leak = next((l for l in rep["leaks"] if size <= l["bytes"] < size + (2 << 20)), None)
        good = leak is not None and names_line(leak["stack"], function, lines[function])
        ok = ok and good
        seen.append(f"{function}: segment {leak['bytes'] if leak else None} B at "
                    f"{python_frames(leak['stack'])[:2] if leak else '-'}")
    row("Python stacks: PyTorch caching allocator segments", ok,
        "; ".join(seen) + f"; torch segments {info['segments']}")


def check_cupy(env, row):
    info, rep, _ = workload(env, "py_cupy", "cupy")
    lines = info["lines"]
    # The pool's chunk is held by CuPy's memory pool at exit (docs/frameworks.md), not leaked.
    held = [(h["allocator"], s) for h in rep.get("held_at_exit", []) for s in h["top_sites"]]
    where, leak = next(((a, s) for a, s in held + [("leak", l) for l in rep["leaks"]]
                        if s["bytes"] >= info["expect_bytes"]), (None, None))
    row("Python stacks: CuPy memory pool chunk",
        leak is not None and names_line(leak["stack"], "cupy_alloc", lines["cupy_alloc"]),
        f"chunk {leak['bytes'] if leak else None} B ({where}) at "
        f"{python_frames(leak['stack'])[:3] if leak else '-'}; expected cupy_alloc line "
        f"{lines['cupy_alloc']}; pool {info['pool_total_bytes']} B")


def check_jax(env, row):
    info, rep, traces = workload(env, "py_jax", "jax", {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    lines = info["lines"]
    records = env.dump(traces[0])
    stacks = {r["id"]: r for r in records if r.get("record") == "stack"}
    allocs = [r for r in records if r.get("record") == "event" and r["event"] == "alloc"
              and r["result"] == 0]
    by_thread = {}
    for e in allocs:
        python = bool(stacks.get(e["stack"], {}).get("python"))
        key = ("main" if e["tid"] == info["tid"] else "other", python)
        by_thread[key] = by_thread.get(key, 0) + 1
    named = [l for l in rep["leaks"] if names_line(l["stack"], "jax_alloc", lines["jax_alloc"])]
    # The workload's only Python thread is the main one: its allocations have Python frames,
    # those of XLA's own threads have none.
    consistent = by_thread.get(("main", False), 0) == 0 and by_thread.get(("other", True), 0) == 0
    row("Python stacks: JAX / XLA", bool(allocs) and consistent,
        f"allocations (thread, has Python frames): {by_thread}; leaks naming jax_alloc line "
        f"{lines['jax_alloc']}: {[(l['bytes'], l['allocations']) for l in named]}")


def check_python(env, row):
    for check in (check_interpreter, check_torch_nocache, check_torch_caching, check_cupy,
                  check_jax):
        try:
            check(env, row)
        except Exception as exc:  # each check stands alone
            row(f"Python stacks: {check.__name__}", False, repr(exc)[:300])


def check_python_overhead(env, row, runs):
    """The PyTorch training loop without the cache (every tensor a cudaMalloc/cudaFree):
    untraced, traced with native stacks only, traced with Python stacks, interleaved; the
    figure is the median of per-round ratios."""
    base = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "STEPS": "300"}
    modes = {"plain": None, "native": {"GPUMEMTRACE_PYTHON": "0"}, "python": {}}
    elapsed = {m: [] for m in modes}
    for i in range(max(runs, 5)):
        for mode, extra in modes.items():
            name = f"pyovh_{mode}{i}"
            cmd = [sys.executable, str(TRAINING)]
            if extra is None:
                p, _ = env.run(name, cmd, env={**env.app_env, **base}, timeout=600)
            else:
                p, _, _ = env.record(name, cmd, extra={**base, **extra}, timeout=600)
                for old in env.traces.glob(f"{name}.*"):
                    old.unlink()
            if p.returncode != 0:
                row("overhead PyTorch no-caching with Python stacks", False,
                    f"{mode} run {i}: rc={p.returncode} {p.stderr[-300:]}")
                return
            elapsed[mode].append(json.loads(p.stdout.strip().splitlines()[-1])["elapsed_s"])
    ratio = {m: statistics.median(t / p for t, p in zip(elapsed[m], elapsed["plain"]))
             for m in ("native", "python")}
    rounds = len(elapsed["plain"])
    row(f"overhead PyTorch no-caching with Python stacks ({rounds} interleaved rounds)",
        ratio["python"] - 1 <= 0.05,
        f"median per-round ratio to untraced: Python stacks {ratio['python']:.3f} "
        f"({100 * (ratio['python'] - 1):+.1f}%, target within 5%), native stacks only "
        f"{ratio['native']:.3f} ({100 * (ratio['native'] - 1):+.1f}%); untraced median "
        f"{statistics.median(elapsed['plain']):.3f}s; "
        f"python {[round(x, 3) for x in elapsed['python']]}, plain "
        f"{[round(x, 3) for x in elapsed['plain']]}")
