"""The `framework_bench` group of scripts/gpu-validate.sh: what a PyTorch user pays for
gpumemtrace on real training, side by side with PyTorch's own allocation history, and with
the recorder's parts switched off in turn (docs/validation.md says how to run it and what
each column means; docs/performance.md quotes its table).

Every column is a long-lived worker process (tests/gpu/framework_shapes.py) started once,
so that process start-up, the recorder's start and its exit are in no figure. For each
shape the workers warm up, then take turns: a round asks each worker in turn for one timed
block of the same number of steps (the first worker of the round rotating, so that no
column always follows the same one), timed on the GPU with CUDA events; only one worker
runs at a time. A column's figure is the median over rounds of its ms/step divided by the
plain worker's in the same round, with the spread of those ratios.

The events per step are counted in a trace: one more traced worker marks a phase around a
short block of each shape, and the events between the marks are counted in its dump.
PyTorch's own counters (memory_stats: blocks and segments allocated and freed) are given
beside them.

How many rounds: at least FRAMEWORK_BENCH_ROUNDS, then more until the 90 % interval of the
defaults' median ratio is at most FRAMEWORK_BENCH_PRECISION wide, the shape's share of the
budget is spent, or FRAMEWORK_BENCH_MAX_ROUNDS are done. A GPU-bound shape settles in its
first rounds; a CPU-bound one, whose blocks the host's drift moves most, gets the rounds.
Shapes are measured in ascending order of events per second (counted first), so that the
time a settled shape leaves goes to those after it; the tables keep the order asked.

Settings (environment; also flags when run alone):
  FRAMEWORK_BENCH_ROUNDS     rounds at least (default: --runs of gpu_validate.py, at least 9)
  FRAMEWORK_BENCH_MAX_ROUNDS rounds at most (default 400; FRAMEWORK_BENCH_ROUNDS when only
                             that is set: exactly that many)
  FRAMEWORK_BENCH_PRECISION  stop a shape once the defaults' median interval is this narrow
                             (default 0.02: 1.040-1.060)
  FRAMEWORK_BENCH_STEPS      steps per timed block, e.g. "mlp=2000,conv=150,transformer=40"
                             (default: as many as take FRAMEWORK_BENCH_BLOCK_S plain)
  FRAMEWORK_BENCH_BLOCK_S    seconds of plain steps per timed block (default 0.25)
  FRAMEWORK_BENCH_BUDGET_S   seconds the whole group may take; rounds stop early, and say
                             so, rather than run past it (default 420)
  FRAMEWORK_BENCH_SHAPES     shapes to run (default "mlp,conv,transformer")
  FRAMEWORK_BENCH_PERF       0: no perf profile; N: the profile covers N blocks (default 8:
                             about 2 s, some thousands of samples of each busy thread)
  FRAMEWORK_BENCH_HISTORY_ENTRIES  max_entries of PyTorch's history (default 100000)
  FRAMEWORK_BENCH_BASELINE   another build's libgpumemtrace.so: one more column, its
                             defaults, in the same rounds (before/after a change)
  FRAMEWORK_BENCH_COLUMNS    the columns to run, by key, e.g. "traced,torch_python,baseline"
                             (plain always; default all)

Run alone: gpu_framework_bench.py --build BUILD --out OUT [--rounds N] [--dry-run]
(--dry-run: on the simulated CUDA with the workers' stand-in for PyTorch, see
tests/gpu/framework_shapes.py; every row must pass or be INFO).
"""
import argparse
import json
import math
import os
import random
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKER = HERE.parent / "tests" / "gpu" / "framework_shapes.py"
PERF_REPORT = HERE.parent / "tests" / "gpu" / "framework_bench_perf_report.txt"
REPLY = b"REPLY "

SHAPES = {
    "mlp": "MLP: 8 x Linear(512,512)+ReLU, batch 256, SGD",
    "conv": "conv net: ResNet-18 layout, batch 32 x 3x224x224, SGD momentum",
    "transformer": "TransformerEncoderLayer(1024, 16 heads, ff 4096), seq 512, batch 32, AdamW",
}

# (key, heading, worker arguments, recorder settings or None for untraced). The recorder's
# parts are the settings of preload/include/gpumemtrace/settings.h (docs/configuration.md).
ALL_COLUMNS = [
    ("plain", "plain", [], None),
    ("traced", "gpumemtrace defaults", [], {}),
    ("torch_python", "PyTorch history stacks=python", ["--history", "python"], None),
    ("torch_all", "PyTorch history stacks=all", ["--history", "all"], None),
    ("no_python", "gpumemtrace no Python frames", [], {"GPUMEMTRACE_PYTHON": "0"}),
    ("no_native", "gpumemtrace no native stacks", [], {"GPUMEMTRACE_STACK_DEPTH": "0"}),
    ("no_stacks", "gpumemtrace no stacks", [],
     {"GPUMEMTRACE_STACK_DEPTH": "0", "GPUMEMTRACE_PYTHON": "0"}),
    ("no_blocks", "gpumemtrace no block events", [], {"GPUMEMTRACE_CACHING_ALLOCATOR": "0"}),
]
if os.environ.get("FRAMEWORK_BENCH_BASELINE"):
    ALL_COLUMNS.append(("baseline", "baseline library defaults", [],
                        {"LD_PRELOAD": os.environ["FRAMEWORK_BENCH_BASELINE"]}))

