#!/usr/bin/env python3
"""Framework programs end to end (docs/frameworks.md), on the simulated CUDA with
libgpumemtrace.so preloaded: a PyTorch-like Python program on the stand-in libc10_cuda.so
(block events through the caching allocator's trace tracker, the tensor level of the
report, what is held at exit, OOM hints), and a program whose caching allocators and
cuBLAS-like library keep memory by design (the built-in table and suppressions).

One case per process, as ctest runs them:

    frameworks_test.py --case NAME --python TRACED_PYTHON --gpumemtrace BIN --preload LIB
        --cudasim DIR --fake-torch DIR --fake-torch-future DIR --fake-cublas DIR
        --allocs BIN --block-server BIN --workdir DIR

Exit 0 pass, 1 fail, 77 skipped (the simulated CUDA or the traced interpreter is missing).
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "support"))
import e2e_case  # noqa: E402
from e2e_case import Skip, expect, run_case  # noqa: E402
from memory_viz_snapshot import load_snapshot  # noqa: E402

ARGS = None
PROGRAMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")
MiB = 1 << 20


def marker_lines(program):
    return e2e_case.marker_lines(os.path.join(PROGRAMS, program))


def base_env():
    if not os.path.exists(os.path.join(ARGS.cudasim, "libcudart.so.13")):
        raise Skip("simulated CUDA not built in " + ARGS.cudasim)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUMEMTRACE_", "PYTHON", "FAKE_TORCH"))}
    env.update({"LD_LIBRARY_PATH": ARGS.cudasim + ":" + ARGS.fake_cublas,
                "PYTHONDONTWRITEBYTECODE": "1", "FAKE_TORCH": ARGS.fake_torch})
    return env


def traced(name, command, env=None):
    """Runs a command under the recorder; returns (result, trace path)."""
    run_env = base_env()
    run_env.update({"LD_PRELOAD": ARGS.preload,
                    "GPUMEMTRACE_OUTPUT": os.path.join(ARGS.workdir, name + ".%p.gmtrace")})
    run_env.update(env or {})
    r = subprocess.run(command, capture_output=True, text=True, env=run_env, timeout=600)
    expect(r.returncode == 0, f"{command} exits 0", r)
    traces = [f for f in os.listdir(ARGS.workdir)
              if f.startswith(name + ".") and f.endswith(".gmtrace")]
    expect(len(traces) == 1, f"one trace, not {traces}", r)
    return r, os.path.join(ARGS.workdir, traces[0])


def torch_like(scenario, env=None):
    """Runs torch_like.py SCENARIO traced; returns (its statistics, trace path)."""
    if not os.path.exists(ARGS.python):
        raise Skip("no interpreter at " + ARGS.python)
    result = os.path.join(ARGS.workdir, scenario + ".json")
    _, trace = traced(scenario, [ARGS.python, os.path.join(PROGRAMS, "torch_like.py"), scenario,
                                 result], env)
    with open(result) as f:
        return json.load(f), trace


def gmt(*args, status=0):
    r = subprocess.run([ARGS.gpumemtrace, *args], capture_output=True, text=True, timeout=600)
    expect(r.returncode == status, "gpumemtrace " + " ".join(args) + f" exits {status}", r)
    return r.stdout


def report(trace, *extra):
    return json.loads(gmt("report", "--format", "json", *extra, trace))


def dump(trace):
    return [json.loads(line) for line in gmt("dump", trace).splitlines() if line.strip()]


def python_lines(stack, program="torch_like.py"):
    return [f["line"] for f in stack
            if f.get("language") == "python" and os.path.basename(f["file"]) == program]


def caching_of(rep):
    c = rep.get("caching_allocator")
    expect(c is not None and len(c["processes"]) == 1, f"one caching allocator: {c}")
    return c


# ----- cases ---------------------------------------------------------------------------

def test_attach():
    """The recorder finds the stand-in libc10_cuda.so (loaded RTLD_LOCAL), attaches once its
    allocator is initialized, and records its block events; the first is the segment the
    first cudaMalloc took, right after that cudaMalloc."""
    _, trace = torch_like("train")
    records = dump(trace)
    found = [r for r in records if r["record"] == "caching_allocator"]
    expect(len(found) == 1 and found[0]["status"] == "attached" and
           found[0]["version"] == "2.11.0+fake", f"one caching_allocator record: {found}")
    events = [r for r in records if r["record"] == "event"]
    blocks = [i for i, e in enumerate(events) if e["event"] == "block"]
    expect(blocks, "block events recorded")
    first = events[blocks[0]]
    before = events[blocks[0] - 1]
    expect(first["api"] == "segment_alloc" and before["event"] == "alloc" and
           before["api"] == "cudaMalloc" and before["address"] == first["address"] and
           before["size"] == first["size"],
           f"the first block event is the segment of the cudaMalloc before it: {before} {first}")
    actions = {events[i]["api"] for i in blocks}
    expect({"segment_alloc", "alloc", "free_requested", "free_completed"} <= actions,
           f"actions recorded: {actions}")
    # Each block event carries the stack of the Python line that caused it.
    rep = report(trace)
    expect(any(python_lines(s["stack"]) for s in caching_of(rep)["tensor_peak"]["top_sites"]),
           "tensor-level sites have Python frames")


def test_train_check():
    """A training loop in the caching allocator's default mode passes `check` with no
    options: its segments are held by the cache, not leaked, and its tensors were freed."""
    stats, trace = torch_like("train")
    out = gmt("check", trace)
    expect("passed" in out and "held by caching allocators at exit, not counted" in out,
           "check passes and says what it did not count:\n" + out)
    rep = report(trace)
    held = rep["held_at_exit"]
    expect(len(held) == 1 and held[0]["allocator"] == "PyTorch CUDA caching allocator" and
           held[0]["bytes"] == stats["end"]["reserved"],
           f"the cache's segments are held at exit: {held} vs reserved {stats['end']['reserved']}")
    expect(rep["summary"]["leaked_bytes"] == 0, f"no leaks: {rep['summary']}")
    # The model, referenced from a module global, was freed by the interpreter at exit.
    a = caching_of(rep)["processes"][0]
    expect(a["exit_freed_bytes"] == stats["end"]["allocated"],
           f"freed at interpreter exit {a['exit_freed_bytes']} = allocated at the end "
           f"{stats['end']['allocated']}")
    # --count-cached: the cache counts as leaked.
    out = gmt("check", "--count-cached", trace, status=1)
    expect("FAIL" in out, "--count-cached fails it:\n" + out)


def test_record_check():
    """`record --check` takes the framework options: the default mode passes the one-step
    gate, and with --count-cached the cache fails it."""
    if not os.path.exists(ARGS.python):
        raise Skip("no interpreter at " + ARGS.python)
    for extra, status in (([], 0), (["--count-cached"], 1)):
        command = [ARGS.gpumemtrace, "record", "--check", *extra, "--library", ARGS.preload,
                   "-o", os.path.join(ARGS.workdir, "record_check.%p.gmtrace"), "--",
                   ARGS.python, os.path.join(PROGRAMS, "torch_like.py"), "train",
                   os.path.join(ARGS.workdir, "record_check.json")]
        r = subprocess.run(command, capture_output=True, text=True, env=base_env(), timeout=600)
        expect(r.returncode == status, f"record --check {' '.join(extra)} exits {status}", r)
        expect(("passed" if status == 0 else "FAILED") in r.stderr,
               "the verdict on stderr says so:\n" + r.stderr[-2000:])


def test_train_figures():
    """The tensor-level peak is max_memory_allocated, the segment-level peak
    max_memory_reserved, and the space inside the segments at the tensor peak is reserved -
    allocated and inactive_split_bytes of that moment."""
    stats, trace = torch_like("train")
    c = caching_of(report(trace))
    a = c["processes"][0]
    expect(a["sizes_exact"] and a["unmatched_events"] == 0,
           f"every block placed, every size rebuilt exactly: {a}")
    d = a["devices"][0]
    end = stats["end"]
    expect(d["allocated_peak_bytes"] == end["max_allocated"],
           f"allocated peak {d['allocated_peak_bytes']} = max_allocated {end['max_allocated']}")
    expect(d["reserved_peak_bytes"] == end["max_reserved"],
           f"reserved peak {d['reserved_peak_bytes']} = max_reserved {end['max_reserved']}")
    expect(d["allocated_end_bytes"] == 0, "nothing allocated when the process ended")
    expect(c["tensor_peak"]["bytes"] == end["max_allocated"], "the tensor peak of the run")
    frag = c["fragmentation"]
    expect(len(frag) == 1 and frag[0]["exact"], f"one exact measurement at the peak: {frag}")
    peak = stats["at_peak"]
    f = frag[0]
    expect(f["reserved_unallocated_bytes"] == peak["reserved"] - peak["allocated"] and
           f["allocated_bytes"] == peak["allocated"] and f["reserved_bytes"] == peak["reserved"],
           f"inside the segments at the peak {f} vs the allocator's {peak}")
    expect(f["inactive_split_bytes"] == peak["inactive_split_bytes"] and
           f["inactive_split_blocks"] == peak["inactive_split"],
           f"split free blocks {f['inactive_split_blocks']} / {f['inactive_split_bytes']} vs "
           f"{peak['inactive_split']} / {peak['inactive_split_bytes']}")
    text = gmt("report", trace)
    for words in ("Tensor level: PyTorch CUDA caching allocator 2.11.0+fake",
                  "(tensor level, max_memory_allocated)", "(segment level, max_memory_reserved)",
                  "reserved but unallocated", "segment level: memory taken from CUDA"):
        expect(words in text, f"the text says '{words}':\n{text}")


def test_planted_leak_at_exit():
    """A list that keeps a tensor every step until the script ends: the interpreter frees it
    at exit, so it is no leak at the end; the report names it as freed only at exit, at the
    planted line."""
    stats, trace = torch_like("planted")
    planted = marker_lines("torch_like.py")["planted"]
    rep = report(trace)
    a = caching_of(rep)["processes"][0]
    sites = [s for s in a["exit_freed_top_sites"] if planted in python_lines(s["stack"])]
    expect(len(sites) == 1 and sites[0]["allocations"] == 6,
           f"the planted line {planted} freed at exit: {a['exit_freed_top_sites']}")
    # With the model (freed at exit too) it is every block the program still held.
    expect(a["exit_freed_bytes"] == stats["end"]["allocated"],
           f"freed at exit {a['exit_freed_bytes']} = allocated at the end {stats['end']['allocated']}")
    expect(gmt("check", trace).count("passed") == 1,
           "no leak at the end: `check` passes (growth, not a leak at exit)")
    text = gmt("report", trace)
    expect("freed only by the interpreter at exit" in text and f"torch_like.py:{planted}" in text,
           "the text names it:\n" + text)


def test_planted_leak_kept():
    """The same list, and the process ends without finalization (os._exit): the kept tensors
    are leaks at the tensor level and `check` fails naming the planted line."""
    stats, trace = torch_like("planted_kept")
    planted = marker_lines("torch_like.py")["planted"]
    out = gmt("check", trace, status=1)
    expect("FAIL" in out and f"torch_like.py:{planted}" in out,
           f"check fails at torch_like.py:{planted}:\n" + out)
    rep = report(trace)
    leaks = [l for l in rep["leaks"] if l["kind"] == "block"]
    expect(len(leaks) == 1 and leaks[0]["allocations"] == 6 and
           leaks[0]["api"] == "PyTorch caching allocator" and
           planted in python_lines(leaks[0]["stack"]),
           f"one tensor-level leak site at line {planted}: {leaks}")
    expect(leaks[0]["bytes"] == stats["end"]["allocated"],
           f"its bytes {leaks[0]['bytes']} are the blocks still allocated "
           f"{stats['end']['allocated']}")
    expect(rep["summary"]["leaked_bytes"] == leaks[0]["bytes"],
           "the segments holding them are held by the cache, not leaked too")
    # Own code first (docs/python.md): the tensor class is the installed stand-in's
    # (site-packages/torch_stand_in.py), so the first frame shown, in the report and in
    # check, is the script's line that made the tensor; the own flag says which frames.
    own = [f for f in leaks[0]["stack"] if f.get("own")]
    expect(own and own[0].get("language") == "python" and
           os.path.basename(own[0]["file"]) == "torch_like.py" and own[0]["line"] == planted,
           f"the first own frame is torch_like.py:{planted}: {own[:2]}")
    expect(not any(f.get("own") for f in leaks[0]["stack"]
                   if "torch_stand_in" in f.get("file", "")),
           "the stand-in's frames are library frames")
    block = out[out.index("PyTorch caching allocator"):]
    first = next(l for l in block.splitlines()[1:] if l.strip())
    expect(f"torch_like.py:{planted}" in first,
           f"check's first frame under the leak is the planted line: {first!r}\n{out}")
    text = gmt("report", trace)
    section = text[text.index("PyTorch caching allocator"):]
    first = next(l for l in section.splitlines()[1:] if l.strip())
    expect(f"torch_like.py:{planted}" in first,
           f"report's first frame under the leak is the planted line: {first!r}\n{text}")


def test_record_stream():
    """A block used on another stream is freed when asked (no longer allocated) but its
    memory is reused only when the stream is done (the completion comes later)."""
    stats, trace = torch_like("record_stream")
    events = [r for r in dump(trace) if r["record"] == "event" and r["event"] == "block"]
    order = [e["api"] for e in events if e["api"] in ("free_requested", "free_completed", "alloc")]
    expect(order[:4] == ["alloc", "free_requested", "free_completed", "alloc"] or
           order[:4] == ["alloc", "free_requested", "alloc", "free_completed"],
           f"request, then completion at the next allocation: {order}")
    c = caching_of(report(trace))
    d = c["processes"][0]["devices"][0]
    expect(d["allocated_peak_bytes"] == stats["end"]["max_allocated"],
           f"peak {d['allocated_peak_bytes']} = {stats['end']['max_allocated']}")


def test_oom_fragmentation():
    """A request that fails although the segments hold more than it in free blocks is
    fragmentation inside segments, and the hint names expandable_segments."""
    stats, trace = torch_like("oom", env={"CUDASIM_MEMORY_BYTES": str(256 * MiB)})
    oom_line = marker_lines("torch_like.py")["oom"]
    c = caching_of(report(trace))
    ooms = [o for o in c["ooms"] if oom_line in python_lines(o["stack"])]
    expect(len(ooms) == 1, f"one OOM at line {oom_line}: {[python_lines(o['stack']) for o in c['ooms']]}")
    o = ooms[0]
    expect(o["fragmentation"] and o["diagnosis"].startswith("fragmentation inside segments"),
           f"diagnosed as fragmentation: {o['diagnosis']}")
    expect(o["requested_bytes"] == 40 * MiB, f"40 MiB asked for: {o['requested_bytes']}")
    space = o["space"]
    before = stats["before_oom"]
    expect(space["reserved_bytes"] == before["reserved"] and
           space["allocated_bytes"] == before["allocated"],
           f"the segments at the OOM {space} are the allocator's {before}")
    expect(space["largest_free_bytes"] == 11 * MiB, f"largest free block {space['largest_free_bytes']}")
    hints = {h["remedy"]: h for h in o["hints"]}
    expect(hints["expandable_segments"]["verdict"] == "would likely have avoided it" and
           hints["expandable_segments"]["estimate"],
           f"expandable_segments: {hints['expandable_segments']}")
    expect(hints["empty_cache"]["verdict"] == "would not have helped" and
           not hints["empty_cache"]["estimate"], f"empty_cache: {hints['empty_cache']}")
    text = gmt("report", trace)
    expect("Out of memory in the caching allocator" in text and "expandable_segments:" in text,
           "the text explains it:\n" + text)


def test_whatif_train():
    """`whatif` replays the run's tensor requests through its model of the caching
    allocator: under the run's own settings it gives back what the allocator reported
    (max_memory_reserved, max_memory_allocated) and the recorded segments."""
    stats, trace = torch_like("train")
    out = json.loads(gmt("whatif", trace, "--format", "json"))
    run = out["runs"][0]
    own = run["settings"][0]
    end = stats["end"]
    expect(own["label"] == "recorded" and run["recorded"]["replay_matches"] is True,
           f"the replay of its own settings matches the recording: {run['recorded']} {run['notes']}")
    expect(own["peak_reserved_bytes"] == end["max_reserved"] and
           own["peak_allocated_bytes"] == end["max_allocated"],
           f"peaks {own['peak_reserved_bytes']}, {own['peak_allocated_bytes']} vs {end}")
    expect(all(s["exact"] for s in run["settings"] if s["model"] == "caching_allocator"),
           f"every caching-allocator row exact: {[s['why'] for s in run['settings']]}")
    expect(any(s["setting"] == "expandable_segments:True" for s in run["settings"]),
           "the default set tries expandable segments")


def test_whatif_oom():
    """A run that ran out of memory is replayed at the memory it had: its own settings run
    out at the same request."""
    _, trace = torch_like("oom", env={"CUDASIM_MEMORY_BYTES": str(256 * MiB)})
    out = json.loads(gmt("whatif", trace, "--format", "json"))
    run = out["runs"][0]
    rec = run["recorded"]
    expect(rec["ooms"] >= 2 and 0 < rec["oom_capacity_bytes"] <= 256 * MiB,
           f"the OOMs and the memory the run had: {rec}")
    own = run["settings"][0]
    cap = own["capacities"][0]
    expect(cap["name"] == "recorded" and not cap["fits"] and
           cap["oom"]["requested_bytes"] == 9 * MiB,
           f"its own settings run out at the first 9 MiB tensor that did not fit: {cap}")


def test_unknown_version():
    """A PyTorch version the recorder has no layout for is left alone; the trace and the
    report say why there are no block events."""
    _, trace = torch_like("train", env={"FAKE_TORCH": ARGS.fake_torch_future})
    records = dump(trace)
    found = [r for r in records if r["record"] == "caching_allocator"]
    expect(len(found) == 1 and found[0]["status"] == "unknown_version" and
           found[0]["version"] == "9.1.0", f"the record says why: {found}")
    expect(not any(r["record"] == "event" and r["event"] == "block" for r in records),
           "no block events")
    text = gmt("report", trace)
    expect("no block events (unknown_version" in text, "the report says so:\n" + text)


def test_other_backend():
    """Another allocator backend (cudaMallocAsync) is not attached to."""
    _, trace = torch_like("train", env={"FAKE_TORCH_BACKEND": "cudaMallocAsync"})
    found = [r for r in dump(trace) if r["record"] == "caching_allocator"]
    expect(len(found) == 1 and found[0]["status"] == "other_backend" and
           "cudaMallocAsync" in found[0]["detail"], f"the record says why: {found}")


def test_disabled():
    """GPUMEMTRACE_CACHING_ALLOCATOR=0: no block events, and the trace says so."""
    _, trace = torch_like("train", env={"GPUMEMTRACE_CACHING_ALLOCATOR": "0"})
    records = dump(trace)
    found = [r for r in records if r["record"] == "caching_allocator"]
    expect(len(found) == 1 and found[0]["status"] == "disabled", f"the record: {found}")
    expect(not any(r["record"] == "event" and r["event"] == "block" for r in records),
           "no block events")


def test_held_builtin_table():
    """Memory that CuPy's pool, XLA's BFC allocator and an RMM pool keep, recognised by their
    functions' names in the built-in table, is held at exit, not leaked."""
    _, trace = traced("allocs", [ARGS.allocs])
    rep = report(trace)
    held = {h["allocator"]: h["bytes"] for h in rep["held_at_exit"]}
    expect(held == {"CuPy memory pool": 8 * MiB, "XLA BFC allocator": 16 * MiB,
                    "RMM pool": 6 * MiB}, f"held at exit: {held}")
    leaked = sorted(l["bytes"] for l in rep["leaks"])
    # cuBLAS's workspace is suppressed by the built-in line, as check does: not a leak.
    expect(leaked == [1 * MiB], f"leaks: the helper's only {leaked}")
    expect(rep["summary"]["leaked_bytes"] == 1 * MiB, f"leaked: {rep['summary']}")
    rules = [(s["rule"], s["bytes"]) for s in rep["suppressions"]]
    expect(rules == [("leak:libcublas.so*", 4 * MiB)], f"suppressed by: {rules}")
    everything = report(trace, "--no-builtin-suppressions")
    leaked = sorted(l["bytes"] for l in everything["leaks"])
    expect(leaked == [1 * MiB, 4 * MiB],
           f"--no-builtin-suppressions: the helper's and cuBLAS's workspace {leaked}")


