#!/usr/bin/env bash
# Trace size and time of the aggregated recording mode against a full trace, for one long
# run (docs/configuration.md, "Aggregate mode").
#
#   scripts/bench-aggregate.sh BUILD_DIR
#
# The workload is tests/recorder/programs/aggregate_story.cpp `loop N`: N events, N/2
# allocate/free pairs, on the simulated CUDA. It runs once in full mode and once with
# GPUMEMTRACE_MODE=aggregate, and prints per mode the wall time, the trace's size (apparent,
# and the blocks it takes on disk: the checkpoint regions are holes until written) and the
# allocations and leaked bytes `gpumemtrace report` finds (the same in both).
#
# Environment (defaults in brackets): EVENTS [100000000], BUDGET [64M]
# (GPUMEMTRACE_AGGREGATE_BUDGET), WORK_DIR [mktemp -d], KEEP=1 keeps the traces.
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
EVENTS=${EVENTS:-100000000}
BUDGET=${BUDGET:-64M}
PROGRAM=$BUILD/tests/recorder/programs/aggregate_story
WORK=${WORK_DIR:-$(mktemp -d)}
mkdir -p "$WORK"
if [[ ${KEEP:-0} != 1 ]]; then
    trap 'rm -rf "$WORK"' EXIT
fi

printf '%-10s %12s %10s %14s %14s %12s %14s\n' mode events seconds "file bytes" "disk bytes" \
    allocations "leaked bytes"
for mode in full aggregate; do
    trace=$WORK/$mode.gmtrace
    rm -f "$trace"
    start=$(date +%s.%N)
    LD_PRELOAD=$BUILD/lib/libgpumemtrace.so LD_LIBRARY_PATH=$BUILD/lib/cudasim \
        GPUMEMTRACE_OUTPUT=$trace GPUMEMTRACE_MODE=$mode GPUMEMTRACE_AGGREGATE_BUDGET=$BUDGET \
        "$PROGRAM" loop "$EVENTS"
    end=$(date +%s.%N)
    report=$("$BUILD/bin/gpumemtrace" report --no-symbols --format json "$trace")
    read -r allocations leaked < <(python3 -c 'import json, sys
s = json.load(sys.stdin)["summary"]
print(s["allocations"], s["leaked_bytes"])' <<<"$report")
    printf '%-10s %12s %10.2f %14s %14s %12s %14s\n' "$mode" "$EVENTS" \
        "$(echo "$end - $start" | bc)" "$(stat -c %s "$trace")" \
        "$(($(stat -c %b "$trace") * $(stat -c %B "$trace")))" "$allocations" "$leaked"
done