# What each part of the recorder costs: the columns that differ by that part alone, one
# switched off after another, compared round by round (PARTS' figures are paired ratios:
# the host's drift between rounds, which moves every column alike, cancels).
PARTS = [
    ("native stacks", "traced", "no_native"),
    ("Python frames", "no_native", "no_stacks"),
    ("block events, without stacks", "no_stacks", "no_blocks"),
    ("the library without block events", "no_blocks", "plain"),
]


def chosen_columns(columns, wanted):
    """The columns named in `wanted` (FRAMEWORK_BENCH_COLUMNS, comma-separated keys; empty:
    all), plain always first: fewer columns make shorter rounds, so more of them fit."""
    keys = [k for k in wanted.split(",") if k]
    if not keys:
        return columns
    unknown = sorted(set(keys) - {k for k, _, _, _ in columns})
    if unknown:
        raise ValueError(f"FRAMEWORK_BENCH_COLUMNS: unknown columns {unknown}; known: "
                         f"{[k for k, _, _, _ in columns]}")
    return [c for c in columns if c[0] == "plain" or c[0] in keys]


COUNT_STEPS = 30  # steps between the phase marks of the counting worker (after as many warm-up)
FIRST_WARMUP = 10  # steps before the plain worker's timing sets the block size


class WorkerFailed(RuntimeError):
    pass


class Worker:
    """One worker process: JSON commands in, REPLY lines out; stderr to a log."""

    def __init__(self, key, cmd, run_env, logs):
        self.key = key
        self.library = run_env.get("LD_PRELOAD", "")
        self.log = open(logs / f"bench_{key}.log", "w")
        self.proc = subprocess.Popen(cmd, env=run_env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log)
        self.buf = b""
        self.ready = None

    def ask(self, cmd, timeout):
        try:
            self.proc.stdin.write((json.dumps(cmd) + "\n").encode())
            self.proc.stdin.flush()
        except OSError as exc:
            raise WorkerFailed(f"{self.key}: {exc!r}; {self.tail()}")
        return self.answer(timeout)

    def answer(self, timeout):
        deadline = time.monotonic() + timeout
        while True:
            line, sep, rest = self.buf.partition(b"\n")
            if sep:
                self.buf = rest
                if line.startswith(REPLY):
                    return json.loads(line[len(REPLY):])
                self.log.write(f"stdout: {line.decode(errors='replace')}\n")
                continue
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.proc.stdout], [], [], left)[0]:
                raise WorkerFailed(f"{self.key}: no answer in {timeout:.0f}s; {self.tail()}")
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise WorkerFailed(f"{self.key}: exited rc={self.proc.wait()}; {self.tail()}")
            self.buf += chunk

    def tail(self):
        self.log.flush()
        return Path(self.log.name).read_text()[-300:]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b'{"cmd": "exit"}\n')
                self.proc.stdin.close()
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.log.close()


class Settings:
    def __init__(self, runs, dry_run):
        get = os.environ.get
        self.rounds = int(get("FRAMEWORK_BENCH_ROUNDS", max(runs, 3 if dry_run else 9)))
        # Rounds asked for by number alone are exactly that many (the commands of
        # docs/performance.md); otherwise rounds go on until the figure is precise.
        fixed = "FRAMEWORK_BENCH_ROUNDS" in os.environ and \
            "FRAMEWORK_BENCH_MAX_ROUNDS" not in os.environ
        self.max_rounds = max(self.rounds, int(get(
            "FRAMEWORK_BENCH_MAX_ROUNDS", self.rounds if fixed else 8 if dry_run else 400)))
        self.precision = float(get("FRAMEWORK_BENCH_PRECISION", "0.02"))
        self.steps = dict(kv.split("=") for kv in get("FRAMEWORK_BENCH_STEPS", "").split(",")
                          if kv)
        self.block_s = float(get("FRAMEWORK_BENCH_BLOCK_S", "0.05" if dry_run else "0.25"))
        self.budget_s = float(get("FRAMEWORK_BENCH_BUDGET_S", "120" if dry_run else "420"))
        self.shapes = [s for s in get("FRAMEWORK_BENCH_SHAPES", ",".join(SHAPES)).split(",")
                       if s]
        # 0: no profile; N: a profile of N blocks.
        self.perf_blocks = int(get("FRAMEWORK_BENCH_PERF", "8") or "8")
        self.perf = self.perf_blocks > 0
        self.history_entries = int(get("FRAMEWORK_BENCH_HISTORY_ENTRIES", "100000"))
        self.dry_run = dry_run
        self.columns = chosen_columns(ALL_COLUMNS, get("FRAMEWORK_BENCH_COLUMNS", ""))
        unknown = set(self.shapes) - set(SHAPES)
        if unknown:
            raise ValueError(f"unknown shapes {sorted(unknown)}; known: {list(SHAPES)}")


def worker_env(env, key, recorder, tmp):
    """PyTorch in its default caching mode, and only the recorder settings of the column."""
    run_env = dict(env.app_env) if recorder is None else env.traced_env(key)
    for k in [k for k in run_env if k.startswith("GPUMEMTRACE_")]:
        del run_env[k]
    run_env.pop("PYTORCH_NO_CUDA_MEMORY_CACHING", None)
    if recorder is None:
        run_env.pop("LD_PRELOAD", None)
        return run_env
    run_env.update(recorder)
    # A temporary folder, not OUT: these traces reach gigabytes and are not looked at.
    run_env["GPUMEMTRACE_OUTPUT"] = str(Path(tmp) / f"{key}.%p.gmtrace")
    return run_env