def test_builtin_suppressions():
    """cuBLAS's workspace is suppressed by a built-in line and said so; the helper's leak
    still fails the check; the built-in lines can be listed and turned off."""
    _, trace = traced("allocs", [ARGS.allocs])
    out = gmt("check", trace, status=1)
    expect("built-in suppressions: 1 of" in out and "leak:libcublas.so*  (built-in)" in out and
           "leaky_helper" in out and "1.0 MiB leaked" in out, "check's verdict:\n" + out)
    out = gmt("check", "--no-builtin-suppressions", trace, status=1)
    expect("5.0 MiB leaked" in out and "built-in suppressions" not in out,
           "without the built-in lines:\n" + out)
    out = gmt("check", "--count-cached", trace, status=1)
    expect("31.0 MiB leaked" in out and "4.0 MiB suppressed" in out,
           "--count-cached counts the caches (cuBLAS's workspace stays suppressed):\n" + out)
    listed = gmt("check", "--print-builtin-suppressions")
    expect("leak:libcublas.so*" in listed and "leak:libnccl.so*" in listed and
           listed.count("\n# ") >= 5, "the list:\n" + listed)
    table = gmt("report", "--print-caching-allocators")
    expect("CuPy memory pool: *SingleDeviceMemoryPool*" in table, "the table:\n" + table)


