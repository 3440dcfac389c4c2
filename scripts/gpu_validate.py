"""The checks of scripts/gpu-validate.sh: gpumemtrace against ground truth on a real GPU.

Each check records a row (name, PASS/FAIL/INFO, what was seen); summary.md in the output
folder is the table quoted by docs/validation.md.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gpu_caching_checks
import gpu_framework_bench
import gpu_python_checks
import gpu_snapshot_checks
import gpu_whatif_checks
from gpu_validate_ranks import check_ranks

ROWS = []


def row(name, ok, detail):
    status = "INFO" if ok is None else ("PASS" if ok else "FAIL")
    ROWS.append((name, status, detail))
    print(f"[{status}] {name}: {detail}", flush=True)


class Env:
    def __init__(self, build, out):
        self.build = Path(build).resolve()
        self.out = Path(out).resolve()
        self.traces = self.out / "traces"
        self.logs = self.out / "logs"
        for d in (self.traces, self.logs):
            d.mkdir(parents=True, exist_ok=True)
        self.lib = self.build / "lib" / "libgpumemtrace.so"
        self.cli = self.build / "bin" / "gpumemtrace"
        self.gpu = self.build / "gpu"  # programs built with nvcc for this check
        self.cli_env = dict(os.environ)
        extra = self.build / "gpu-libs"  # the CLI's own libraries (libdw...) where missing
        if extra.is_dir():
            self.cli_env["LD_LIBRARY_PATH"] = f"{extra}:{os.environ.get('LD_LIBRARY_PATH', '')}"
        cuda_lib = "/usr/local/cuda/lib64"
        self.app_env = dict(os.environ)
        self.app_env["LD_LIBRARY_PATH"] = f"{cuda_lib}:{os.environ.get('LD_LIBRARY_PATH', '')}"

    def run(self, name, cmd, env=None, timeout=300, stdin=None):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env or self.app_env, capture_output=True, text=True,
                           timeout=timeout)
        dt = time.perf_counter() - t0
        (self.logs / f"{name}.log").write_text(
            f"$ {' '.join(map(str, cmd))}\nrc={p.returncode} t={dt:.3f}s\n--- stdout\n{p.stdout}"
            f"\n--- stderr\n{p.stderr}\n")
        return p, dt

    def traced_env(self, name, extra=None):
        env = dict(self.app_env)
        env["LD_PRELOAD"] = str(self.lib)
        env["GPUMEMTRACE_OUTPUT"] = str(self.traces / f"{name}.%p.gmtrace")
        env.update(extra or {})
        return env

    def record(self, name, cmd, extra=None, timeout=300):
        for old in self.traces.glob(f"{name}.*gmtrace"):
            old.unlink()
        p, dt = self.run(name, cmd, self.traced_env(name, extra), timeout)
        return p, sorted(self.traces.glob(f"{name}.*gmtrace")), dt

    def report(self, traces, name, top=10):
        p, _ = self.run(f"{name}.report", [str(self.cli), "report", "--format", "json",
                                           "--top", str(top), *map(str, traces)],
                        env=self.cli_env)
        if p.returncode != 0:
            raise RuntimeError(f"report failed: {p.stderr.strip()}")
        (self.logs / f"{name}.report.json").write_text(p.stdout)
        return json.loads(p.stdout)

    def dump(self, trace):
        p, _ = self.run(f"{Path(trace).name}.dump", [str(self.cli), "dump", str(trace)],
                        env=self.cli_env)
        return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def live_at_end(records):
    """(address, size, api, kind) still allocated at the end, replaying the dump."""
    live = {}
    for r in records:
        if r.get("record") != "event" or r.get("result") != 0:
            continue
        if r["event"] == "alloc":
            live[r["address"]] = (r["size"], r["api"], r["kind"])
        elif r["event"] == "free":
            live.pop(r["address"], None)
    return {(a, s, api, k) for a, (s, api, k) in live.items()}


def check_samples(env):
    for name in ("leak_loop", "leak_loop_static", "fragmentation", "oom", "stream_pool", "vmm"):
        exe = env.build / "samples" / name
        if not exe.exists():
            row(f"sample {name}", False, "not built")
            continue
        p, traces, _ = env.record(f"sample_{name}", [str(exe)])
        if p.returncode != 0 or not traces:
            row(f"sample {name}", False, f"rc={p.returncode}, traces={len(traces)}")
            continue
        rep = env.report(traces, f"sample_{name}")
        s = rep["summary"]
        row(f"sample {name} traced", s["allocations"] > 0,
            f"{s['allocations']} allocations, {s['leaked_bytes']} B leaked, peak {s['peak_bytes']} B,"
            f" {s['failed_allocations']} failed")


def check_routes(env):
    """The recorder's own test programs (tests/recorder/programs) on the real driver: every
    interception route, and a leak found by size, address and function name."""
    programs = env.build / "tests/recorder/programs"
    p, traces, _ = env.record("routes_runtime", [str(programs / "runtime_calls")])
    if p.returncode != 0 or len(traces) != 1:
        row("runtime API (shared cudart) on the GPU", False, f"rc={p.returncode} {p.stderr[-300:]}")
    else:
        rep = env.report(traces, "routes_runtime")
        leak = rep["leaks"][0] if rep["leaks"] else {}
        funcs = [f.get("function", "") for f in leak.get("stack", [])]
        recs = env.dump(traces[0])
        sizes = {r["size"]: r["api"] for r in recs if r.get("record") == "event" and r["event"] == "alloc"}
        expected = {11001: "cudaMalloc", 12001: "cudaMallocAsync", 13001: "cudaMallocFromPoolAsync",
                    14001: "cudaMallocManaged", 15001: "cudaMallocHost", 16001: "cudaHostAlloc",
                    17001: "cudaHostRegister", 1001 * 7: "cudaMallocPitch", 1003 * 6: "cudaMalloc3D",
                    836: "cudaMallocArray", 420: "cudaMalloc3DArray", 320: "cudaMallocMipmappedArray"}
        wrong = {k: sizes.get(k) for k, v in expected.items() if sizes.get(k) != v}
        row("runtime API (shared cudart) on the GPU",
            leak.get("bytes") == 1234567 and any("leak_here" in f for f in funcs) and not wrong,
            f"leaks[0] {leak.get('bytes')} B at {funcs[:2]}; every API recorded once by its "
            f"runtime name: {not wrong} {wrong if wrong else ''}")
        check_text_stacks(env, traces[0], leak)
    p, traces, _ = env.record("routes_entrypoint", [str(programs / "runtime_calls"), "entrypoint"])
    recs = env.dump(traces[0]) if traces else []
    got = [(r["api"], r["size"]) for r in recs if r.get("record") == "event" and r["size"] == 18001]
    row("cudaGetDriverEntryPointByVersion route", got == [("cuMemAlloc_v2", 18001)], f"{got}")
    for route in ("exported", "dlsym", "procaddr"):
        p, traces, _ = env.record(f"routes_{route}", [str(programs / "driver_calls"), route])
        recs = env.dump(traces[0]) if traces else []
        ev = [r for r in recs if r.get("record") == "event"]
        ops = sorted({r["event"] for r in ev})
        allocs = {r["size"] for r in ev if r["event"] == "alloc" and r["result"] == 0}
        want = {21001, 22001, 23001, 24001, 25001, 26001, 28001, 29001, 30001, 324, 540}
        row(f"driver API via {route} on the GPU", p.returncode == 0 and want <= allocs and
            {"vmm_reserve", "vmm_create", "vmm_map", "vmm_unmap", "vmm_release",
             "vmm_address_free", "teardown", "ctx_create"} <= set(ops),
            f"rc={p.returncode}, {len(ev)} events, ops {ops}, missing sizes {sorted(want - allocs)}")


def check_text_stacks(env, trace, leak):
    """The text report's stacks on real libraries: the leak's first line is the program's
    function; the tracer's and the CUDA libraries' frames show only with --full-stacks."""
    def leak_lines(args):
        p, _ = env.run("routes_runtime.text" + "".join(args),
                       [str(env.cli), "report", "--frames", "64", *args, str(trace)],
                       env=env.cli_env)
        text = p.stdout.split("Leaks (largest first)\n", 1)[-1].split("\n\n", 1)[0]
        return [l.strip() for l in text.splitlines()[1:] if l.startswith("      ")], p.returncode
    shown, rc = leak_lines([])
    full, rc_full = leak_lines(["--full-stacks"])
    hidden = ("libgpumemtrace", "libcudart", "libcuda.so", "__libc_start", "_start")
    stray = [l for l in shown if any(h in l for h in hidden)]
    languages = {f.get("language") for f in leak.get("stack", [])}
    row("text stacks leave out the tracer and CUDA frames",
        rc == 0 and rc_full == 0 and bool(shown) and "leak_here" in shown[0] and not stray
        and len(full) > len(shown) and languages == {"native"},
        f"first line {shown[:1]}; {len(shown)} frames shown, {len(full)} with --full-stacks; "
        f"hidden ones shown anyway: {stray}; JSON languages {sorted(map(str, languages))}")


def sanitizer_leaks(env, cmd, name, run_env):
    p, _ = env.run(f"{name}.sanitizer", ["compute-sanitizer", "--leak-check", "full", *cmd],
                   env=run_env, timeout=300)
    text = p.stdout + p.stderr
    found = {(m.group(2).lower(), int(m.group(1).replace(",", "")))
             for m in re.finditer(r"Leaked ([\d,]+) bytes at (0x[0-9a-fA-F]+)", text)}
    usable = "Device not supported" not in text and p.returncode in (0, 1)
    return found, usable, text


def check_leaks_vs_sanitizer(env):
    """Both tools watch the same run (gpumemtrace preloaded under compute-sanitizer), so
    leaked allocations can be matched by address as well as size."""
    expected = {1234567: "device", 2345678: "managed", 3456789: "host_pinned", 4567890: "pool"}
    for variant in ("shared", "static"):
        exe = env.gpu / f"planted_leaks_{variant}"
        name = f"planted_{variant}"
        p, traces, _ = env.record(name, [str(exe)])
        if p.returncode != 0 or len(traces) != 1:
            row(f"planted leaks found ({variant})", False, f"rc={p.returncode}")
            continue
        rep = env.report(traces, name)
        got = {s: k for _, s, _, k in live_at_end(env.dump(traces[0]))}
        planted_ok = all(got.get(s) == k for s, k in expected.items())
        row(f"planted leaks found ({variant})", planted_ok and
            rep["summary"]["leaked_bytes"] >= sum(expected),
            f"ours: {sorted((s, k) for s, k in got.items())}; report leaked_bytes="
            f"{rep['summary']['leaked_bytes']}")

        for old in env.traces.glob(f"{name}_san.*gmtrace"):
            old.unlink()
        san, usable, _ = sanitizer_leaks(env, [str(exe)], name,
                                         env.traced_env(f"{name}_san"))
        traces = sorted(env.traces.glob(f"{name}_san.*gmtrace"))
        if not usable:
            row(f"leaks vs compute-sanitizer ({variant})", None,
                "compute-sanitizer cannot run on this machine (see logs)")
            continue
        if len(traces) != 1:
            row(f"leaks vs compute-sanitizer ({variant})", False,
                f"{len(traces)} traces from the run under compute-sanitizer")
            continue
        ours = live_at_end(env.dump(traces[0]))
        ours_set = {(a.lower(), s) for a, s, _, _ in ours}
        missing = sorted(san - ours_set)
        only_ours = sorted((s, k) for a, s, _, k in ours if (a.lower(), s) not in san)
        row(f"leaks vs compute-sanitizer ({variant})", bool(san) and not missing,
            f"compute-sanitizer: {len(san)} leaks {sorted(b for _, b in san)}; each found by "
            f"gpumemtrace at the same address with the same bytes: {not missing}"
            f"{' missing ' + str(missing) if missing else ''}; only in gpumemtrace: "
            f"{only_ours or 'none'}")


def torch_run(env, name, extra, args=()):
    p, traces, dt = env.record(name, [sys.executable, str(Path(__file__).parent.parent /
                                                          "tests/gpu/torch_workload.py"), *args],
                               extra=extra, timeout=600)
    info = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}
    return p, traces, info, dt


def check_torch(env):
    p, traces, info, _ = torch_run(env, "torch_default", {})
    if p.returncode != 0 or len(traces) != 1:
        row("PyTorch caching allocator peak", False, f"rc={p.returncode}")
    else:
        rep = env.report(traces, "torch_default", top=100000)
        peak = rep["summary"]["peak_bytes"]
        expect = info["max_memory_reserved"]
        # The caching allocator's segments are the sites inside libc10_cuda; anything else
        # live at the peak was allocated by another library, named by its stack.
        by_lib = {}
        for site in rep["peak"]["top_sites"]:
            mods = [f.get("module", "").split("/")[-1] for f in site["stack"]]
            lib = "libc10_cuda.so" if any("libc10_cuda" in m for m in mods) else next(
                (m for m in mods if m and not m.startswith("libgpumemtrace")), "?")
            by_lib[lib] = by_lib.get(lib, 0) + site["bytes"]
        torch_bytes = by_lib.pop("libc10_cuda.so", 0)
        row("PyTorch caching allocator peak", torch_bytes == expect,
            f"traced peak {peak} B = {torch_bytes} B in PyTorch's caching allocator (libc10_cuda) "
            f"+ {peak - torch_bytes} B allocated directly by {by_lib}; "
            f"torch.cuda.max_memory_reserved() {expect} B")

    p, traces, info, _ = torch_run(env, "torch_nocache_leak",
                                   {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}, ("--leak",))
    if p.returncode != 0 or len(traces) != 1:
        row("PyTorch no-caching leak", False, f"rc={p.returncode} {p.stderr[-300:]}")
    else:
        rep = env.report(traces, "torch_nocache_leak")
        sizes = [l["bytes"] for l in rep["leaks"]]
        ok = any(l["bytes"] == info["leak_bytes"] and l["allocations"] == 1 for l in rep["leaks"])
        row("PyTorch no-caching leak", ok,
            f"kept tensor {info['leak_bytes']} B; leaks reported (bytes): {sizes[:10]}")

    p, traces, info, _ = torch_run(env, "torch_expandable",
                                   {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})
    if p.returncode != 0 or len(traces) != 1:
        row("PyTorch expandable segments VMM peak", False, f"rc={p.returncode}")
    else:
        rep = env.report(traces, "torch_expandable")
        vmm_peak = rep["kinds"].get("vmm", {}).get("peak_bytes", 0)
        expect = info["max_memory_reserved"]
        row("PyTorch expandable segments VMM peak", vmm_peak == expect,
            f"traced VMM physical peak {vmm_peak} B, max_memory_reserved() {expect} B")


def check_export(env):
    """`gpumemtrace export` of a PyTorch run without its cache (every tensor its own
    cudaMalloc), read by PyTorch's own viewer code and by the trace-event rules."""
    p, traces, info, _ = torch_run(env, "torch_export", {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"},
                                   ("--leak",))
    if p.returncode != 0 or len(traces) != 1:
        row("export memory-viz: PyTorch run", False, f"rc={p.returncode} {p.stderr[-300:]}")
        return
    rep = env.report(traces, "torch_export", top=100000)
    snapshot = env.out / "torch_export.pickle"
    q, _ = env.run("torch_export.memory_viz", [str(env.cli), "export", "--format", "memory-viz",
                                               "-o", str(snapshot), str(traces[0])],
                   env=env.cli_env)
    row("export memory-viz: written", q.returncode == 0 and snapshot.exists(),
        f"rc={q.returncode} {snapshot.stat().st_size if snapshot.exists() else 0} B "
        f"{q.stderr.strip()[-200:]}")
    if q.returncode != 0:
        return
    report_file = env.logs / "torch_export.report.json"
    viz, _ = env.run("torch_export.torch_viz",
                     [sys.executable, str(Path(__file__).parent.parent / "tests/gpu/torch_memory_viz.py"),
                      str(snapshot), str(report_file), str(env.out / "torch_export_viz")])
    try:
        seen = json.loads(viz.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        row("export memory-viz: torch loads it", False, f"rc={viz.returncode} {viz.stderr[-300:]}")
        return
    errors = seen.get("errors", {})
    row("export memory-viz: torch loads it",
        not errors and seen.get("trace_plot_bytes", 0) > 0 and seen.get("segment_plot_bytes", 0) > 0,
        f"trace_plot {seen.get('trace_plot_bytes')} B, segment_plot {seen.get('segment_plot_bytes')} B "
        f"of HTML, segsum/trace/memory/segments ok: {sorted(k for k in seen if k.endswith('_bytes'))}; "
        f"{seen.get('entries')} entries; errors: {json.dumps(errors)[:400]}")
    other = {k: n for k, n in seen.get("report_kinds", {}).items()
             if k not in ("device", "pool", "managed") and n}
    peaks, want = seen.get("snapshot_peaks", {}), seen.get("report_peaks", {})
    row("export memory-viz: live bytes at the peak",
        bool(want) and all(peaks.get(d, 0) == b for d, b in want.items()) if not other else None,
        f"snapshot replay {peaks}, report devices[].peak_bytes {want}"
        + (f"; the run also allocated {other}, which the snapshot leaves out" if other else ""))
    row("export memory-viz: Python frames", None,
        f"{seen.get('python_frames')} frames from .py files, e.g. {seen.get('python_frame_example')}")

    trace_json = env.out / "torch_export.trace.json"
    q, _ = env.run("torch_export.perfetto", [str(env.cli), "export", "--format", "perfetto",
                                             "-o", str(trace_json), str(traces[0])], env=env.cli_env)
    ok = q.returncode == 0
    detail = f"rc={q.returncode}"
    if ok:
        events = json.loads(trace_json.read_text())["traceEvents"]
        gpu0 = [e["args"]["bytes"] for e in events if e["ph"] == "C" and e["name"] == "GPU 0 live"]
        slices = sum(1 for e in events if e["ph"] == "X" and e.get("cat") == "allocation")
        peak0 = next((d["peak_bytes"] for d in rep["devices"] if d["ordinal"] == 0), 0)
        ok = max(gpu0, default=0) == peak0 and slices == rep["summary"]["allocations"]
        detail = (f"counter 'GPU 0 live' max {max(gpu0, default=0)} B, report {peak0} B; "
                  f"{slices} slices, {rep['summary']['allocations']} allocations; "
                  f"{trace_json.stat().st_size} B")
    row("export perfetto: counter peak and slices", ok, detail)


def check_frameworks(env):
    here = Path(__file__).parent.parent / "tests/gpu"
    p, traces, _ = env.record("cupy", [sys.executable, str(here / "cupy_workload.py")])
    if p.returncode != 0 or len(traces) != 1:
        row("CuPy memory pool", False, f"rc={p.returncode} {p.stderr[-300:]}")
    else:
        info = json.loads(p.stdout.strip().splitlines()[-1])
        live = sum(s for _, s, _, k in live_at_end(env.dump(traces[0])) if k != "host_pinned")
        row("CuPy memory pool", live == info["pool_total_bytes"],
            f"traced live device bytes at exit {live}, pool.total_bytes() {info['pool_total_bytes']}")
    p, traces, _ = env.record("jax", [sys.executable, str(here / "jax_workload.py")],
                              extra={"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
    if p.returncode != 0 or len(traces) != 1:
        row("JAX / XLA", False, f"rc={p.returncode} {p.stderr[-300:]}")
    else:
        info = json.loads(p.stdout.strip().splitlines()[-1])
        rep = env.report(traces, "jax")
        row("JAX / XLA", rep["summary"]["allocations"] > 0,
            f"traced: {rep['summary']['allocations']} allocations, peak {rep['summary']['peak_bytes']} B,"
            f" kinds {sorted(k for k, v in rep['kinds'].items() if v['allocations'])}; XLA says {info}")


def check_oom(env):
    p, traces, _ = env.record("oom", [str(env.gpu / "oom")], timeout=300)
    if p.returncode != 0 or len(traces) != 1:
        row("real out-of-memory", False, f"rc={p.returncode}")
        return
    rep = env.report(traces, "oom")
    f = rep["failures"]
    ok = bool(f) and all(x["device_free_bytes"] > 0 and x["diagnosis"] for x in f)
    row("real out-of-memory", ok, "; ".join(
        f"{x['requested_bytes']} B -> {x['error']}, driver free {x['device_free_bytes']} B: "
        f"{x['diagnosis']}" for x in f[:2]))


def check_sigkill(env):
    name = "sigkill"
    for old in env.traces.glob(f"{name}.*"):
        old.unlink()
    proc = subprocess.Popen([str(env.build / "tests/recorder/programs/lifecycle"), "sigkill", "2000"],
                            env=env.traced_env(name), stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    traces = sorted(env.traces.glob(f"{name}.*gmtrace"))
    n = sum(1 for r in env.dump(traces[0]) if r.get("record") == "event" and r["size"] == 34001) \
        if traces else -1
    row("SIGKILL durability", line.strip() == "ready" and n == 2000,
        f"2000 cudaMalloc returned before SIGKILL; {n} in the trace")


def check_devices(env):
    p, traces, _ = env.record("devices", [str(env.gpu / "devices")])
    recs = env.dump(traces[0]) if traces else []
    ev = {r["size"]: r["device"] for r in recs if r.get("record") == "event" and r["event"] == "alloc"}
    row("device ordinal", ev.get(41001) == 0 and ev.get(42001) == 0,
        f"{p.stdout.strip()}; devices recorded: {ev}")


def check_contexts(env):
    """The per-thread context cache against the real driver and cudart: every allocation's
    recorded context and device must be the ones the program saw (tests/recorder/programs/
    context_switch.cpp switches in every way it can)."""
    for variant in ("static", "shared"):
        name = f"contexts_{variant}"
        p, traces, _ = env.record(name, [str(env.gpu / f"context_switch_{variant}")])
        if p.returncode != 0 or len(traces) != 1:
            row(f"contexts followed ({variant} cudart)", False,
                f"rc={p.returncode}, traces={len(traces)} {p.stderr[-300:]}")
            continue
        seen = [json.loads(l) for l in p.stdout.splitlines() if l.startswith("{")]
        recs = [r for r in env.dump(traces[0]) if r.get("record") == "event" and r["event"] == "alloc"]
        by_size = {r["size"]: r for r in recs}
        wrong = []
        for s in seen:
            r = by_size.get(s["size"], {})
            if int(r.get("context", "0x0"), 16) != int(s["context"], 16) or r.get("device") != s["device"]:
                wrong.append((s["size"], s["context"], s["device"], r.get("context"), r.get("device")))
        row(f"contexts followed ({variant} cudart)", bool(seen) and not wrong,
            f"{len(seen)} allocations compared; wrong (size, program ctx, dev, traced ctx, dev): "
            f"{wrong or 'none'}")


def check_trace_ends(env):
    """Exact ends on the real driver: exit() while workers are inside CUDA calls, execve."""
    programs = env.build / "tests/recorder/programs"
    complete = 0
    runs = 5
    detail, untraced = [], []
    race = [str(programs / "exit_race"), "4", "2000"]
    for i in range(runs):
        # Some drivers crash the process themselves when exit() tears CUDA down under threads
        # still inside calls (580.159.04 on an H200: SIGSEGV untraced, every run). The tracer's
        # part is to change nothing: the traced run ends as the untraced one did, and its
        # trace is complete.
        plain, _ = env.run(f"exit_race{i}.plain", race)
        untraced.append(plain.returncode)
        p, traces, _ = env.record(f"exit_race{i}", race)
        d, _ = env.run(f"exit_race{i}.dump", [str(env.cli), "dump", str(traces[0])],
                       env=env.cli_env) if traces else (None, 0)
        ok = p.returncode == plain.returncode and len(traces) == 1 and d is not None and \
            d.returncode == 0
        complete += ok
        if not ok:
            detail.append(f"run {i}: rc={p.returncode} (untraced {plain.returncode}) "
                          f"dump={d.returncode if d else None} {(d.stderr if d else '')[-200:]}")
    row("exit() while threads are inside CUDA calls", complete == runs,
        f"{complete}/{runs} traced runs ended as the untraced one (exit status untraced: "
        f"{untraced}) with a complete trace (nothing after the trailer) {detail or ''}")
    p, traces, _ = env.record("exec", [str(programs / "lifecycle"), "exec", "/bin/true"])
    d, _ = env.run("exec.dump", [str(env.cli), "dump", str(traces[0])], env=env.cli_env) \
        if traces else (None, 0)
    row("execve after CUDA", p.returncode == 0 and len(traces) == 1 and d is not None and
        d.returncode == 0, f"rc={p.returncode}, traces={len(traces)}, dump rc="
        f"{d.returncode if d else None} {(d.stderr if d else '')[-200:]}")


def timed_run(env, name, cmd, run_env):
    """Runs cmd; returns (returncode, stdout, wall seconds, user+sys seconds of it and its
    threads and waited-for children, from wait4)."""
    out_path, err_path = env.logs / f"{name}.out", env.logs / f"{name}.err"
    with open(out_path, "w") as out, open(err_path, "w") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=run_env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out_path.read_text(), wall, usage.ru_utime + usage.ru_stime


def check_hot_path(env, runs):
    """The recorder's cost per cudaMallocAsync/cudaFreeAsync event at stack depth 16 (target:
    at most 100 ns more than untraced) and 0, static and shared cudart. alloc_loop times its
    own loop (no process start, no CUDA initialisation): the traced program's wall time per
    event. The CPU of the whole process (user + sys of all threads, wait4) is given too, as
    the marginal cost between two loop sizes, so the writer thread's share is counted. Rounds
    interleave plain and traced runs; figures are medians of per-round differences."""
    small, large = 200000, 1000000
    configs = ("plain", "16", "0")
    sysfs = Path("/sys/devices/system/clocksource/clocksource0")
    read = lambda f: (sysfs / f).read_text().strip() if (sysfs / f).exists() else "?"
    row("clock source", None, f"current {read('current_clocksource')}, available "
        f"{read('available_clocksource')} (events read the TSC only when the kernel keeps time "
        "with it; otherwise clock_gettime)")
    for variant in ("alloc_loop", "alloc_loop_shared"):
        exe = env.gpu / variant
        if not exe.exists():
            row(f"hot path {variant}", False, "not built")
            continue
        loop = {c: [] for c in configs}   # ns per event, from the program's own timing
        cpu = {c: [] for c in configs}    # marginal CPU ns per event, whole process
        failed = None
        for i in range(runs):
            for c in configs:
                got = {}
                for pairs in (small, large):
                    name = f"hot_{variant}_{c}_{pairs}_{i}"
                    run_env = env.app_env if c == "plain" else env.traced_env(
                        name, {"GPUMEMTRACE_STACK_DEPTH": c})
                    rc, out, _, cpu_s = timed_run(env, name, [str(exe), "async", str(pairs)],
                                                  run_env)
                    for old in env.traces.glob(f"{name}.*gmtrace"):
                        old.unlink()
                    ns = [json.loads(l)["ns_per_pair"] for l in out.splitlines()
                          if l.startswith('{"mode"')]
                    if rc != 0 or not ns:
                        failed = f"{c}: rc={rc}, see logs/{name}.err"
                        break
                    got[pairs] = (ns[0], cpu_s)
                if failed:
                    break
                loop[c].append(got[large][0] / 2)
                cpu[c].append((got[large][1] - got[small][1]) * 1e9 / (2 * (large - small)))
            if failed:
                break
        if failed:
            row(f"hot path {variant}", False, failed)
            continue
        parts = [f"plain {statistics.median(loop['plain']):.0f} ns per event (loop), "
                 f"{statistics.median(cpu['plain']):.0f} ns CPU"]
        ok = False
        for d in configs[1:]:
            wall = [t - p for t, p in zip(loop[d], loop["plain"])]
            used = [t - p for t, p in zip(cpu[d], cpu["plain"])]
            parts.append(f"depth {d}: {statistics.median(wall):+.0f} ns per event (loop; rounds "
                         f"{[round(x) for x in wall]}), {statistics.median(used):+.0f} ns CPU")
            if d == "16":
                ok = statistics.median(wall) <= 100
        row(f"hot path {variant}: cudaMallocAsync/cudaFreeAsync, {runs} rounds "
            f"(target: depth 16 at most +100 ns per event)", ok, "; ".join(parts))


def median_time(env, name, cmd, env_vars, runs):
    times = []
    for i in range(runs):
        p, dt = env.run(f"{name}.{i}", cmd, env_vars, timeout=600)
        for old in env.traces.glob(f"{name}.*gmtrace"):
            old.unlink()
        if p.returncode != 0:
            return None, p
        # The loop programs time their own loop (JSON on stdout), leaving out process start
        # and CUDA initialization; anything else is timed whole.
        for line in p.stdout.splitlines():
            if line.startswith('{"mode"'):
                dt = json.loads(line)["ns_per_pair"] * 1e-9
        times.append(dt)
    return statistics.median(times), None


def check_overhead(env, runs):
    table = []
    for mode, pairs in (("async", 1000000), ("sync", 20000)):
        cmd = [str(env.gpu / "alloc_loop"), mode, str(pairs)]
        plain, _ = median_time(env, f"ovh_{mode}_plain", cmd, env.app_env, runs)
        res = {"plain": plain}
        for depth in ("0", "64"):
            res[f"depth{depth}"], _ = median_time(
                env, f"ovh_{mode}_d{depth}", cmd,
                env.traced_env(f"ovh_{mode}_d{depth}", {"GPUMEMTRACE_STACK_DEPTH": depth}), runs)
        san_cmd = ["compute-sanitizer", "--leak-check", "full", *cmd]
        res["compute-sanitizer"], _ = median_time(env, f"ovh_{mode}_san", san_cmd, env.app_env, 1)
        table.append((mode, pairs, res))
        parts = [f"plain {plain * 1e9:.0f} ns per alloc+free pair"]
        for k in ("depth0", "depth64", "compute-sanitizer"):
            v = res[k]
            if v is None:
                parts.append(f"{k}: failed")
            else:
                parts.append(f"{k} {v * 1e9:.0f} ns ({v / plain:.2f}x, "
                             f"{(v - plain) / 2 * 1e9:+.0f} ns per event)")
        row(f"overhead {mode} loop ({pairs} pairs, median of {runs})", None, "; ".join(parts))


def check_torch_overhead(env, runs):
    # PyTorch without its cache: every tensor is a cudaMalloc/cudaFree (with the device
    # synchronization cudaFree implies). Runs alternate plain/traced; the figure is the median
    # of the per-round ratios, since run-to-run noise here is several percent.
    script = str(Path(__file__).parent.parent / "tests/gpu/torch_workload.py")
    ratios, plain, traced = [], [], []
    for i in range(max(runs, 9)):
        p, _ = env.run(f"ovh_torch_plain{i}", [sys.executable, script],
                       env={**env.app_env, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "STEPS": "300"})
        a = json.loads(p.stdout.strip().splitlines()[-1])["elapsed_s"]
        _, _, info, _ = torch_run(env, f"ovh_torch_traced{i}",
                                  {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "STEPS": "300"})
        b = info["elapsed_s"]
        plain.append(a)
        traced.append(b)
        ratios.append(b / a)
        for old in env.traces.glob(f"ovh_torch_traced{i}.*"):
            old.unlink()
    r = statistics.median(ratios)
    row(f"overhead PyTorch no-caching ({len(ratios)} interleaved rounds)", r - 1 <= 0.03,
        f"plain median {statistics.median(plain):.3f}s, traced median "
        f"{statistics.median(traced):.3f}s; median per-round ratio {r:.3f} ({100 * (r - 1):+.1f}%, "
        f"target within 3%); ratios {[round(x, 3) for x in ratios]}")


def exception_reason(exc, env):
    """What a group's exception row says: a missing program or tool by its path (repr() of
    the FileNotFoundError that subprocess raises leaves the path out), anything else as is."""
    if not (isinstance(exc, FileNotFoundError) and exc.filename):
        return repr(exc)[:300]
    missing = Path(exc.filename)
    if missing.parent == env.gpu:
        hint = " (the GPU programs: cmake --build BUILD --target gpu_programs, then " \
               "scripts/gpu-bundle.sh)"
    elif "/" not in str(exc.filename):
        hint = " (not on the PATH)"
    else:
        hint = ""
    return f"not found: {exc.filename}{hint}"


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="", help="comma-separated check groups")
    args = ap.parse_args()
    env = Env(args.build, args.out)
    groups = {"ranks": lambda e: check_ranks(e, row), "routes": check_routes, "samples": check_samples, "leaks": check_leaks_vs_sanitizer, "torch": check_torch,
              "export": check_export, "frameworks": check_frameworks, "oom": check_oom, "sigkill": check_sigkill,
              "devices": check_devices, "overhead": lambda e: check_overhead(e, args.runs),
              "contexts": check_contexts, "trace_ends": check_trace_ends,
              "hot_path": lambda e: check_hot_path(e, max(args.runs, 7)),
              "torch_overhead": lambda e: check_torch_overhead(e, args.runs),
              "python": lambda e: gpu_python_checks.check_python(e, row),
              "caching": lambda e: gpu_caching_checks.check_caching(e, row),
              "snapshot": lambda e: gpu_snapshot_checks.check_snapshot(e, row),
              "whatif": lambda e: gpu_whatif_checks.check_whatif(e, row),
              "python_overhead": lambda e: gpu_python_checks.check_python_overhead(e, row,
                                                                                   args.runs),
              "framework_bench": lambda e: gpu_framework_bench.check_framework_bench(
                  e, row, args.runs)}
    # "ranks" needs 2 GPUs and "framework_bench" takes minutes of its own: only when asked.
    wanted = [g for g in args.only.split(",") if g] or [
        g for g in groups if g not in ("ranks", "framework_bench")]
    for g in wanted:
        try:
            groups[g](env)
        except Exception as exc:  # a broken check is a failed check, with its reason
            row(f"{g} (exception)", False, exception_reason(exc, env))
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    lines = [f"machine: {smi}; python {sys.version.split()[0]}", "",
             "| check | result | seen |", "|---|---|---|"]
    lines += [f"| {n} | {s} | {d.replace('|', '/')} |" for n, s, d in ROWS]
    (env.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if any(s == "FAIL" for _, s, _ in ROWS) else 0


if __name__ == "__main__":
    sys.exit(main())