def start_workers(env, settings, tmp, workers):
    """Starts every column's worker and the counting one into `workers` (so that the caller
    closes whatever started), and waits until each has PyTorch loaded."""
    common = [sys.executable, "-u", str(WORKER), "--max-entries", str(settings.history_entries)]
    if settings.dry_run:
        common.append("--stand-in")
    for key, _, args, recorder in settings.columns:
        workers[key] = Worker(key, common + args, worker_env(env, key, recorder, tmp),
                              env.logs)
    workers["count"] = Worker("count", common + ["--mark-phases"],
                              worker_env(env, "count", {}, tmp), env.logs)
    for w in workers.values():
        w.ready = w.answer(300)
    return workers.pop("count")


def count_events(env, count, settings, tmp):
    """Events per step in a trace of the recorder's defaults, shape by shape: the events
    between the phase marks the counting worker writes around COUNT_STEPS steps."""
    try:
        for shape in settings.shapes:
            count.ask({"cmd": "warmup", "shape": shape, "steps": COUNT_STEPS}, 600)
            count.ask({"cmd": "time", "shape": shape, "steps": COUNT_STEPS}, 600)
    finally:
        count.close()  # the trace is whole once the worker has exited
    traces = sorted(Path(tmp).glob("count.*gmtrace"))
    if len(traces) != 1:
        raise RuntimeError(f"{len(traces)} traces from the counting worker")
    # Not through env.run, which would copy the whole dump into the logs.
    p = subprocess.run([str(env.cli), "dump", str(traces[0])], env=env.cli_env,
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"dump rc={p.returncode}: {p.stderr[-300:]}")
    marks, events = [], []
    for line in p.stdout.splitlines():
        r = json.loads(line)
        if r.get("record") == "phase":
            marks.append((r["time_ns"], r["name"]))
        elif r.get("record") == "event":
            events.append((r["time_ns"], r["event"]))
    (env.logs / "bench_count.dump.log").write_text(f"{len(marks)} marks, {len(events)} events\n")
    marks.sort()
    counted = {}
    for (t0, name), (t1, _) in zip(marks, marks[1:]):
        if name.startswith("framework_bench ") and name != "framework_bench idle":
            inside = [op for t, op in events if t0 <= t < t1]
            by_op = {op: inside.count(op) for op in sorted(set(inside))}
            counted[name.split(" ", 1)[1]] = {"events_per_step": len(inside) / COUNT_STEPS,
                                              "by_event": by_op, "block_ns": t1 - t0}
    return counted


def steps_for(shape, plain, settings):
    if shape in settings.steps:
        return int(settings.steps[shape])
    probe = plain.ask({"cmd": "time", "shape": shape, "steps": FIRST_WARMUP}, 600)
    return max(10, min(20000, math.ceil(settings.block_s * 1e3 / probe["ms_per_step"])))


def spread(values):
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4)
    return q[0], q[2]


def measuring_order(shapes, counted):
    """The shapes in ascending order of the events per second counted (those not counted
    last, each group as asked): the fewer events a second, the nearer plain and the sooner
    settled, and what a shape leaves of its share goes to the shapes after it."""
    def rate(shape):
        c = counted.get(shape)
        if not c or not c.get("block_ns"):
            return math.inf
        return c["events_per_step"] * COUNT_STEPS / c["block_ns"]
    return sorted(shapes, key=rate)


# Why a shape's rounds stopped (`stopped` in the JSON); the dry run replays the rule on them.
STOP_SETTLED = "settled: the median's interval at most {precision:g} wide"
STOP_MOST = "{rounds} rounds, the most asked"
STOP_BUDGET = "the shape's share of the budget spent"
STOP_PLAIN_FAILED = "the plain worker failed"


def stop_column(keys):
    """The column whose precision stops a shape's rounds: the defaults, else the first
    column beside plain; None when plain ran alone."""
    others = [k for k in keys if k != "plain"]
    return "traced" if "traced" in others else next(iter(others), None)


def settled(got, precision):
    """Whether the stopping column's median ratio to plain is known to `precision`: its
    90 % interval (median_ci, as reported) at most that wide."""
    key = stop_column(got)
    if key is None:
        return True
    ratios = paired_ratios(got, key, "plain")
    if len(ratios) < 2:
        return False
    low, high = median_ci(ratios)
    return high - low <= precision


def measure_shape(shape, workers, settings, shape_deadline, failures):
    """Interleaved rounds of one shape: {column: [per-round answers]}, steps, rounds, and
    why the rounds stopped."""
    live = {k: w for k, w in workers.items() if k not in failures}

    def warm_up(steps):
        for key, w in list(live.items()):
            try:
                w.ask({"cmd": "warmup", "shape": shape, "steps": steps}, 600)
            except WorkerFailed as exc:
                failures[key] = str(exc)
                del live[key]
        if "plain" not in live:
            raise WorkerFailed(f"plain worker: {failures.get('plain')}")

    warm_up(FIRST_WARMUP)
    steps = steps_for(shape, live["plain"], settings)
    # A whole block of warm-up more: the cache, the history's ring and the recorder's
    # tables are then in their steady state.
    warm_up(steps)
    got = {k: [] for k in live}
    order = list(live)
    round_s = 0.0
    stopped = STOP_MOST.format(rounds=settings.max_rounds)
    for i in range(settings.max_rounds):
        if i >= settings.rounds and settled(got, settings.precision):
            stopped = STOP_SETTLED.format(precision=settings.precision)
            break
        if i and time.monotonic() + round_s > shape_deadline:
            stopped = STOP_BUDGET
            break
        t0 = time.monotonic()
        answers = {}
        for key in order[i % len(order):] + order[:i % len(order)]:
            if key in failures:
                continue
            try:
                answers[key] = live[key].ask({"cmd": "time", "shape": shape, "steps": steps},
                                             600)
            except WorkerFailed as exc:
                failures[key] = str(exc)
        round_s = time.monotonic() - t0
        if "plain" not in answers:  # nothing to compare the round with
            stopped = STOP_PLAIN_FAILED
            break
        for key, v in got.items():
            v.append(answers.get(key))
    if not got["plain"]:
        raise WorkerFailed(f"plain worker: {failures.get('plain')}")
    return got, steps, len(got["plain"]), stopped