def replay_blocks(trace_entries):
    """Replays a GPU's entries as PyTorch's viewer does, checking that blocks live inside
    live segments and segments end empty; returns (most bytes allocated at once, most
    reserved at once, block allocs)."""
    segments, blocks, allocated, reserved, allocs = {}, {}, 0, 0, 0
    for e in trace_entries:
        action, addr, size = e["action"], e["addr"], e["size"]
        if action == "segment_alloc":
            expect(addr not in segments, f"segment_alloc of a live segment: {e}")
            segments[addr] = size
        elif action == "segment_free":
            expect(segments.pop(addr, None) == size, f"segment_free of no such segment: {e}")
            expect(not any(addr <= b < addr + size for b in blocks),
                   f"a segment freed with blocks in it: {e}")
        elif action == "alloc":
            expect(addr not in blocks, f"alloc of a live block: {e}")
            expect(any(s <= addr and addr + size <= s + n for s, n in segments.items()),
                   f"a block outside every live segment: {e}")
            blocks[addr] = size
            allocs += 1
        elif action == "free_completed":
            expect(blocks.pop(addr, None) == size, f"free_completed of no such block: {e}")
        allocated = max(allocated, sum(blocks.values()))
        reserved = max(reserved, sum(segments.values()))
    return allocated, reserved, allocs


