#!/usr/bin/env bash
# On a GPU host: the same PyTorch run recorded in full and in aggregate mode
# (GPUMEMTRACE_MODE=aggregate, docs/configuration.md "Aggregate mode"), and their reports
# compared: leaks, the peak, growth and failures must be the same figures, and at the
# tensor level (PyTorch's block events, which aggregate mode folds too) each device's
# tensor and segment peaks, the tensor peak's holders, the space inside the segments at it,
# the blocks allocated, freed and left at exit; the trace sizes and the disk they use are
# printed, and what the aggregated trace folded. The run is tests/gpu/torch_server.py: REQUESTS
# requests (default 20000) with a slow planted leak, the same requests in the same order
# each time.
#   scripts/gpu-aggregate.sh BUNDLE OUT     (BUNDLE: scripts/gpu-bundle.sh's folder)
set -euo pipefail
bundle=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
cli=$bundle/bin/gpumemtrace
export LD_LIBRARY_PATH=$bundle/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python=${PYTHON:-python3}
requests=${REQUESTS:-20000}
for mode in full aggregate; do
    rm -f "$out/$mode".*.gmtrace
    flag=()
    [ "$mode" = aggregate ] && flag=(--aggregate)
    start=$(date +%s.%N)
    "$cli" record -q "${flag[@]}" --library "$bundle/lib/libgpumemtrace.so" \
        -o "$out/$mode.%p.gmtrace" -- "$python" "$here/tests/gpu/torch_server.py" "$requests" \
        > "$out/$mode.log" 2>&1
    end=$(date +%s.%N)
    trace=$(ls "$out/$mode".*.gmtrace | head -1)
    echo "$mode: $(tail -1 "$out/$mode.log"); $(stat -c '%s bytes, %b blocks of %B' "$trace");" \
         "$(du -k "$trace" | cut -f1) KiB on disk; $(python3 -c "print(f'{$end - $start:.1f} s')")"
    "$cli" report --format json --top 20 "$trace" > "$out/$mode.json"
    "$cli" report "$trace" | sed -n '1,/^Peak/p' > "$out/$mode.txt"
    "$cli" check --max-growth 0 "$trace" > "$out/$mode.check.txt" || true
done
python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
def figures(name):
    r = json.load(open(f"{out}/{name}.json"))
    s = r["summary"]
    leaks = sorted((l["bytes"], l["allocations"], l["kind"]) for l in r["leaks"])
    growth = sorted((g["bytes_per_iteration"], g["growing_iterations"]) for g in r["growth"])
    peak = [(t["bytes"], t["allocations"]) for t in r["peak"]["top_sites"]]
    c = r.get("caching_allocator") or {}
    blocks = [(d["allocated_peak_bytes"], d["reserved_peak_bytes"])
              for p in c.get("processes", []) for d in p["devices"]]
    block_counts = [(d["allocations"], d["frees"], d["allocated_end_bytes"],
                     d["reserved_end_bytes"]) for p in c.get("processes", []) for d in p["devices"]]
    tensor_peak = c.get("tensor_peak") or {}
    holders = [(t["bytes"], t["allocations"]) for t in tensor_peak.get("top_sites", [])]
    # A measurement the analysis could not pay for at the peak itself is an earlier
    # peak's, marked exact: false (docs/frameworks.md): compared only when both are exact.
    space = [(f["allocated_bytes"], f["reserved_bytes"], f["inactive_split_bytes"],
              f["largest_free_bytes"], f["exact"]) for f in c.get("fragmentation", [])]
    exits = [(p.get("exit_kept_bytes"), p.get("exit_kept_blocks"), p.get("exit_freed_bytes"),
              p.get("exit_freed_blocks"), p["estimated_blocks"], p["unmatched_events"])
             for p in c.get("processes", [])]
    return {"leaked": (s["leaked_bytes"], s["leaked_allocations"]), "peak": s["peak_bytes"],
            "allocations": s["allocations"], "failed": s["failed_allocations"],
            "errors": s["errors"], "leaks": leaks, "peak sites": peak, "growth": growth,
            "tensor/segment peaks": blocks, "tensor peak": tensor_peak.get("bytes"),
            "tensor peak holders": holders, "space at the tensor peak": space,
            "blocks allocated/freed/end": block_counts, "blocks at exit": exits}
a = json.load(open(f"{out}/aggregate.json"))["processes"][0].get("aggregate")
print(f"aggregate: {a}")
full, agg = figures("full"), figures("aggregate")
k = "space at the tensor peak"
if not all(f[-1] for f in full[k] + agg[k]):
    print(f"not compared (a side measured an earlier peak) {k}: full {full[k]} / aggregate {agg[k]}")
    del full[k], agg[k]
for k in full:
    print(f"{'same' if full[k] == agg[k] else 'DIFFERENT'} {k}: full {full[k]!s:.200} / aggregate {agg[k]!s:.200}")
sys.exit(0 if full == agg else 1)
PY