def median_ci(values, resamples=2000, level=0.9):
    """A bootstrap interval of the median (seeded, so the same rounds give the same interval):
    where the median of this many rounds could lie, given their spread."""
    if len(values) < 2:
        return values[0], values[0]
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(values, k=len(values)))
                     for _ in range(resamples))
    tail = int((1 - level) / 2 * resamples)
    return medians[tail], medians[resamples - 1 - tail]


def ratio_stats(ratios):
    """Per-round ratios, their median with its interval, their IQR and range."""
    return {"ratios": ratios, "ratio_median": statistics.median(ratios),
            "ratio_iqr": spread(ratios), "ratio_median_ci90": median_ci(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios)}


def paired_ratios(got, key, over):
    """Column `key`'s ms/step over column `over`'s, round by round, where both answered."""
    return [a["ms_per_step"] / b["ms_per_step"] for a, b in zip(got[key], got[over])
            if a is not None and b is not None]


def summarize(got):
    out = {}
    for key, answers in got.items():
        ms = [a["ms_per_step"] for a in answers if a is not None]
        if not ms:
            continue
        ratios = paired_ratios(got, key, "plain")  # plain answered every round kept
        tensor = [a["tensor_events_per_step"] for a in answers if a is not None]
        out[key] = {"rounds": len(ms), "ms_per_step": ms,
                    "ms_median": statistics.median(ms), "ms_min": min(ms), "ms_max": max(ms),
                    **ratio_stats(ratios),
                    "wall_ms_median": statistics.median(
                        a["wall_ms_per_step"] for a in answers if a is not None),
                    "tensor_events_per_step": tensor[0] if tensor else None}
    return out


# The recorder's own code by part, from its symbols' namespaces (preload/python is
# gmt::preload::python, preload/unwind_cache.cpp gmt::preload::unwind); whatever else runs
# in the library is the recording itself (the event, its stack's id, the ring, the writer).
RECORDER_PARTS = [
    ("Python frames", "gmt::preload::python::"),
    ("native unwinding", "gmt::preload::unwind::"),
]
RECORDING = "recording and the rest"
WRITER_THREAD = "gpumemtrace"


def recorder_part(sym, comm):
    """Which RECORDER_PARTS a sample of the library is in. CRC-32C on a thread of the program
    is the per-event check of code objects that carry no version (CPython 3.10, 3.11:
    preload/python/code_table.cpp); on the writer thread it is the log frames' checksum."""
    if sym.startswith("gmt::format::detail::crc32c") and comm != WRITER_THREAD:
        return RECORDER_PARTS[0][0]
    return next((name for name, prefix in RECORDER_PARTS if sym.startswith(prefix)), RECORDING)


def perf_rows(text):
    """The rows of `perf report -F overhead,sample,period,comm,dso,sym -t TAB`: (samples,
    period, thread name, shared object, symbol); the period is CPU nanoseconds (cpu-clock)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        cells = [c.strip() for c in line.split("\t")]
        if len(cells) != 6 or not cells[1].isdigit() or not cells[2].isdigit():
            continue
        rows.append((int(cells[1]), int(cells[2]), cells[3], cells[4],
                     re.sub(r"^\[.\]\s*", "", cells[5])))
    return rows


def recorder_cpu(rows, library, steps):
    """What the profile says the recorder costs each step, in microseconds of CPU: per
    thread (its own and the program's, with each thread's whole CPU beside it), per part
    (RECORDER_PARTS), and its top symbols; and the shares of the process's samples."""
    per_step = 1e-3 / steps  # ns of the whole profile -> us per step
    total = sum(period for _, period, _, _, _ in rows) or 1
    threads, symbols = {}, {}
    parts = {name: 0 for name in [*(n for n, _ in RECORDER_PARTS), RECORDING]}
    ours = 0
    for _, period, comm, dso, sym in rows:
        t = threads.setdefault(comm, {"cpu_us_per_step": 0.0, "recorder_us_per_step": 0.0})
        t["cpu_us_per_step"] += period * per_step
        if Path(dso).name != library:
            continue
        ours += period
        t["recorder_us_per_step"] += period * per_step
        parts[recorder_part(sym, comm)] += period
        symbols[sym] = symbols.get(sym, 0) + period
    top = sorted(symbols.items(), key=lambda kv: -kv[1])[:8]
    return {"library": library, "samples": sum(n for n, _, _, _, _ in rows),
            "recorder_percent": 100 * ours / total,
            "recorder_us_per_step": ours * per_step,
            "parts_us_per_step": {k: v * per_step for k, v in parts.items()},
            "threads": dict(sorted(threads.items(), key=lambda kv: -kv[1]["cpu_us_per_step"])),
            "top_symbols": [(sym, round(v * per_step, 2)) for sym, v in top]}