def test_memory_viz():
    """`export --format memory-viz` of a PyTorch program is the allocator's own snapshot:
    its segments, the tensors' blocks inside them with their Python lines, and at the end
    each segment's blocks and free space, as PyTorch's memory_stats() counts them."""
    stats, trace = torch_like("planted_kept")
    out = os.path.join(ARGS.workdir, "snapshot.pickle")
    gmt("export", "--format", "memory-viz", "-o", out, trace)
    snap = load_snapshot(out)
    entries = snap["device_traces"][0]
    allocated, reserved, allocs = replay_blocks(entries)
    events = [r for r in dump(trace) if r["record"] == "event"]
    block_allocs = [e for e in events if e["event"] == "block" and e["api"] == "alloc"]
    # One alloc entry per tensor: the cudaMalloc that took a segment is not a block.
    expect(allocs == len(block_allocs) > 0, f"{allocs} alloc entries, {len(block_allocs)} tensors")
    expect(reserved == stats["end"]["max_reserved"],
           f"most reserved at once {reserved}, max_memory_reserved {stats['end']['max_reserved']}")
    # torch's alloc entries carry what the tensor asked for, never more than its block: the
    # most at once is at least what was asked at the allocated peak, at most that peak.
    expect(stats["at_peak"]["requested"] <= allocated <= stats["end"]["max_allocated"],
           f"most asked for at once {allocated}; {stats}")
    lines = [f["line"] for e in entries if e["action"] == "alloc" for f in e["frames"]
             if f["filename"].endswith("torch_like.py")]
    expect(marker_lines("torch_like.py")["planted"] in lines, "the planted line in the frames")
    # The end: each segment with its blocks and free space, as memory_stats() says.
    segments = snap["segments"]
    end = stats["end"]
    figures = {key: sum(s[key] for s in segments) for key in
               ("total_size", "allocated_size", "requested_size", "active_size")}
    expect(figures == {"total_size": end["reserved"], "allocated_size": end["allocated"],
                       "requested_size": end["requested"], "active_size": end["active"]},
           f"segments at the end {figures}, memory_stats {end}")
    for s in segments:
        expect(s["segment_type"] == ("small" if s["total_size"] == 2 * MiB else "large"),
               f"the small pool's segments are its 2 MiB ones: {s['total_size']} "
               f"{s['segment_type']}")
        expect(sum(b["size"] for b in s["blocks"]) == s["total_size"] and
               [b["address"] for b in s["blocks"]] == sorted(b["address"] for b in s["blocks"])
               and s["blocks"][0]["address"] == s["address"],
               f"a segment's blocks cover it in address order: {s}")
    split = [b for s in segments if any(b["state"] != "inactive" for b in s["blocks"])
             for b in s["blocks"] if b["state"] == "inactive"]
    expect((len(split), sum(b["size"] for b in split)) ==
           (end["inactive_split"], end["inactive_split_bytes"]),
           f"inactive split blocks {len(split)} / {sum(b['size'] for b in split)} B, "
           f"memory_stats {end}")


