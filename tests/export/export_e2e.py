#!/usr/bin/env python3
"""End-to-end tests of `gpumemtrace export`: every format read back the way its viewer or
engine reads it, and its figures compared with the JSON report of the same traces.

    export_e2e.py --case NAME --gpumemtrace BIN --make-traces BIN --samples DIR --probe BIN
                  --cudasim DIR --node BIN --node-modules DIR --chromium BIN --workdir DIR

Traces: the crafted ones of export_traces.cpp (two GPUs, two ranks sharing a pid, every way
an allocation ends) and the samples recorded on the simulated CUDA.
Exit 0 pass, 1 fail, 77 skipped (something the case needs is not there).
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
from e2e_case import Skip, expect, fail, run_case  # noqa: E402
from memory_viz_snapshot import load_snapshot  # noqa: E402

ARGS = None

ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom"}
SAMPLES = ["leak_loop", "stream_pool", "fragmentation", "oom", "vmm"]


def expect_eq(actual, expected, message):
    if actual != expected:
        fail("%s: got %r, expected %r" % (message, actual, expected))


def run(args, timeout=300, **kwargs):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = ARGS.cudasim
    env.pop("LD_PRELOAD", None)
    return subprocess.run(args, capture_output=True, timeout=timeout, env=env, cwd=ARGS.workdir,
                          **kwargs)


def gmt(*args, **kwargs):
    r = run([ARGS.gpumemtrace] + list(args), text=True, **kwargs)
    return r


def gmt_ok(*args):
    r = gmt(*args)
    expect(r.returncode == 0, "gpumemtrace " + " ".join(args), r)
    return r


def crafted():
    """The two crafted traces (rank0, rank1)."""
    r = run([ARGS.make_traces, ARGS.workdir], text=True)
    expect(r.returncode == 0, "export_traces", r)
    return [os.path.join(ARGS.workdir, "rank0.gmtrace"), os.path.join(ARGS.workdir, "rank1.gmtrace")]


def record_sample(name):
    """Records build/samples/NAME on the simulated CUDA; returns its traces."""
    program = os.path.join(ARGS.samples, name)
    if not os.path.exists(os.path.join(ARGS.cudasim, "libcudart.so.13")):
        raise Skip("simulated CUDA not built in " + ARGS.cudasim)
    if not os.path.exists(program):
        raise Skip("sample not built: " + program)
    prefix = "sample-" + name
    r = gmt("record", "-q", "-o", prefix + ".%p.gmtrace", "--", program)
    expect(r.returncode == 0, "record " + name, r)
    traces = sorted(os.path.join(ARGS.workdir, f) for f in os.listdir(ARGS.workdir)
                    if f.startswith(prefix + ".") and f.endswith(".gmtrace"))
    expect(traces, "record wrote no trace for " + name, r)
    return traces


def report(traces):
    r = gmt_ok("report", "--format", "json", "--top", "1000000", *traces)
    return json.loads(r.stdout)


def summed(rows, key):
    return sum(row[key] for row in rows)


# ----- memory-viz ------------------------------------------------------------------------

def check_snapshot_shape(snapshot):
    expect(isinstance(snapshot, dict), "a snapshot is a dict")
    expect({"segments", "device_traces"} <= set(snapshot), "snapshot keys: %s" % list(snapshot))
    expect(all(isinstance(t, list) for t in snapshot["device_traces"]), "device_traces: lists")
    for device, trace in enumerate(snapshot["device_traces"]):
        last = 0
        for e in trace:
            expect(e["action"] in ACTIONS, "action %r" % e["action"])
            for key in ("addr", "size", "stream", "time_us"):
                expect(isinstance(e[key], int) and e[key] >= 0, "%s of %r" % (key, e))
            expect(e["time_us"] >= last, "device %d: entries in time order" % device)
            last = e["time_us"]
            expect(isinstance(e["frames"], list), "frames is a list")
            for f in e["frames"]:
                expect(set(f) == {"name", "filename", "line"}, "frame keys %r" % f)
                expect(isinstance(f["name"], str) and isinstance(f["filename"], str)
                       and isinstance(f["line"], int), "frame types %r" % f)
            if e["action"] == "oom":
                expect("device_free" in e, "oom has device_free")
    for seg in snapshot["segments"]:
        for key in ("device", "address", "total_size", "allocated_size", "active_size",
                    "requested_size", "stream", "segment_type", "blocks", "frames"):
            expect(key in seg, "segment key " + key)
        expect(len(seg["blocks"]) == 1, "one block per segment")
        block = seg["blocks"][0]
        expect(block["address"] == seg["address"] and block["size"] == seg["total_size"]
               and block["state"] == "active_allocated", "the block is the whole segment")


def replay(snapshot):
    """Per device: live bytes at most, and what is live at the end, replaying the entries the
    way the viewer's timeline does (alloc adds, free_completed removes)."""
    peaks, live_end = {}, {}
    for device, trace in enumerate(snapshot["device_traces"]):
        live, segs, peak = {}, {}, 0
        for e in trace:
            if e["action"] == "alloc":
                expect(e["addr"] in segs, "alloc inside a segment_alloc'd segment")
                expect(e["addr"] not in live, "alloc of a live block")
                live[e["addr"]] = e["size"]
            elif e["action"] == "free_completed":
                expect(live.pop(e["addr"], None) == e["size"], "free_completed of a live block")
            elif e["action"] == "segment_alloc":
                segs[e["addr"]] = e["size"]
            elif e["action"] == "segment_free":
                expect(e["addr"] not in live, "segment freed after its block")
                expect(segs.pop(e["addr"], None) == e["size"], "segment_free of a segment")
            peak = max(peak, sum(live.values()))
        peaks[device] = peak
        live_end[device] = live
    held = {(s["device"], s["address"]): s["total_size"] for s in snapshot["segments"]}
    ended = {(d, a): size for d, live in live_end.items() for a, size in live.items()}
    expect_eq(held, ended, "segments are exactly the blocks live at the end")
    return peaks


