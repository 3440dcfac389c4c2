#!/usr/bin/env bash
# Trace size and time of the aggregated recording mode against a full trace, for one long
# run (docs/configuration.md, "Aggregate mode").
#
#   scripts/bench-aggregate.sh BUILD_DIR
#
# WORKLOAD=raw [default]: tests/recorder/programs/aggregate_story.cpp `loop N`: N events,
# N/2 allocate/free pairs, on the simulated CUDA. WORKLOAD=blocks: a PyTorch-like server's
# block events, tests/frameworks/programs/block_server.cpp on the stand-in libc10_cuda.so
# (`steady`: REQUESTS requests with the same live set, no phase marks: about 15 block events
# per request; with PHASES=1, `held_slow`: each request a phase mark, its output tensor
# still live at the next mark, an answer kept every 1000th request). It runs once in full
# mode and once with GPUMEMTRACE_MODE=aggregate, and prints per mode the wall time, the
# trace's size (apparent, and the blocks it takes on disk: the checkpoint regions are holes
# until written) and what `gpumemtrace report` finds (the same in both): allocations and
# leaked bytes, and the events an aggregated trace kept; for blocks also the tensor and
# segment peaks.
#
# Environment (defaults in brackets): WORKLOAD [raw], EVENTS [100000000], REQUESTS
# [1000000], PHASES [0] (blocks only), BUDGET [64M] (GPUMEMTRACE_AGGREGATE_BUDGET), WORK_DIR [mktemp -d], KEEP=1 keeps
# the traces.
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
EVENTS=${EVENTS:-100000000}
REQUESTS=${REQUESTS:-1000000}
BUDGET=${BUDGET:-64M}
WORKLOAD=${WORKLOAD:-raw}
case $WORKLOAD in
raw)
    command=("$BUILD/tests/recorder/programs/aggregate_story" loop "$EVENTS")
    ;;
blocks)
    server_mode=steady
    if [[ ${PHASES:-0} == 1 ]]; then
        server_mode=held_slow
    fi
    command=("$BUILD/tests/frameworks/gmt_block_server" "$REQUESTS" /dev/null "$server_mode")
    export FAKE_TORCH=$BUILD/tests/frameworks/fake_torch
    ;;
*)
    echo "$0: WORKLOAD is raw or blocks" >&2
    exit 2
    ;;
esac
WORK=${WORK_DIR:-$(mktemp -d)}
mkdir -p "$WORK"
if [[ ${KEEP:-0} != 1 ]]; then
    trap 'rm -rf "$WORK"' EXIT
fi

printf '%-10s %12s %10s %14s %14s %12s %14s %14s %14s %10s\n' mode events seconds "file bytes" \
    "disk bytes" allocations "leaked bytes" "tensor peak" "segment peak" kept
for mode in full aggregate; do
    trace=$WORK/$mode.gmtrace
    rm -f "$trace"
    start=$(date +%s.%N)
    LD_PRELOAD=$BUILD/lib/libgpumemtrace.so LD_LIBRARY_PATH=$BUILD/lib/cudasim \
        GPUMEMTRACE_OUTPUT=$trace GPUMEMTRACE_MODE=$mode GPUMEMTRACE_AGGREGATE_BUDGET=$BUDGET \
        "${command[@]}"
    end=$(date +%s.%N)
    report=$("$BUILD/bin/gpumemtrace" report --no-symbols --format json "$trace")
    read -r events allocations leaked tensor segment kept < <(python3 -c 'import json, sys
r = json.load(sys.stdin)
s, p = r["summary"], r["processes"][0]
d = [d for c in [r.get("caching_allocator") or {"processes": []}] for q in c["processes"]
     for d in q["devices"]]
print((p.get("aggregate") or p)["events"], s["allocations"], s["leaked_bytes"],
      d[0]["allocated_peak_bytes"] if d else "-", d[0]["reserved_peak_bytes"] if d else "-",
      p["aggregate"]["kept_events"] if p.get("aggregate") else "-")' \
        <<<"$report")
    printf '%-10s %12s %10.2f %14s %14s %12s %14s %14s %14s %10s\n' "$mode" "$events" \
        "$(echo "$end - $start" | bc)" "$(stat -c %s "$trace")" \
        "$(($(stat -c %b "$trace") * $(stat -c %B "$trace")))" "$allocations" "$leaked" \
        "$tensor" "$segment" "$kept"
done