def test_block_free_stacks():
    """A tensor's free_requested and free_completed are recorded without a stack (no stack
    walk: two of its three events), its alloc with the Python line that made it; the
    memory-viz export gives a free's entries the frames of its block's allocation, as
    PyTorch's own snapshot does when it gathers no free context, and the report's tensor
    sites still name the lines that made the tensors."""
    _, trace = torch_like("train")
    blocks = [r for r in dump(trace) if r["record"] == "event" and r["event"] == "block"]
    frees = [e for e in blocks if e["api"] in ("free_requested", "free_completed")]
    allocs = [e for e in blocks if e["api"] == "alloc"]
    expect(frees and all(e["stack"] == 0 for e in frees),
           f"{len(frees)} frees, stacks {sorted({e['stack'] for e in frees})[:10]}")
    expect(allocs and all(e["stack"] != 0 for e in allocs), "every alloc has its stack")
    rep = report(trace)
    lines = [python_lines(s["stack"]) for s in caching_of(rep)["tensor_peak"]["top_sites"]]
    expect(any(lines), f"the tensor sites name torch_like.py's lines: {lines}")

    out = os.path.join(ARGS.workdir, "free_stacks.pickle")
    gmt("export", "--format", "memory-viz", "-o", out, trace)
    alloc_frames, checked, named = {}, 0, 0
    for e in load_snapshot(out)["device_traces"][0]:
        if e["action"] == "alloc":
            alloc_frames[e["addr"]] = e["frames"]
        elif e["action"] in ("free_requested", "free_completed"):
            frames = alloc_frames.get(e["addr"])
            expect(frames is not None and e["frames"] == frames,
                   f"a free's frames are its allocation's: {e} vs {frames}")
            checked += 1
            named += any(f["filename"].endswith("torch_like.py") for f in e["frames"])
            if e["action"] == "free_completed":
                del alloc_frames[e["addr"]]
    expect(checked == len(frees), f"{checked} free entries checked, {len(frees)} frees")
    expect(named == checked, f"{named} of {checked} free entries name torch_like.py's lines")