POINTER_KINDS = {"device", "pool", "managed"}


def check_against_report(snapshot, rep, pid=None):
    peaks = replay(snapshot)
    leaks = [l for l in rep["leaks"] if (pid is None or l["pid"] == pid)]
    pointer_leaks = [l for l in leaks if l["kind"] in POINTER_KINDS and not l["released_by_teardown"]]
    expect_eq(sum(s["total_size"] for s in snapshot["segments"]), summed(pointer_leaks, "bytes"),
              "segments hold the report's leaked device/pool/managed bytes")
    expect_eq(len(snapshot["segments"]), summed(pointer_leaks, "allocations"),
              "one segment per leaked allocation")
    pointer_only = all(kind in POINTER_KINDS or k["allocations"] == 0
                       for kind, k in rep["kinds"].items())
    if pointer_only and pid is None:
        for d in rep["devices"]:
            expect_eq(peaks.get(d["ordinal"], 0), d["peak_bytes"],
                      "device %d: live bytes at the peak" % d["ordinal"])
    ooms = sum(1 for t in snapshot["device_traces"] for e in t if e["action"] == "oom")
    failures = [f for f in rep["failures"] if (pid is None or f["pid"] == pid)
                and f["result"] == 2 and f["device"] >= 0]
    expect_eq(ooms, len(failures), "one oom entry per out-of-memory failure")
    return peaks


