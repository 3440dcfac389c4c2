"""Loads a `gpumemtrace export --format memory-viz` snapshot with PyTorch's own viewer code
(torch.cuda._memory_viz), for the `export` group of scripts/gpu-validate.sh.

    python3 torch_memory_viz.py SNAPSHOT.pickle REPORT.json OUT_DIR

Runs trace_plot and segment_plot (the HTML of pytorch.org/memory_viz's "Active Memory
Timeline" and "Allocator State History"), segsum, trace and the flame graph text of
memory(), writing what they return to OUT_DIR; replays the snapshot's history as the
timeline does (alloc adds a block, free_completed removes it) for the live bytes at the
peak per GPU. The last stdout line is JSON; each step's failure is recorded in it, so one
broken step does not hide the others.
"""
import json
import pickle
import sys
import traceback
from pathlib import Path


def main():
    snapshot_path, report_path, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    result = {"errors": {}}
    try:
        from torch.cuda import _memory_viz as viz
    except Exception:
        result["errors"]["import"] = traceback.format_exc()[-500:]
        print(json.dumps(result))
        return 0
    with open(snapshot_path, "rb") as f:
        snapshot = pickle.load(f)
    steps = {
        "trace_plot": lambda: viz.trace_plot(snapshot),
        "segment_plot": lambda: viz.segment_plot(snapshot),
        "segsum": lambda: viz.segsum(snapshot),
        "trace": lambda: viz.trace(snapshot),
        # The flame graph's input lines; format_flamegraph would download flamegraph.pl.
        "memory": lambda: viz.memory(snapshot, format_flamegraph=lambda lines: lines),
        "segments": lambda: viz.segments(snapshot, format_flamegraph=lambda lines: lines),
    }
    for name, step in steps.items():
        try:
            text = step()
            suffix = ".html" if name.endswith("_plot") else ".txt"
            (out / (name + suffix)).write_text(text)
            result[name + "_bytes"] = len(text)
        except Exception:
            result["errors"][name] = traceback.format_exc()[-500:]

    peaks = {}
    for device, entries in enumerate(snapshot["device_traces"]):
        live, peak = {}, 0
        for e in entries:
            if e["action"] == "alloc":
                live[e["addr"]] = e["size"]
            elif e["action"] == "free_completed":
                live.pop(e["addr"], None)
            peak = max(peak, sum(live.values()))
        peaks[str(device)] = peak
    result["snapshot_peaks"] = peaks
    report = json.loads(Path(report_path).read_text())
    result["report_peaks"] = {str(d["ordinal"]): d["peak_bytes"] for d in report["devices"]}
    result["report_kinds"] = {k: v["allocations"] for k, v in report["kinds"].items()}
    frames = [f for t in snapshot["device_traces"] for e in t for f in e["frames"]]
    result["entries"] = sum(len(t) for t in snapshot["device_traces"])
    result["python_frames"] = sum(1 for f in frames if f["filename"].endswith(".py"))
    result["python_frame_example"] = next(
        (f for f in frames if f["filename"].endswith(".py") and f["line"] > 0), None)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