def bench_perf(build, path=None):
    """The host's perf (on `path`, else the PATH), else the one scripts/gpu-bundle.sh carried
    into the bundle's tools/ (it finds its own libraries; GPU hosts may have no perf); None
    when neither is there."""
    carried = Path(build) / "tools" / "perf"
    return shutil.which("perf", path=path) or \
        (str(carried) if os.access(carried, os.X_OK) else None)


def perf_profile(env, worker, shape, steps, tmp, key="traced"):
    """More blocks of a traced worker under `perf record` (every thread of the process):
    recorder_cpu() of its samples."""
    perf = bench_perf(env.build)
    if not perf:
        return None, "perf is neither on the PATH nor in the bundle's tools/"
    label = shape if key == "traced" else f"{shape}_{key}"
    data = Path(tmp) / f"perf_{label}.data"
    log = open(env.logs / f"bench_perf_{label}.record.log", "w")
    rec = subprocess.Popen([perf, "record", "-e", "cpu-clock", "-F", "1999", "-p",
                            str(worker.ready["pid"]), "-o", str(data)], stdout=log, stderr=log)
    time.sleep(1.0)  # perf attaches to each thread before it counts
    if rec.poll() is not None:
        log.close()
        return None, f"perf record exited rc={rec.returncode}: " + \
            (env.logs / f"bench_perf_{label}.record.log").read_text()[-200:]
    worker.ask({"cmd": "time", "shape": shape, "steps": steps}, 600)
    rec.send_signal(signal.SIGINT)
    try:
        rec.wait(timeout=120)
    except subprocess.TimeoutExpired:
        rec.kill()
        rec.wait()
    log.close()
    # perf with its own libraries, not the CLI's (gpu-libs).
    p, _ = env.run(f"bench_perf_{label}.report",
                   [perf, "report", "-i", str(data), "--stdio", "--no-children", "--sort",
                    "comm,dso,sym", "-F", "overhead,sample,period,comm,dso,sym", "-t", "\t"],
                   env=dict(os.environ))
    rows = perf_rows(p.stdout)
    if not rows:
        return None, f"perf report gave no samples: {p.stderr[-200:]}"
    return recorder_cpu(rows, Path(worker.library).name, steps), None


def profile_line(prof, r):
    """The perf row: the recorder's CPU per step against the step, by part and by thread."""
    step_us = 1e3 * r["columns"]["plain"]["ms_median"]
    parts = ", ".join(f"{k} {v:.1f}" for k, v in prof["parts_us_per_step"].items())
    threads = ", ".join(f"'{k}' {t['recorder_us_per_step']:.1f} of {t['cpu_us_per_step']:.0f}"
                        for k, t in prof["threads"].items() if t["recorder_us_per_step"] > 0)
    return (f"{prof['library']} {prof['recorder_us_per_step']:.1f} us of CPU per step "
            f"(plain step {step_us:.0f} us of GPU time; {prof['recorder_percent']:.1f}% of the "
            f"process's {prof['samples']} samples); by part: {parts}; by thread (the "
            f"recorder's of the thread's): {threads}; top symbols (us/step) "
            f"{prof['top_symbols'][:5]}")


def part_costs(got):
    """PARTS whose two columns both ran: the per-round ratio of the first column's ms/step
    to the second's, over the rounds where both answered."""
    out = {}
    for name, with_key, without_key in PARTS:
        if with_key not in got or without_key not in got:
            continue
        ratios = paired_ratios(got, with_key, without_key)
        if ratios:
            out[name] = {"columns": [with_key, without_key], "rounds": len(ratios),
                         **ratio_stats(ratios)}
    return out


def fmt_ratio(s):
    lo, hi = s["ratio_iqr"]
    clo, chi = s["ratio_median_ci90"]
    return f"{s['ratio_median']:.3f}x (IQR {lo:.3f}-{hi:.3f}; median {clo:.3f}-{chi:.3f})"