def test_memory_viz():
    traces = crafted()
    out = os.path.join(ARGS.workdir, "viz")
    gmt_ok("export", "--format", "memory-viz", "-o", out, *traces)
    expect_eq(sorted(os.listdir(out)), ["rank0.pickle", "rank1.pickle"], "one snapshot per trace")
    rep0 = report(traces[:1])
    snap0 = load_snapshot(os.path.join(out, "rank0.pickle"))
    check_snapshot_shape(snap0)
    expect_eq(len(snap0["device_traces"]), 2, "rank0: GPUs 0 and 1")
    peaks = check_against_report(snap0, rep0)
    # rank0 has pinned, array and VMM memory the snapshot leaves out: its GPU 0 timeline
    # peaks at 1 MiB + 4 KiB (device + pool); GPU 1 at 5 MiB + 3 MiB after its reset.
    expect_eq(peaks, {0: (1 << 20) + 4096, 1: 8 << 20}, "rank0 peaks")
    actions1 = [e["action"] for e in snap0["device_traces"][1]]
    expect_eq(actions1[:5], ["segment_alloc", "alloc", "free_requested", "free_completed",
                             "segment_free"], "GPU 1: the allocation the reset released ends")
    pool = [e for e in snap0["device_traces"][0] if e["addr"] == 0x500000]
    expect(pool and all(e["stream"] == 7 for e in pool), "pool entries keep their stream")
    oom = [e for e in snap0["device_traces"][0] if e["action"] == "oom"]
    expect_eq([(e["size"], e["device_free"]) for e in oom], [(80 << 30, 1 << 30)], "oom entry")
    expect(all(e["time_us"] >= 1_700_000_000_000_000 for e in snap0["device_traces"][0]),
           "time_us is wall-clock microseconds, as torch writes it")
    rep1 = report(traces[1:])
    snap1 = load_snapshot(os.path.join(out, "rank1.pickle"))
    check_snapshot_shape(snap1)
    check_against_report(snap1, rep1)
    # One trace: -o is the file; several without -o: one line, exit 2.
    single = os.path.join(ARGS.workdir, "one.pickle")
    gmt_ok("export", "--format", "memory-viz", "-o", single, traces[1])
    expect_eq(load_snapshot(single), snap1, "the same snapshot alone or with others")
    r = gmt("export", "--format", "memory-viz", *traces)
    one_line_error(r)


def test_memory_viz_samples():
    for name in SAMPLES:
        traces = record_sample(name)
        rep = report(traces)
        out = os.path.join(ARGS.workdir, name + ".pickle")
        gmt_ok("export", "--format", "memory-viz", "-o", out, *traces)
        snap = load_snapshot(out)
        check_snapshot_shape(snap)
        check_against_report(snap, rep)
        if name == "leak_loop":
            frames = [f for seg in snap["segments"] for f in seg["frames"]]
            expect(any(f["name"].startswith("allocate_result") and
                       f["filename"].endswith("leak_loop.cu") and f["line"] > 0
                       for f in frames), "the leak's frames name allocate_result in leak_loop.cu")


# ----- perfetto --------------------------------------------------------------------------

REQUIRED = {
    "X": {"name", "ph", "ts", "dur", "pid", "tid"},
    "C": {"name", "ph", "ts", "pid", "args"},
    "i": {"name", "ph", "ts", "pid", "s"},
    "M": {"name", "ph", "pid", "args"},
}


def check_trace_events(doc):
    """The trace-event format's rules, as the viewers apply them."""
    expect(isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list), "traceEvents")
    events = doc["traceEvents"]
    named_pids, named_threads = set(), set()
    counters = collections.defaultdict(list)
    slices = collections.defaultdict(list)
    for e in events:
        ph = e.get("ph")
        expect(ph in REQUIRED, "phase %r" % ph)
        missing = REQUIRED[ph] - set(e)
        expect(not missing, "%s event without %s: %r" % (ph, missing, e))
        if ph != "M":
            expect(isinstance(e["ts"], (int, float)) and e["ts"] >= 0, "ts %r" % e)
        if ph == "M":
            expect(e["name"] in {"process_name", "thread_name", "process_sort_index",
                                 "thread_sort_index"}, "metadata %r" % e["name"])
            if e["name"] == "process_name":
                named_pids.add(e["pid"])
            elif e["name"] == "thread_name":
                named_threads.add((e["pid"], e["tid"]))
        elif ph == "C":
            expect(all(isinstance(v, (int, float)) for v in e["args"].values()), "counter args")
            counters[(e["pid"], e["name"])].append(e)
        elif ph == "X":
            expect(e["dur"] >= 0, "dur >= 0")
            slices[(e["pid"], e["tid"])].append(e)
        elif ph == "i":
            expect(e["s"] in {"g", "p", "t"}, "instant scope")
    for (pid, name), cs in counters.items():
        expect([c["ts"] for c in cs] == sorted(c["ts"] for c in cs),
               "counter %s of %d: timestamps in order" % (name, pid))
    for e in events:
        if e["ph"] != "M":
            expect(e["pid"] in named_pids, "pid %d has a process_name" % e["pid"])
    for (pid, tid), ss in slices.items():
        expect((pid, tid) in named_threads, "track %d/%d has a thread_name" % (pid, tid))
        ss = sorted(ss, key=lambda s: (s["ts"], -s["dur"]))
        # Slices on one track nest or follow each other, never overlap in part: each begins
        # after the ones still open have ended, or ends within the innermost of them.
        open_ends = []  # ends of the enclosing slices, innermost last (in ns)
        for s in ss:
            begin, end = round(s["ts"] * 1000), round((s["ts"] + s["dur"]) * 1000)
            while open_ends and open_ends[-1] <= begin:
                open_ends.pop()
            expect(not open_ends or end <= open_ends[-1],
                   "slices on %d/%d overlap in part: %r" % (pid, tid, s))
            open_ends.append(end)
    return events, counters


