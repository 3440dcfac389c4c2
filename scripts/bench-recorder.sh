#!/usr/bin/env bash
# What the recorder costs a traced program, as the program pays it, against heaptrack.
#
#   scripts/bench-recorder.sh BUILD_DIR
#
# Whole processes, marginal method. The workload is tests/bench/pair_loop.cpp: allocate/
# free pairs from one call site below RECURSION frames of recursion (about 18 frames in
# all). Each configuration runs twice, with SMALL and with LARGE pairs; the difference
# divided by the extra events (2 per pair) is the cost of one more event, with start-up and
# exit (heaptrack's shell wrapper and interpreter, our trace creation) taken out:
#
#   plain        pair_loop cuda N                          (the simulated CUDA, untraced)
#   ours dD      the same under LD_PRELOAD=libgpumemtrace.so, GPUMEMTRACE_STACK_DEPTH=D
#   malloc       pair_loop malloc N                        (malloc/free, untraced)
#   heaptrack    heaptrack -o FILE pair_loop malloc N      (full stacks, like our depth 64)
#
# Wall time is measured around each process; CPU time is user + sys of the process and
# every child it waited for (wait4's rusage, scripts/lib/measure.py: heaptrack_interpret
# and its compressor count), so it includes our writer thread and heaptrack's interpreter. The cost of tracing one
# event is the traced configuration's marginal cost minus its untraced twin's (ours - plain,
# heaptrack - malloc). Every round runs every configuration once (interleaved, so a slow
# moment of a loaded machine touches all of them), costs and ratios are computed within a
# round, and the tables show medians over rounds.
#
# Environment (defaults in brackets): ROUNDS [5], SMALL [1000000], LARGE [5000000] pairs,
# RECURSION [12], DEPTHS [64 0], WORK_DIR [mktemp -d], KEEP=1 keeps the traces.
#
# BASELINE_PRELOAD=LIB adds, per depth, the same run under another libgpumemtrace.so (bD),
# in the same rounds, and a table of this build's cost minus the baseline's, taken within
# each round: a change of a few ns per event shows there, where the round-to-round spread
# of either cost alone (±15 ns on a shared machine) hides it.
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
ROUNDS=${ROUNDS:-5}
SMALL=${SMALL:-1000000}
LARGE=${LARGE:-5000000}
RECURSION=${RECURSION:-12}
DEPTHS=${DEPTHS:-"64 0"}
LOOP=$BUILD/bin/bench/pair_loop
STATS=$BUILD/bin/bench/trace_stats
PRELOAD=$BUILD/lib/libgpumemtrace.so
SIM=$BUILD/lib/cudasim
BASELINE_PRELOAD=${BASELINE_PRELOAD:-}
if [[ -n $BASELINE_PRELOAD && ! -f $BASELINE_PRELOAD ]]; then
    echo "BASELINE_PRELOAD: no such file: $BASELINE_PRELOAD" >&2
    exit 2
fi

MEASURE=$(cd "$(dirname "$0")" && pwd)/lib/measure.py
# shellcheck source=lib/bench.sh
source "$(cd "$(dirname "$0")" && pwd)/lib/bench.sh"
gmt_bench_need "$BUILD" "$LOOP" "$STATS" "$PRELOAD" "$SIM/libcudart.so.13" "$SIM/libcuda.so.1" \
    -- heaptrack python3 jq
gmt_bench_work recorder

# The command of configuration NAME for N pairs, as an argv (also printed in the report).
command_of() {
    local name=$1 n=$2 trace=$3
    case $name in
        plain) echo env LD_LIBRARY_PATH="$SIM" "$LOOP" cuda "$n" "$RECURSION" ;;
        d* | b*)
            local lib=$PRELOAD
            [[ $name == d* ]] || lib=$BASELINE_PRELOAD
            echo env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$lib" GPUMEMTRACE_STACK_DEPTH="${name:1}" \
                GPUMEMTRACE_OUTPUT="$trace" "$LOOP" cuda "$n" "$RECURSION" ;;
        malloc) echo "$LOOP" malloc "$n" "$RECURSION" ;;
        heaptrack) echo heaptrack -o "$trace" "$LOOP" malloc "$n" "$RECURSION" ;;
    esac
}