# ----- aggregated traces of block events (preload/aggregator.h) ---------------------------

AGGREGATE = {"GPUMEMTRACE_MODE": "aggregate"}
# What differs between two runs of one program: times, pids, addresses (ASLR), file names.
VOLATILE = {"time_ns", "pid", "ppid", "trace_file", "address", "start_mono_ns", "start_wall_ns",
            "duration_ns", "first_time_ns", "last_time_ns", "offset_ns"}


def stripped(value):
    if isinstance(value, dict):
        return {k: stripped(v) for k, v in value.items()
                if k not in VOLATILE and not k.endswith("_time_ns")}
    if isinstance(value, list):
        return [stripped(v) for v in value]
    return value


def figures(rep):
    """The figures a full and an aggregated trace of one run must agree on: leaks, the
    peak and its holders, growth, phases, failures, errors and the tensor level (tensor and
    segment peaks per device, their holders, the space inside the segments at the peak and
    at OOMs, blocks at exit, estimated and unmatched blocks)."""
    f = {k: stripped(rep.get(k)) for k in ("summary", "leaks", "peak", "growth", "iterations",
                                            "phases", "failures", "errors",
                                            "caching_allocator")}
    proc = rep["processes"][0]
    f["process"] = {k: proc.get(k) for k in ("allocations", "frees", "failed_allocations",
                                             "errors", "leaked_bytes")}
    return f