def counter_peaks(counters):
    """Per GPU ordinal: the largest sum over processes of their "GPU N live" counters at one
    moment; and the same over every GPU."""
    changes = []
    for (pid, name), cs in counters.items():
        parts = name.split()
        if len(parts) == 3 and parts[0] == "GPU" and parts[2] == "live":
            for order, c in enumerate(cs):
                changes.append((c["ts"], order, pid, int(parts[1]), c["args"]["bytes"]))
    changes.sort(key=lambda x: (x[0], x[1]))
    level, per_device, overall = {}, collections.Counter(), 0
    for ts, _, pid, device, value in changes:
        level[(pid, device)] = value
        totals = collections.Counter()
        for (p, d), v in level.items():
            totals[d] += v
        for d, v in totals.items():
            per_device[d] = max(per_device[d], v)
        overall = max(overall, sum(totals.values()))
    return per_device, overall


def check_perfetto(traces, rep, exact_overall=True):
    out = os.path.join(ARGS.workdir, "trace.json")
    gmt_ok("export", "--format", "perfetto", "-o", out, *traces)
    with open(out) as f:
        doc = json.load(f)
    events, counters = check_trace_events(doc)
    per_device, overall = counter_peaks(counters)
    for d in rep["devices"]:
        expect_eq(per_device.get(d["ordinal"], 0), d["peak_bytes"],
                  "GPU %d counter maximum" % d["ordinal"])
    if exact_overall:
        expect_eq(overall, rep["summary"]["peak_bytes"], "all GPUs' counters at most")
    allocations = [e for e in events if e["ph"] == "X" and e.get("cat") == "allocation"]
    expect_eq(len(allocations), rep["summary"]["allocations"], "one slice per allocation")
    for s in allocations:
        expect({"address", "size", "stack", "kind", "device", "end"} <= set(s["args"]),
               "slice args %r" % s["args"])
        expect(s["name"].split()[0] in {"cudaMalloc", "cudaMallocAsync", "cudaMallocHost",
                                        "cudaMallocManaged", "cudaMallocArray", "cuMemCreate",
                                        "cudaMallocPitch", "cudaMallocFromPoolAsync",
                                        "cuMemAlloc_v2", "cudaMalloc3D"},
               "slice named after its API: %r" % s["name"])
    leaked = sum(s["args"]["size"] for s in allocations
                 if s["args"]["end"] in ("process_end", "teardown"))
    expect_eq(leaked, rep["summary"]["leaked_bytes"], "slices that end as leaks")
    failures = [e for e in events if e["ph"] == "i" and e.get("cat") == "failure"]
    expect_eq(len(failures), rep["summary"]["failed_allocations"], "failure instants")
    errors = [e for e in events if e["ph"] == "i" and e.get("cat") == "error"]
    expect_eq(len(errors), rep["summary"]["errors"], "error instants")
    return doc, events