# run NAME N: appends wall seconds and user+sys seconds to NAME.N.{wall,cpu}.
run() {
    local name=$1 n=$2 trace="$WORK/trace.$1.$2"
    local cmd
    read -r -a cmd <<<"$(command_of "$name" "$n" "$trace.gmtrace")"
    python3 "$MEASURE" "$WORK/time.tmp" "${cmd[@]}" >"$WORK/run.log" 2>&1 ||
        { echo "failed: ${cmd[*]}" >&2; cat "$WORK/run.log" >&2; exit 1; }
    read -r wall cpu <"$WORK/time.tmp"
    echo "$wall" >>"$WORK/$name.$n.wall"
    echo "$cpu" >>"$WORK/$name.$n.cpu"
    if [[ $name == [db]* && $n == "$LARGE" ]]; then
        "$STATS" "$trace.gmtrace" >"$WORK/stats.json"
        jq -r '.log_bytes / .events' "$WORK/stats.json" >>"$WORK/$name.bpe"
        jq -r '.max_stack_depth' "$WORK/stats.json" >>"$WORK/$name.depth"
    fi
    rm -f "$trace".*
}

CONFIGS="plain"
for d in $DEPTHS; do
    CONFIGS+=" d$d"
    [[ -z $BASELINE_PRELOAD ]] || CONFIGS+=" b$d"
done
CONFIGS+=" malloc heaptrack"
EXTRA=$((2 * (LARGE - SMALL)))
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)

echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load before: $LOAD_BEFORE" >&2
for ((r = 1; r <= ROUNDS; r++)); do
    for c in $CONFIGS; do
        run "$c" "$SMALL"
        run "$c" "$LARGE"
        for m in wall cpu; do
            calc "%.2f" "($(tail -1 "$WORK/$c.$LARGE.$m") - $(tail -1 "$WORK/$c.$SMALL.$m")) * 1e9 / $EXTRA" \
                >>"$WORK/$c.marginal.$m"
        done
    done
    for m in wall cpu; do
        p=$(tail -1 "$WORK/plain.marginal.$m")
        ml=$(tail -1 "$WORK/malloc.marginal.$m")
        h=$(tail -1 "$WORK/heaptrack.marginal.$m")
        calc "%.2f" "$h - $ml" >>"$WORK/heaptrack.cost.$m"
        for d in $DEPTHS; do
            o=$(tail -1 "$WORK/d$d.marginal.$m")
            calc "%.2f" "$o - $p" >>"$WORK/d$d.cost.$m"
            calc "%.4f" "($o - $p) / ($h - $ml)" >>"$WORK/d$d.ratio.$m"
            if [[ -n $BASELINE_PRELOAD ]]; then
                b=$(tail -1 "$WORK/b$d.marginal.$m")
                calc "%.2f" "$b - $p" >>"$WORK/b$d.cost.$m"
                calc "%.2f" "$o - $b" >>"$WORK/d$d.vs_base.$m"
            fi
        done
    done
    echo "# round $r/$ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "Cost of one traced event, whole process, marginal between $SMALL and $LARGE pairs"
echo "($EXTRA events), $ROUNDS interleaved rounds, medians. Load average: $LOAD_BEFORE before,"
echo "$LOAD_AFTER after; $(nproc) cores."
echo
echo "| tracer | wall ns/event | CPU ns/event (all threads and children) | wall vs heaptrack | CPU vs heaptrack | stack frames recorded | trace bytes/event |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for d in $DEPTHS; do
    echo "| gpumemtrace, GPUMEMTRACE_STACK_DEPTH=$d | $(med "d$d.cost.wall") | $(med "d$d.cost.cpu") | $(med "d$d.ratio.wall" %.2f)× | $(med "d$d.ratio.cpu" %.2f)× | $(med "d$d.depth" %.0f) | $(med "d$d.bpe") |"
done
echo "| heaptrack (full stacks) | $(med heaptrack.cost.wall) | $(med heaptrack.cost.cpu) | 1 | 1 | all | – |"
echo
if [[ -n $BASELINE_PRELOAD ]]; then
    echo "This build against the baseline ($BASELINE_PRELOAD), same rounds: the cost of one"
    echo "event under each, and this build's minus the baseline's within a round (negative:"
    echo "this build is cheaper), medians; 'rounds cheaper' counts the rounds where it was."
    echo
    echo "| depth | wall: this / baseline | wall: difference | CPU: this / baseline | CPU: difference | rounds cheaper (CPU) |"
    echo "|---:|---|---:|---|---:|---:|"
    for d in $DEPTHS; do
        cheaper=$(awk '$1 < 0 {n++} END {print n + 0}' "$WORK/d$d.vs_base.cpu")
        echo "| $d | $(med "d$d.cost.wall") / $(med "b$d.cost.wall") | $(med "d$d.vs_base.wall") | $(med "d$d.cost.cpu") / $(med "b$d.cost.cpu") | $(med "d$d.vs_base.cpu") | $cheaper of $ROUNDS |"
    done
    echo
fi
gmt_bench_marginals "Marginal cost of the workload itself (ns per event, medians):"