def first_difference(a, b, path=""):
    if type(a) is not type(b):
        return f"{path}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                return f"{path}.{k}: only in {'full' if k in a else 'aggregated'}"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} entries"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def block_server(name, requests, env=None, mode=None):
    """Runs block_server traced; returns (its statistics, trace path, the run)."""
    result = os.path.join(ARGS.workdir, name + ".json")
    command = [ARGS.block_server, str(requests), result] + ([mode] if mode else [])
    run_env = base_env()
    run_env.update({"LD_PRELOAD": ARGS.preload,
                    "GPUMEMTRACE_OUTPUT": os.path.join(ARGS.workdir, name + ".%p.gmtrace")})
    run_env.update(env or {})
    r = subprocess.run(command, capture_output=True, text=True, env=run_env, timeout=600)
    traces = [f for f in os.listdir(ARGS.workdir)
              if f.startswith(name + ".") and f.endswith(".gmtrace")]
    expect(len(traces) == 1, f"one trace, not {traces}", r)
    with open(result) as f:
        return json.load(f), os.path.join(ARGS.workdir, traces[0]), r


def same_figures(name, full_trace, aggregated_trace, phases=True):
    """`phases`: the run marks phases; without, growth comes from the allocation pattern,
    which aggregate mode gives up (docs/configuration.md), and is not compared."""
    full, agg = report(full_trace), report(aggregated_trace)
    ff, fa = figures(full), figures(agg)
    if not phases:
        for f in (ff, fa):
            del f["growth"], f["iterations"]
    # The space inside the segments at the tensor peak: the analysis skips measurements its
    # budget of walk steps per replayed event cannot pay (analysis.cpp kWalkStepsPerEvent),
    # marking the one it keeps not exact. An aggregated trace replays fewer events between
    # peaks, so where the full trace's is not exact, the aggregated one's may be, and is then
    # compared with the tensor peak it was measured at.
    for i, frag in enumerate((ff["caching_allocator"] or {}).get("fragmentation", [])):
        if not frag["exact"]:
            other = fa["caching_allocator"]["fragmentation"][i]
            expect(not other["exact"] or other["allocated_bytes"] ==
                   agg["caching_allocator"]["tensor_peak"]["bytes"],
                   f"{name}: an exact measurement is the tensor peak's: {other}")
            ff["caching_allocator"]["fragmentation"][i] = other = None
            fa["caching_allocator"]["fragmentation"][i] = None
    diff = first_difference(ff, fa)
    expect(diff is None, f"{name}: the aggregated trace's figures are the full trace's; "
                         f"first difference: {diff}")
    a = agg["processes"][0].get("aggregate")
    expect(a is not None and a["over_budget"] == 0, f"{name}: aggregated, within budget: {a}")
    cf = subprocess.run([ARGS.gpumemtrace, "check", full_trace], capture_output=True, text=True)
    ca = subprocess.run([ARGS.gpumemtrace, "check", aggregated_trace], capture_output=True,
                        text=True)
    expect(cf.returncode == ca.returncode, f"{name}: check gives the same verdict", ca)
    return full, agg


def test_aggregate_blocks():
    """Block events folded: the PyTorch-like programs and a server, recorded in full and
    aggregated, give the same figures at both levels; the server's blocks are mostly
    folded, not kept."""
    for scenario in ("train", "planted", "record_stream", "oom"):
        _, full = torch_like(scenario)
        result = os.path.join(ARGS.workdir, scenario + ".agg.json")
        _, agg = traced(scenario + "_agg", [ARGS.python, os.path.join(PROGRAMS, "torch_like.py"),
                                            scenario, result], AGGREGATE)
        same_figures(scenario, full, agg, phases=False)
    stats, full, _ = block_server("server_full", 3000)
    _, agg, _ = block_server("server_agg", 3000, AGGREGATE)
    f, a = same_figures("block_server", full, agg)
    d = caching_of(a)["processes"][0]["devices"][0]
    expect(d["allocated_peak_bytes"] == stats["max_allocated"] and
           d["reserved_peak_bytes"] == stats["max_reserved"],
           f"the tensor and segment peaks are PyTorch's: {d} vs {stats}")
    expect(len(a["phases"]) >= 1 and a["iterations"][0]["boundaries"] == 3000,
           f"phases and the phase clock compared: {a['iterations']}")
    agg_info = a["processes"][0]["aggregate"]
    expect(agg_info["folded_allocations"] > 3000 * 4,
           f"the requests' blocks are folded: {agg_info}")
    expect(agg_info["kept_events"] < 3000, f"few events kept: {agg_info}")
    text = gmt("report", agg)
    expect("AGGREGATED trace" in text and "blocks" in text,
           "the text report says what was folded:\n" + text)