def test_perfetto():
    traces = crafted()
    rep = report(traces)
    doc, events = check_perfetto(traces, rep)
    pids = {e["pid"] for e in events}
    expect_eq(len(pids), 2, "two processes with the same pid stay two tracks")
    names = [e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"]
    expect(any(n.startswith("rank 0 (pid 4242)") for n in names) and
           any(n.startswith("rank 1 (pid 4242)") for n in names), "process names %r" % names)
    phases = [(e["name"], e["ts"], e["dur"]) for e in events if e.get("cat") == "phase"]
    # Phases from the trace's start (the earliest header, 1 us): train 2.5..6.8 us, eval to
    # the end at 10 us; rank 1's step 1.2..2.7 us with forward 1.4..2.0 us inside it.
    expect_eq(sorted(phases), [("eval", 5.8, 3.2), ("forward", 0.4, 0.6), ("step", 0.2, 1.5),
                               ("train", 1.5, 4.3)], "phase slices")
    tracks = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
              if e["ph"] == "M" and e["name"] == "thread_name"}
    nested = [tracks[(e["pid"], e["tid"])] for e in events
              if e.get("cat") == "phase" and e["name"] in ("step", "forward")]
    expect_eq(nested, ["phases of thread 7"] * 2, "pushed phases on their thread's track")
    lanes = [e for e in events if e["ph"] == "M" and e["name"] == "thread_name"
             and "allocations #" in e["args"]["name"]]
    expect(lanes, "overlapping lifetimes of one thread take extra lanes")
    # A single trace, and the counters of kinds and host memory.
    rep0 = report(traces[:1])
    doc0, events0 = check_perfetto(traces[:1], rep0)
    counter_names = {e["name"] for e in events0 if e["ph"] == "C"}
    for name in ("GPU 0 live", "GPU 0 live device", "GPU 0 live pool", "GPU 0 live managed",
                 "GPU 0 live array", "GPU 0 live vmm", "GPU 1 live", "pinned host live"):
        expect(name in counter_names, "counter %r in %r" % (name, sorted(counter_names)))


def test_perfetto_samples():
    for name in SAMPLES:
        traces = record_sample(name)
        check_perfetto(traces, report(traces))


# ----- folded ----------------------------------------------------------------------------

def folded(traces, metric):
    r = gmt_ok("export", "--format", "folded", "--metric", metric, *traces)
    lines = [l for l in r.stdout.splitlines() if l]
    total = 0
    for line in lines:
        stack, _, value = line.rpartition(" ")
        expect(stack and value.isdigit(), "folded line %r" % line)
        total += int(value)
    return lines, total


def test_folded():
    cases = [("crafted", crafted())] + [(name, record_sample(name)) for name in SAMPLES]
    for name, traces in cases:
        rep = report(traces)
        s = rep["summary"]
        lines, leaked = folded(traces, "leaked")
        expect_eq(leaked, s["leaked_bytes"], name + ": leaked lines sum to summary.leaked_bytes")
        _, peak = folded(traces, "peak")
        expect_eq(peak, s["peak_bytes"], name + ": peak lines sum to summary.peak_bytes")
        _, count = folded(traces, "allocations")
        expect_eq(count, s["allocations"], name + ": allocations")
        _, allocated = folded(traces, "allocated")
        expect(allocated >= leaked, name + ": allocated bytes include the leaked ones")
        if name == "leak_loop":
            expect(any("allocate_result" in l.split(";")[-1] and l.endswith(" 44004")
                       for l in lines), "leak_loop: the leak's leaf frame and bytes: %r" % lines)
            expect(all(not l.split(";")[0].startswith("pid ") for l in lines),
                   "one process: no process frame")
        if name == "crafted":
            expect(all(l.startswith("rank ") for l in lines), "several processes: a root each")


# ----- ndjson + DuckDB -------------------------------------------------------------------

def need_node(package):
    if not ARGS.node or not os.path.exists(ARGS.node):
        raise Skip("node not found")
    if not os.path.isdir(os.path.join(ARGS.node_modules, package)):
        raise Skip("npm package %s not installed in %s (scripts/test.sh installs it)"
                   % (package, ARGS.node_modules))


def duckdb(directory):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "duckdb_queries.mjs")
    env = dict(os.environ, NODE_PATH=ARGS.node_modules)
    r = subprocess.run([ARGS.node, script, directory], capture_output=True, text=True,
                       timeout=300, env=env)
    expect(r.returncode == 0, "DuckDB queries", r)
    return json.loads(r.stdout)