def markdown(result):
    columns = list(result["columns"].items())  # (key, heading), plain first
    heads = [h for _, h in columns[1:]]
    lines = [f"Framework benchmark: {result['machine']}; python {result['python']}, torch "
             f"{result['torch'] or '-'}; load average {result['loadavg_start']} at the start, "
             f"{result['loadavg_end']} at the end; {result['seconds']:.0f} s.", "",
             "Median per-round ratio to plain (IQR of the ratios; median: a 90 % bootstrap "
             "interval of the median); plain in ms/step (GPU "
             "time, CUDA events, min-max over rounds).", "",
             "| shape | rounds x steps | events/step (trace) | events/s at plain speed | plain "
             "ms/step | " + " | ".join(heads) + " |",
             "|---|---|---:|---:|---:|" + "---:|" * len(heads)]
    for shape, r in result["shapes"].items():
        s = r.get("columns", {})
        if "plain" not in s:
            lines.append(f"| {shape} | failed: {r.get('error', 'not measured')[:120]} |")
            continue
        p = s["plain"]
        ev = r.get("events_per_step")
        rate = f"{ev / p['ms_median'] * 1e3:,.0f}" if ev else "-"
        cells = [fmt_ratio(s[k]) if k in s else "failed" for k, _ in columns[1:]]
        lines.append(f"| {shape} | {r['rounds']} x {r['steps']} | {ev if ev else '-'} | {rate} | "
                     f"{p['ms_median']:.3f} ({p['ms_min']:.3f}-{p['ms_max']:.3f}) | "
                     + " | ".join(cells) + " |")
    stops = [f"{shape}: {r['stopped']}" for shape, r in result["shapes"].items() if "stopped" in r]
    if stops:
        lines += ["", "Rounds stopped (" + "; ".join(stops) + ")."]
    lines += ["", "| shape | column | ms/step median | min-max | x plain median | IQR | "
              "min-max |", "|---|---|---:|---:|---:|---:|---:|"]
    for shape, r in result["shapes"].items():
        for key, head in columns:
            c = r.get("columns", {}).get(key)
            if c:
                lines.append(f"| {shape} | {head} | {c['ms_median']:.3f} | {c['ms_min']:.3f}-"
                             f"{c['ms_max']:.3f} | {c['ratio_median']:.3f} | "
                             f"{c['ratio_iqr'][0]:.3f}-{c['ratio_iqr'][1]:.3f} | "
                             f"{c['ratio_min']:.3f}-{c['ratio_max']:.3f} |")
    costs = [(shape, name, c) for shape, r in result["shapes"].items()
             for name, c in r.get("parts", {}).items()]
    if costs:
        lines += ["", "What each part costs: per round, the column with it over the column "
                  "without it (median, its 90 % interval, IQR).", "",
                  "| shape | part | columns | rounds | ratio | median interval | IQR |",
                  "|---|---|---|---:|---:|---:|---:|"]
        heading = dict(columns)
        for shape, name, c in costs:
            a, b = c["columns"]
            lines.append(f"| {shape} | {name} | {heading[a]} / {heading[b]} | {c['rounds']} | "
                         f"{c['ratio_median']:.3f} | {c['ratio_median_ci90'][0]:.3f}-"
                         f"{c['ratio_median_ci90'][1]:.3f} | {c['ratio_iqr'][0]:.3f}-"
                         f"{c['ratio_iqr'][1]:.3f} |")
    return "\n".join(lines) + "\n"


def report_shape(row, shape, r, heads, failures):
    """`heads`: the heading of each column run, by key."""
    s = r["columns"]
    ev = r.get("events_per_step")
    events = (f"{ev:.0f} recorder events per step ({ev / s['plain']['ms_median'] * 1e3:,.0f}/s "
              f"at plain speed; {r['events_by_type']})" if ev else "events not counted")
    tensor = s["plain"]["tensor_events_per_step"]
    parts = [events + (f"; PyTorch's memory_stats: {tensor:.0f} block and segment allocations "
                       f"and frees per step" if tensor is not None else ""),
             f"plain {s['plain']['ms_median']:.3f} ms/step ({s['plain']['ms_min']:.3f}-"
             f"{s['plain']['ms_max']:.3f})"]
    parts += [f"{heads[k]} {fmt_ratio(s[k])}" for k in heads if k != "plain" and k in s]
    parts += [f"{heads[k]} failed: {failures[k][:150]}" for k in heads if k in failures]
    parts.append(f"rounds stopped: {r['stopped']}")
    row(f"framework bench {shape}: {SHAPES[shape]} ({r['rounds']} interleaved rounds x "
        f"{r['steps']} steps)", None, "; ".join(parts))
    if r.get("parts"):
        row(f"framework bench {shape}: what each part costs (paired ratio of the columns with "
            f"and without it)", None,
            "; ".join(f"{name} {fmt_ratio(c)}" for name, c in r["parts"].items()))
    if "traced" not in s:
        return
    t = s["traced"]["ratio_median"]
    lo, hi = s["traced"]["ratio_median_ci90"]
    # Said of the interval, not of the median alone: a median within the noise of the target
    # shows neither.
    shown = "within" if hi <= 1.05 else "above" if lo > 1.05 else "not resolved from"
    verdict = [f"gpumemtrace defaults {t:.3f}x plain (median {lo:.3f}-{hi:.3f}): {shown} 1.05x"]
    if "torch_python" in s:
        py = s["torch_python"]["ratio_median"]
        below = sum(a < b for a, b in zip(s["traced"]["ratios"], s["torch_python"]["ratios"]))
        verdict.append(f"PyTorch history stacks=python {py:.3f}x: gpumemtrace "
                       f"{'below' if t < py else 'not below'} it (below in {below} of "
                       f"{min(len(s['traced']['ratios']), len(s['torch_python']['ratios']))} "
                       f"rounds)")
    row(f"framework bench {shape}: target <= 1.05x plain and below PyTorch's python-only "
        f"history", None, "; ".join(verdict))


