"""The `snapshot` group of scripts/gpu-validate.sh: a PyTorch program records its own memory
history (tests/gpu/torch_snapshot.py) while traced, and `gpumemtrace export --format
memory-viz` of its trace is compared with PyTorch's own snapshot of the same run, entry by
entry and segment by segment; then PyTorch's viewer code reads ours
(tests/gpu/torch_memory_viz.py).
"""
import collections
import json
import pickle
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PROGRAM = HERE.parent / "tests" / "gpu" / "torch_snapshot.py"
VIEWER = HERE.parent / "tests" / "gpu" / "torch_memory_viz.py"
# The actions both snapshots can have; PyTorch's own may also hold `snapshot` and
# `user_defined` markers, which no allocator event makes.
ACTIONS = {"alloc", "free_requested", "free_completed", "segment_alloc", "segment_free",
           "segment_map", "segment_unmap", "oom"}


def entries(snapshot):
    return [(e["action"], e["addr"], e["size"]) for e in snapshot["device_traces"][0]
            if e["action"] in ACTIONS]


def segments(snapshot):
    """{address: (total, allocated, active, requested, pool, expandable,
    [(block address, size, state)])}."""
    return {s["address"]: (s["total_size"], s["allocated_size"], s["active_size"],
                           s["requested_size"], s["segment_type"], s["is_expandable"],
                           [(b["address"], b["size"], b["state"]) for b in s["blocks"]])
            for s in snapshot["segments"] if s["device"] == 0}


# PyTorch's allocator in its default settings, and with expandable segments (ranges mapped
# into one reservation: segment_map and segment_unmap entries).
CONFIGS = (("snapshot", {}),
           ("snapshot expandable", {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}))


def check_snapshot(env, row):
    for label, extra in CONFIGS:
        name = label.replace(" ", "_")
        try:
            compare(env, row, label, name, extra)
        except Exception as exc:  # a comparison that cannot run is a failed one
            row(f"{label} (exception)", False, repr(exc)[:400])


def compare(env, row, label, name, extra):
    theirs_path = env.out / f"torch_{name}.theirs.pickle"
    p, traces, dt = env.record(f"torch_{name}",
                               [sys.executable, str(PROGRAM), str(theirs_path)], extra=extra,
                               timeout=600)
    if p.returncode != 0 or len(traces) != 1 or not theirs_path.exists():
        row(f"{label}: PyTorch run with its memory history", False,
            f"rc={p.returncode}, {len(traces)} traces: {p.stderr[-400:]}")
        return
    ours_path = env.out / f"torch_{name}.ours.pickle"
    q, _ = env.run(f"torch_{name}.export", [str(env.cli), "export", "--format", "memory-viz",
                                             "-o", str(ours_path), str(traces[0])],
                   env=env.cli_env)
    if q.returncode != 0:
        row(f"{label}: export", False, f"rc={q.returncode} {q.stderr[-300:]}")
        return
    theirs = pickle.loads(theirs_path.read_bytes())
    ours = pickle.loads(ours_path.read_bytes())

    mine, want = entries(ours), entries(theirs)
    # Ours may also hold allocations another library made with cudaMalloc itself (a segment
    # of one block each, outside PyTorch's history): the rest must be PyTorch's, in order.
    wanted = set(want)
    shared = [e for e in mine if e in wanted]
    extra = [e for e in mine if e not in wanted]
    first_diff = next((i for i, (a, b) in enumerate(zip(shared, want)) if a != b),
                      None if len(shared) == len(want) else min(len(shared), len(want)))
    row(f"{label}: the history equals PyTorch's own, entry by entry",
        len(want) > 0 and shared == want,
        f"PyTorch {len(want)} entries {dict(collections.Counter(a for a, _, _ in want))}; ours "
        f"{len(mine)}, {len(extra)} of them outside PyTorch's history "
        f"{dict(collections.Counter(a for a, _, _ in extra))}; first difference at "
        f"{first_diff}: ours {shared[first_diff] if first_diff is not None and first_diff < len(shared) else None}, "
        f"PyTorch's {want[first_diff] if first_diff is not None and first_diff < len(want) else None}")

    mine_s, want_s = segments(ours), segments(theirs)
    # Ours also lists what other libraries still held (one block each); PyTorch's segments
    # must be there, each with the same figures and blocks.
    same = {a: mine_s.get(a) == s for a, s in want_s.items()}
    differ = [a for a, ok in same.items() if not ok]
    row(f"{label}: the segments at the end equal PyTorch's, block by block",
        len(want_s) > 0 and not differ,
        f"PyTorch {len(want_s)} segments, {sum(s[0] for s in want_s.values())} B reserved, "
        f"{sum(s[1] for s in want_s.values())} B allocated, "
        f"{sum(len(s[6]) for s in want_s.values())} blocks; ours {len(mine_s)} segments "
        f"({len(set(mine_s) - set(want_s))} not PyTorch's); differing: "
        + "; ".join(f"{hex(a)} ours {mine_s.get(a)} PyTorch's {want_s[a]}" for a in differ[:2])[:600])

    env.report(traces, f"torch_{name}")  # the viewer script compares with its peaks
    viz, _ = env.run(f"torch_{name}.torch_viz",
                     [sys.executable, str(VIEWER), str(ours_path),
                      str(env.logs / f"torch_{name}.report.json"),
                      str(env.out / f"torch_{name}_viz")])
    try:
        seen = json.loads(viz.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        row(f"{label}: PyTorch's viewer code reads ours", False,
            f"rc={viz.returncode} {viz.stderr[-300:]}")
        return
    errors = seen.get("errors", {})
    row(f"{label}: PyTorch's viewer code reads ours",
        not errors and seen.get("trace_plot_bytes", 0) > 0 and seen.get("segment_plot_bytes", 0) > 0,
        f"{sorted(k for k in seen if k.endswith('_bytes'))}; errors: {json.dumps(errors)[:400]}")