def check_ndjson(traces, rep):
    out = os.path.join(ARGS.workdir, "tables-" + os.path.basename(traces[0]))
    gmt_ok("export", "--format", "ndjson", "-o", out, *traces)
    for table in ("events", "allocations", "stacks", "processes", "devices", "leaks", "peak"):
        expect(os.path.exists(os.path.join(out, table + ".ndjson")), table + ".ndjson")
    expect(os.path.exists(os.path.join(out, "schema.sql")), "schema.sql")
    q = duckdb(out)
    want = collections.Counter()
    for l in rep["leaks"]:
        want[(l["pid"], l["stack_id"])] += l["bytes"]
    for source in ("leaks_from_allocations", "leaks_table"):
        got = collections.Counter({(r["pid"], r["stack_id"]): r["bytes"] for r in q[source]})
        expect_eq(dict(got), dict(want), "leaked bytes per stack, " + source)
    peaks = {r["device"]: r["peak_bytes"] for r in q["peak_per_device"]}
    for d in rep["devices"]:
        expect_eq(peaks.get(d["ordinal"], 0), d["peak_bytes"], "SQL peak of GPU %d" % d["ordinal"])
    expect_eq(q["counts"]["allocations"], rep["summary"]["allocations"], "allocation rows")
    expect_eq(q["counts"]["failed"], rep["summary"]["failed_allocations"], "failed allocations")
    expect_eq(q["counts"]["events"], sum(p["events"] for p in rep["processes"]), "event rows")
    expect_eq(q["parquet_events"], q["counts"]["events"], "events converted to Parquet")
    docs = collections.Counter()
    for r in q["docs_leaks"]:
        docs[(r["pid"], r["stack_id"])] += r["leaked_bytes"]
    expect_eq(dict(docs), dict(want), "docs/export.md's leak query")
    expect_eq(sum(r["failures"] for r in q["docs_failures"]), rep["summary"]["failed_allocations"],
              "docs/export.md's failure query")
    expect(q["counts"]["frames"] > 0 and q["counts"]["unjoined_stacks"] == 0,
           "every allocation's stack is in the stacks table: %r" % q["counts"])
    return q


def test_ndjson_duckdb():
    need_node("@duckdb/node-api")
    traces = crafted()
    check_ndjson(traces, report(traces))
    for name in ("leak_loop", "vmm", "oom"):
        traces = record_sample(name)
        q = check_ndjson(traces, report(traces))
        if name == "leak_loop":
            expect(any("allocate_result" in r["function"] for r in q["leak_frames"]),
                   "the leak's stack joins to its frames: %r" % q["leak_frames"])


# ----- viewers in headless Chromium -------------------------------------------------------

def test_speedscope_chromium():
    need_node("speedscope")
    need_node("playwright-core")
    if not ARGS.chromium or not os.path.exists(ARGS.chromium):
        raise Skip("chromium not found")
    traces = record_sample("leak_loop")
    folded_file = os.path.join(ARGS.workdir, "leaks.folded")
    gmt_ok("export", "--format", "folded", "--metric", "allocated", "-o", folded_file, *traces)
    trace_file = os.path.join(ARGS.workdir, "trace.json")
    gmt_ok("export", "--format", "perfetto", "-o", trace_file, *traces)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "speedscope_load.mjs")
    env = dict(os.environ, NODE_PATH=ARGS.node_modules)
    shots = os.path.join(ARGS.workdir, "screenshots")
    os.makedirs(shots, exist_ok=True)
    r = subprocess.run([ARGS.node, script, ARGS.chromium,
                        os.path.join(ARGS.node_modules, "speedscope", "dist", "release",
                                     "index.html"),
                        folded_file, trace_file, shots],
                       capture_output=True, text=True, timeout=400, env=env)
    expect(r.returncode == 0, "speedscope in Chromium", r)
    seen = json.loads(r.stdout)
    with open(folded_file) as f:
        total = sum(int(l.rpartition(" ")[2]) for l in f if l.strip())
    expect_eq(seen["folded"]["total"], total, "speedscope's total weight of the folded stacks")
    expect("allocate_result" in " ".join(seen["folded"]["frames"]),
           "speedscope has the leak's frame: %r" % seen["folded"]["frames"][:20])
    with open(trace_file) as f:
        doc = json.load(f)
    tracks = {(e["pid"], e["tid"]) for e in doc["traceEvents"] if e["ph"] == "X"}
    expect_eq(seen["trace"]["profiles"], len(tracks), "speedscope: one profile per track")
    expect("allocations #" in " ".join(seen["trace"]["toolbar"]) or len(tracks) == 1,
           "speedscope names the tracks as the export does: %r" % seen["trace"]["toolbar"])


# ----- streaming ------------------------------------------------------------------------

def max_rss_kib(args):
    """Runs args (output discarded); returns its exit status and its own peak RSS."""
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         cwd=ARGS.workdir)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, p.stderr.read().decode(errors="replace"), usage.ru_maxrss