def test_aggregate_blocks_bounded():
    """Millions of block events of a server whose live set stays the same stay within a
    small budget, with the tensor and segment peaks still PyTorch's own."""
    requests = 350_000
    budget = 1 << 20
    stats, trace, r = block_server("bounded", requests,
                                   {**AGGREGATE, "GPUMEMTRACE_AGGREGATE_BUDGET": "1M"}, "steady")
    expect(r.returncode == 0, "block_server exits 0", r)
    rep = report(trace)
    a = rep["processes"][0]["aggregate"]
    expect(a["events"] >= 5_000_000, f"millions of block events recorded: {a}")
    expect(a["over_budget"] == 0, f"within budget: {a}")
    size = os.path.getsize(trace)
    on_disk = os.stat(trace).st_blocks * 512
    bound = 4096 + (1 << 20) + budget + (256 << 10)  # prologue, ring, regions, definitions
    expect(size <= bound and on_disk <= bound,
           f"{size} bytes ({on_disk} on disk) within {bound}")
    d = caching_of(rep)["processes"][0]["devices"][0]
    expect(d["allocated_peak_bytes"] == stats["max_allocated"] and
           d["reserved_peak_bytes"] == stats["max_reserved"] and
           d["allocated_end_bytes"] == stats["allocated"],
           f"the tensor and segment peaks are PyTorch's: {d} vs {stats}")


def test_aggregate_blocks_phased():
    """A server that marks every request a phase and still holds each request's output at
    the next mark: aggregated, the same figures as in full (per-phase peaks, levels and
    counts, growth, leaks, the tensor level), while its blocks live at the marks are
    folded: ten times the requests keep no more events than the answers it leaks, and the
    trace grows by what a Phase record costs, not by what was live at it."""
    _, full, _ = block_server("held_full", 3000, None, "held")
    _, agg, _ = block_server("held_agg", 3000, AGGREGATE, "held")
    _, a = same_figures("held", full, agg)
    expect(a["iterations"][0]["boundaries"] == 3000, f"the phase clock: {a['iterations']}")
    kept, sizes = {}, {}
    for requests, budget in ((3000, "1M"), (30000, "4M")):
        stats, trace, r = block_server(f"held_slow_{requests}", requests,
                                       {**AGGREGATE, "GPUMEMTRACE_AGGREGATE_BUDGET": budget},
                                       "held_slow")
        expect(r.returncode == 0, "block_server exits 0", r)
        rep = report(trace)
        info = rep["processes"][0]["aggregate"]
        expect(info["over_budget"] == 0, f"{requests} requests: within budget: {info}")
        expect(rep["summary"]["leaked_allocations"] == 4 + stats["answers"],
               f"{requests} requests: the model and answers leak: {rep['summary']}")
        d = caching_of(rep)["processes"][0]["devices"][0]
        expect(d["allocated_peak_bytes"] == stats["max_allocated"] and
               d["reserved_peak_bytes"] == stats["max_reserved"],
               f"the tensor and segment peaks are PyTorch's: {d} vs {stats}")
        kept[requests] = info["kept_events"]
        sizes[requests] = os.stat(trace).st_blocks * 512
    # The 27 answers more are one block alloc each, kept (leaks).
    expect(kept[30000] <= kept[3000] + 27 + 16, f"kept events stay bounded: {kept}")
    # Prologue, ring and the definitions' log, plus both regions: 3 000 requests within a
    # 1 MiB budget; past that, each region grows by what a request's Phase record and
    # its folded totals take (at most 64 bytes), not by the blocks live at the marks.
    fixed = 4096 + (1 << 20) + (256 << 10)
    expect(sizes[3000] <= fixed + (1 << 20), f"{sizes} bytes on disk within 1 MiB")
    expect(sizes[30000] <= sizes[3000] + 2 * 27000 * 64, f"{sizes}: 64 bytes a request")


def test_aggregate_blocks_killed():
    """A server killed with SIGKILL: the last checkpoint and the ring still give its blocks
    at the end (the answers it kept) and its peaks."""
    stats, trace, r = block_server("killed", 20_000, AGGREGATE, "kill")
    expect(r.returncode == -9, "killed by SIGKILL", r)
    rep = report(trace)
    expect(rep["processes"][0]["complete"] is False, "read as incomplete")
    d = caching_of(rep)["processes"][0]["devices"][0]
    expect(d["allocated_peak_bytes"] == stats["max_allocated"] and
           d["allocated_end_bytes"] == stats["allocated"],
           f"the peak and what was allocated at the kill: {d} vs {stats}")
    gmt("check", trace, status=1)


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True)
    for option in ("python", "gpumemtrace", "preload", "cudasim", "fake-torch",
                   "fake-torch-future", "fake-cublas", "allocs", "block-server", "workdir"):
        parser.add_argument("--" + option, required=True)
    ARGS = parser.parse_args()
    return run_case(globals(), ARGS)


if __name__ == "__main__":
    sys.exit(main())