def check_framework_bench(env, row, runs, dry_run=False):
    settings = Settings(runs, dry_run)
    started = time.monotonic()
    deadline = started + settings.budget_s
    result = {"machine": machine(), "python": sys.version.split()[0], "torch": None,
              "loadavg_start": load(),
              "settings": {k: v for k, v in vars(settings).items() if k != "columns"},
              "columns": {k: h for k, h, _, _ in settings.columns}, "shapes": {}}
    tmp = tempfile.mkdtemp(prefix="gmt-framework-bench-")
    workers, failures = {}, {}
    try:
        count = start_workers(env, settings, tmp, workers)
        result["stand_in_pairs"] = count.ready.get("stand_in_pairs")
        result["torch"] = count.ready.get("torch")
        result["history_call"] = {k: workers[k].ready.get("history")
                                  for k in ("torch_python", "torch_all") if k in workers}
        try:
            counted = count_events(env, count, settings, tmp)
        except (RuntimeError, WorkerFailed) as exc:
            counted = {}
            row("framework bench: events per step from the trace", False, repr(exc)[:300])
        profiles = {}
        for shape in settings.shapes:  # the tables' order: as asked
            result["shapes"][shape] = {"title": SHAPES[shape]}
        order = measuring_order(settings.shapes, counted)
        for n, shape in enumerate(order):
            perf_reserve = 15 if settings.perf else 0
            left = deadline - time.monotonic() - perf_reserve * (len(order) - n)
            shape_deadline = time.monotonic() + left / (len(order) - n)
            r = result["shapes"][shape]
            try:
                got, steps, rounds, stopped = measure_shape(shape, workers, settings,
                                                            shape_deadline, failures)
            except WorkerFailed as exc:
                r["error"] = str(exc)
                row(f"framework bench {shape}", False, str(exc)[:300])
                continue
            r.update(steps=steps, rounds=rounds, stopped=stopped, columns=summarize(got),
                     parts=part_costs(got))
            c = counted.get(shape, {})
            r["events_per_step"] = c.get("events_per_step")
            r["events_by_type"] = {k: v / COUNT_STEPS for k, v in c.get("by_event", {}).items()}
            report_shape(row, shape, r, result["columns"], failures)
            profiled = [k for k in ("traced", "baseline") if k in workers and settings.perf]
            for key in profiled:
                if key in failures:
                    continue
                try:
                    prof, why = perf_profile(env, workers[key], shape,
                                             steps * settings.perf_blocks, tmp, key)
                except WorkerFailed as exc:
                    failures[key] = str(exc)
                    prof, why = None, f"the worker failed: {exc}"
                profiles[shape if key == "traced" else f"{shape} {key}"] = prof or why
                row(f"framework bench {shape}: perf profile of "
                    f"{result['columns'][key]}", None, why or profile_line(prof, r))
            if not settings.perf:
                row(f"framework bench {shape}: perf profile", None,
                    "skipped (FRAMEWORK_BENCH_PERF=0)")
        result["perf"] = profiles
        done = [r for r in result["shapes"].values() if "columns" in r]
        short = [s for s, r in result["shapes"].items() if r.get("rounds", 0) < settings.rounds]
        row("framework bench: every shape and column measured", bool(done) and not failures
            and len(done) == len(settings.shapes),
            f"{len(done)} of {len(settings.shapes)} shapes, columns failed: "
            f"{sorted(failures) or 'none'}; rounds asked {settings.rounds}"
            + (f", fewer in {short} (the budget of {settings.budget_s:.0f} s)" if short else "")
            + f"; {time.monotonic() - started:.0f} s")
    except (WorkerFailed, RuntimeError, ValueError) as exc:
        row("framework bench", False, repr(exc)[:300])
    finally:
        for w in workers.values():
            w.close()
        shutil.rmtree(tmp, ignore_errors=True)
        result["seconds"] = time.monotonic() - started
        result["loadavg_end"] = load()
        result["failures"] = failures
        (env.out / "framework_bench.json").write_text(json.dumps(result, indent=1) + "\n")
        (env.out / "framework_bench.md").write_text(markdown(result))


def load():
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine():
    try:
        p = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        gpu = p.stdout.strip() or "no GPU"
    except (OSError, subprocess.TimeoutExpired):
        gpu = "no nvidia-smi"
    return f"{gpu}, {os.cpu_count()} cores"


def check_dry_run(env, row):
    """The stand-in's steps make a known number of cudaMalloc/cudaFree pairs: the count
    from the trace must be exactly twice that, every column (those named in
    FRAMEWORK_BENCH_COLUMNS, else all) must have every round."""
    result = json.loads((env.out / "framework_bench.json").read_text())
    pairs = result.get("stand_in_pairs") or {}
    named = {k for k in os.environ.get("FRAMEWORK_BENCH_COLUMNS", "").split(",") if k}
    expected = ({"plain"} | named) if named else {k for k, _, _, _ in ALL_COLUMNS}
    # A part is costed exactly when both of its columns ran.
    expected_parts = {name for name, a, b in PARTS if {a, b} <= expected}
    for shape, r in result["shapes"].items():
        rounds = {k: c["rounds"] for k, c in r.get("columns", {}).items()}
        row(f"dry run {shape}: events counted in the trace, every column every round",
            r.get("events_per_step") == 2 * pairs.get(shape, -1) and
            set(rounds) == expected and set(rounds.values()) == {r.get("rounds")},
            f"{r.get('events_per_step')} events per step for {pairs.get(shape)} pairs; "
            f"rounds per column {rounds}")
        costed = {name: c["rounds"] for name, c in r.get("parts", {}).items()}
        row(f"dry run {shape}: each part costed from its two columns, every round",
            set(costed) == expected_parts and
            set(costed.values()) <= {r.get("rounds")}, f"parts {costed}")
        stop_ok, why = stop_replayed(result["settings"], r)
        row(f"dry run {shape}: the rounds stopped where the rule says", stop_ok, why)