def test_streaming_memory():
    """Three times the events, the same memory: nothing an export keeps grows with the trace
    (the traces hold a constant live set; docs/performance.md has 20 M and 100 M events).
    Below about 2 M events the buffers and the analysis's bounded tables are still filling,
    so both sizes are above that; 4 MiB is less than one byte per added event."""
    if not ARGS.gen_trace or not os.path.exists(ARGS.gen_trace):
        raise Skip("gen_trace not built (benchmarks off)")
    sizes = [3_000_000, 9_000_000]
    for n in sizes:
        r = run([ARGS.gen_trace, os.path.join(ARGS.workdir, "t%d.gmtrace" % n), str(n), "64"],
                text=True)
        expect(r.returncode == 0, "gen_trace", r)
    # The tables go to /dev/null too: the disk is not what is measured.
    tables = os.path.join(ARGS.workdir, "null-tables")
    os.makedirs(tables)
    for t in ("events", "allocations", "stacks", "processes", "devices", "leaks", "peak"):
        os.symlink("/dev/null", os.path.join(tables, t + ".ndjson"))
    os.symlink("/dev/null", os.path.join(tables, "schema.sql"))
    for fmt, out in (("memory-viz", "/dev/null"), ("perfetto", "/dev/null"),
                     ("folded", "/dev/null"), ("ndjson", tables)):
        rss = []
        for n in sizes:
            code, err, kib = max_rss_kib([ARGS.gpumemtrace, "export", "--no-symbols", "--format",
                                          fmt, "-o", out, "t%d.gmtrace" % n])
            expect(code == 0, "export %s of %d events: %s" % (fmt, n, err))
            rss.append(kib)
        expect(rss[1] <= rss[0] + 4096,
               "%s: max RSS %d KiB at %d events, %d KiB at %d" % (fmt, rss[0], sizes[0], rss[1],
                                                                   sizes[1]))


# ----- usage -----------------------------------------------------------------------------

def one_line_error(r, code=2):
    expect(r.returncode == code, "exit status %d" % code, r)
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    expect(len(lines) == 1, "exactly one line on stderr", r)


def test_usage():
    r = gmt("export", "--help")
    expect(r.returncode == 0 and "Example" in r.stdout and "memory-viz" in r.stdout, "--help", r)
    traces = crafted()
    one_line_error(gmt("export", traces[0]))  # no --format
    one_line_error(gmt("export", "--format", "svg", traces[0]))
    one_line_error(gmt("export", "--format", "perfetto", "--metric", "peak", traces[0]))
    one_line_error(gmt("export", "--format", "folded", "--metric", "bytes", traces[0]))
    one_line_error(gmt("export", "--format", "ndjson", traces[0]))  # no -o DIR
    one_line_error(gmt("export", "--format", "perfetto", "missing.gmtrace"))
    one_line_error(gmt("export", "--format", "perfetto", "-o", "/proc/nonexistent/x.json",
                       traces[0]))
    with open(os.path.join(ARGS.workdir, "file"), "w") as f:
        f.write("x")
    one_line_error(gmt("export", "--format", "ndjson", "-o", "file", traces[0]))
    copy = os.path.join(ARGS.workdir, "other")
    os.makedirs(copy)
    shutil.copy(traces[0], copy)
    one_line_error(gmt("export", "--format", "memory-viz", "-o", "viz", traces[0],
                       os.path.join(copy, "rank0.gmtrace")))  # two rank0.pickle
    garbage = os.path.join(ARGS.workdir, "garbage.gmtrace")
    with open(garbage, "wb") as f:
        f.write(b"\x00" * 5000)
    one_line_error(gmt("export", "--format", "folded", garbage))
    one_line_error(gmt("export", "--format", "perfetto", "-o", "never.json", traces[0], garbage))
    expect(not os.path.exists(os.path.join(ARGS.workdir, "never.json")),
           "no output file is left when a trace cannot be read")


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    for name in ("case", "gpumemtrace", "make-traces", "samples", "probe", "cudasim",
                 "workdir"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("--node", default="")
    parser.add_argument("--node-modules", default="")
    parser.add_argument("--chromium", default="")
    parser.add_argument("--gen-trace", default="")
    ARGS = parser.parse_args()
    return run_case(globals(), ARGS)


if __name__ == "__main__":
    sys.exit(main())