def check_perf_reading(row):
    """recorder_cpu() on a stored report (PERF_REPORT: the stand-in's MLP traced on CPython
    3.11, by this script's own `perf report` command) against what perf itself printed in
    it: its sample count, its event count (CPU ns), and the Overhead column of the library's
    rows; every part and every thread adding up to the library's whole; CRC-32C counted in
    the Python frames on the program's thread, in the recording on the writer's."""
    text = PERF_REPORT.read_text()
    steps = 1000  # a scale only: the figures are per step
    got = recorder_cpu(perf_rows(text), "libgpumemtrace.so", steps)
    header = {k: int(re.search(rf"^# {k}: (\d+)", text, re.M).group(1))
              for k in ("Samples", r"Event count \(approx\.\)")}
    cells = [[c.strip() for c in line.split("\t")] for line in text.splitlines()
             if not line.startswith("#") and line.count("\t") == 5]
    ours = [c for c in cells if c[4] == "libgpumemtrace.so"]
    overhead = sum(float(c[0].rstrip("%")) for c in ours)
    total_ns = sum(t["cpu_us_per_step"] for t in got["threads"].values()) * steps * 1e3

    def ns(match):
        return sum(int(c[2]) for c in ours if match(c)) * 1e-3 / steps

    crc = ns(lambda c: "crc32c" in c[5] and c[3] != WRITER_THREAD)
    python = ns(lambda c: c[5].startswith("[.] gmt::preload::python::"))
    parts, whole = got["parts_us_per_step"], got["recorder_us_per_step"]
    checks = {
        "samples": got["samples"] == header["Samples"],
        "CPU ns": abs(total_ns - header[r"Event count \(approx\.\)"]) < 1,
        "overhead": abs(got["recorder_percent"] - overhead) <= 0.01 * len(ours),
        "parts add up": abs(sum(parts.values()) - whole) < 1e-9 * whole,
        "threads add up": abs(sum(t["recorder_us_per_step"] for t in
                                  got["threads"].values()) - whole) < 1e-9 * whole,
        "CRC-32C": crc > 0 and abs(parts["Python frames"] - python - crc) < 1e-9 * whole,
    }
    row("dry run: a perf report read as the bench reads it", all(checks.values()),
        f"{checks}; {got['samples']} samples, recorder {whole:.1f} us/step "
        f"({got['recorder_percent']:.2f}% against perf's {overhead:.2f}%), parts {parts}")


def check_perf_lookup(row):
    """bench_perf() on a made-up host and bundle: the host's perf first, the bundle's where
    the host has none, none where the bundle's is not executable."""
    with tempfile.TemporaryDirectory() as tmp:
        host, bundle, empty = (Path(tmp) / d for d in ("host", "bundle", "empty"))
        for d in (host, bundle / "tools", empty):
            d.mkdir(parents=True)
        for perf in (host / "perf", bundle / "tools" / "perf"):
            perf.write_text("#!/bin/sh\n")
            perf.chmod(0o755)
        got = {"host first": bench_perf(bundle, str(host)) == str(host / "perf"),
               "bundle's": bench_perf(bundle, str(empty)) == str(bundle / "tools" / "perf")}
        (bundle / "tools" / "perf").chmod(0o644)
        got["not executable"] = bench_perf(bundle, str(empty)) is None
    row("dry run: which perf profiles (the host's, else the bundle's)", all(got.values()),
        str(got))


def stop_replayed(settings, r):
    """The stopping rule replayed on the rounds kept: (whether the shape stopped where the
    rule says, what was seen). "settled" must be the first round count from the least on
    whose interval is narrow enough; "the most asked" must have no such count before it."""
    low, high = settings["rounds"], settings["max_rounds"]
    key = stop_column(r.get("columns", {}))
    n, stopped = r.get("rounds", 0), r.get("stopped", "")
    if key is None:
        return False, f"no column beside plain; {n} rounds, stopped: {stopped}"
    ratios = r["columns"][key]["ratios"]

    def width(m):
        lo, hi = median_ci(ratios[:m])
        return hi - lo

    first = next((m for m in range(max(low, 2), min(high, len(ratios)) + 1)
                  if width(m) <= settings["precision"]), None)
    seen = f"{n} rounds (least {low}, most {high}), stopped: {stopped}; first settled: {first}"
    if stopped == STOP_SETTLED.format(precision=settings["precision"]):
        return first == n, seen
    if stopped == STOP_MOST.format(rounds=high):
        return n == high and (first is None or first >= high), seen
    return stopped == STOP_BUDGET and low <= n < high, seen


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=0,
                    help="exactly this many rounds (FRAMEWORK_BENCH_ROUNDS)")
    ap.add_argument("--dry-run", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    import gpu_validate as gv
    env = gv.Env(args.build, args.out)
    if args.dry_run:
        cudasim = env.build / "lib" / "cudasim"
        if not (cudasim / "libcudart.so.13").exists() or not env.lib.exists():
            print("SKIP: the recorder or the simulated CUDA is not built")
            return 77
        for e in (env.app_env, env.cli_env):
            e["LD_LIBRARY_PATH"] = str(cudasim)
        env.app_env["GMT_STANDIN_CUDART"] = str(cudasim / "libcudart.so.13")
        os.environ.setdefault("FRAMEWORK_BENCH_PERF", "0")
    if args.rounds:
        os.environ["FRAMEWORK_BENCH_ROUNDS"] = str(args.rounds)
    try:
        check_framework_bench(env, gv.row, 0, args.dry_run)
    except ValueError as exc:  # a setting that names nothing known
        print(f"gpu_framework_bench.py: {exc}", file=sys.stderr)
        return 2
    if args.dry_run:
        check_dry_run(env, gv.row)
        check_perf_reading(gv.row)
        check_perf_lookup(gv.row)
    print((env.out / "framework_bench.md").read_text())
    return 1 if any(s == "FAIL" for _, s, _ in gv.ROWS) else 0


if __name__ == "__main__":
    sys.exit(main())
