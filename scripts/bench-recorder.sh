#!/usr/bin/env bash
# Recorder overhead per traced call, against heaptrack.
#
#   scripts/bench-recorder.sh BUILD_DIR
#
# Part 1 (Google Benchmark, traced_calls_bench): interleaved over ROUNDS rounds, each round
# runs, in this order,
#   plain      BM_cudaMallocFree on the simulated CUDA, no preload
#   ours dN    the same under LD_PRELOAD=libgpumemtrace.so, GPUMEMTRACE_STACK_DEPTH=N
#              for N in DEPTHS
#   malloc     BM_mallocFree, no preload
#   heaptrack  BM_mallocFree under `heaptrack -o FILE`
# Both loops run below RECURSION frames of recursion (the stacks are deeper than 64 frames,
# with one call site). Cost per event = (traced - plain) / 2 per iteration, computed per
# round (paired, so a slow round slows both sides) and reported as the median over rounds,
# for wall time (Google Benchmark real_time) and for the application thread's CPU time.
# Every run does two repetitions and only the second counts: under heaptrack the first one
# absorbs a one-off stall of ~0.5 s (its start-up) that Google Benchmark would otherwise
# spread over the iterations as a bogus ~25 µs per event.
# Bytes per event = (trace file size - log_offset) / events of each traced run, i.e.
# everything after the fixed prologue + ring region (header, modules, stacks, frames).
#
# Part 2 (whole process): the same loops with a fixed WHOLE_ITERATIONS iterations, timed
# from outside (wall clock, user+sys CPU of the process and its children, max RSS) with
# /usr/bin/time, interleaved over ROUNDS rounds. For heaptrack this includes its
# heaptrack_interpret process and compression, i.e. what a user waits for.
#
# Environment (defaults in brackets): ROUNDS [5], DEPTHS [0 16 64], RECURSION [64],
# MIN_TIME [0.3] (Google Benchmark seconds per run), WHOLE_ITERATIONS [50000],
# WORK_DIR [mktemp -d], KEEP=1 keeps the work dir (traces, JSON).
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
ROUNDS=${ROUNDS:-5}
DEPTHS=${DEPTHS:-"0 16 64"}
RECURSION=${RECURSION:-64}
MIN_TIME=${MIN_TIME:-0.3}
WHOLE_ITERATIONS=${WHOLE_ITERATIONS:-50000}
BENCH=$BUILD/bin/bench/traced_calls_bench
STATS=$BUILD/bin/bench/trace_stats
PRELOAD=$BUILD/lib/libgpumemtrace.so
SIM=$BUILD/lib/cudasim

for f in "$BENCH" "$STATS" "$PRELOAD" "$SIM/libcudart.so.13" "$SIM/libcuda.so.1"; do
    [[ -e $f ]] || { echo "missing $f: cmake --build $BUILD --target benchmarks" >&2; exit 2; }
done
for t in heaptrack /usr/bin/time jq; do
    command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 2; }
done

WORK=${WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gmt-bench-recorder.XXXXXX")}
mkdir -p "$WORK"
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
raw() { median <"$WORK/$1"; }
med() { median <"$WORK/$1" | awk '{if ($1 == "nan") print $1; else printf "%.1f\n", $1}'; }
med3() { median <"$WORK/$1" | awk '{if ($1 == "nan") print $1; else printf "%.3f\n", $1}'; }
calc() { awk "BEGIN {printf \"$1\n\", $2}"; }

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
echo "# work dir: $WORK" >&2

# gbench NAME FILTER [prefix command...]: appends real/cpu ns per iteration to NAME.{real,cpu}
gbench() {
    local name=$1 filter=$2
    shift 2
    local json="$WORK/$name.json"
    "$@" "$BENCH" --recursion_depth="$RECURSION" --benchmark_min_time="$MIN_TIME" \
        --benchmark_repetitions=2 --benchmark_filter="^$filter/" \
        --benchmark_out="$json" --benchmark_out_format=json \
        >"$WORK/$name.log" 2>&1 || { echo "failed: $name" >&2; cat "$WORK/$name.log" >&2; exit 1; }
    jq -r '[.benchmarks[] | select(.run_type == "iteration")] | last | .real_time' "$json" \
        >>"$WORK/$name.real"
    jq -r '[.benchmarks[] | select(.run_type == "iteration")] | last | .cpu_time' "$json" \
        >>"$WORK/$name.cpu"
}


# --- part 1: per-call cost ----------------------------------------------------------------
for ((r = 1; r <= ROUNDS; r++)); do
    gbench plain BM_cudaMallocFree env LD_LIBRARY_PATH="$SIM"
    for d in $DEPTHS; do
        trace="$WORK/ours.d$d.r$r.gmtrace"
        gbench "d$d" BM_cudaMallocFree env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$PRELOAD" \
            GPUMEMTRACE_STACK_DEPTH="$d" GPUMEMTRACE_OUTPUT="$trace"
        "$STATS" "$trace" >"$WORK/stats.d$d.r$r.json"
        jq -r '.log_bytes / .events' "$WORK/stats.d$d.r$r.json" >>"$WORK/d$d.bpe"
        jq -r '.event_record_bytes / .events' "$WORK/stats.d$d.r$r.json" >>"$WORK/d$d.rbpe"
        jq -r '.max_stack_depth' "$WORK/stats.d$d.r$r.json" >>"$WORK/d$d.depth"
        rm -f "$trace"
    done
    gbench malloc BM_mallocFree
    gbench heaptrack BM_mallocFree heaptrack -o "$WORK/ht.r$r"
    rm -f "$WORK"/ht.r"$r".*
    # Paired per-round costs per event (two events per iteration).
    p=$(tail -1 "$WORK/plain.real"); pc=$(tail -1 "$WORK/plain.cpu")
    m=$(tail -1 "$WORK/malloc.real"); mc=$(tail -1 "$WORK/malloc.cpu")
    h=$(tail -1 "$WORK/heaptrack.real"); hc=$(tail -1 "$WORK/heaptrack.cpu")
    calc "%.1f" "($h - $m) / 2" >>"$WORK/ht.cost"
    calc "%.1f" "($hc - $mc) / 2" >>"$WORK/ht.cpucost"
    for d in $DEPTHS; do
        o=$(tail -1 "$WORK/d$d.real"); oc=$(tail -1 "$WORK/d$d.cpu")
        calc "%.1f" "($o - $p) / 2" >>"$WORK/d$d.cost"
        calc "%.1f" "($oc - $pc) / 2" >>"$WORK/d$d.cpucost"
        calc "%.3f" "(($o - $p) / 2) / (($h - $m) / 2)" >>"$WORK/d$d.ratio"
        calc "%.3f" "(($oc - $pc) / 2) / (($hc - $mc) / 2)" >>"$WORK/d$d.cpuratio"
    done
    echo "# round $r/$ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

# --- part 2: whole process ----------------------------------------------------------------
# whole NAME ITERATIONS FILTER [prefix command...]: wall s, user+sys s, max RSS KiB
whole() {
    local name=$1 iterations=$2 filter=$3
    shift 3
    local t0 t1
    t0=$(date +%s%N)
    /usr/bin/time -f "%U %S %M" -o "$WORK/time.tmp" "$@" "$BENCH" --recursion_depth="$RECURSION" \
        --iterations="$iterations" --benchmark_filter="^$filter/" >/dev/null 2>&1 ||
        { echo "failed: whole $name" >&2; exit 1; }
    t1=$(date +%s%N)
    calc "%.4f" "($t1 - $t0) / 1e9" >>"$WORK/w.$name.wall"
    tail -1 "$WORK/time.tmp" | awk '{printf "%.2f\n", $1 + $2}' >>"$WORK/w.$name.cpu"
    tail -1 "$WORK/time.tmp" | awk '{print $3}' >>"$WORK/w.$name.rss"
}
# Each tool also runs with a tenth of the iterations: the difference between the two runs
# is the marginal cost of 0.9 * WHOLE_ITERATIONS iterations without the fixed start-up
# (heaptrack's shell wrapper and interpreter, our session creation).
SMALL=$((WHOLE_ITERATIONS / 10))
for ((r = 1; r <= ROUNDS; r++)); do
    for size in big small; do
        n=$WHOLE_ITERATIONS
        [[ $size == small ]] && n=$SMALL
        whole "plain.$size" "$n" BM_cudaMallocFree env LD_LIBRARY_PATH="$SIM"
        whole "d64.$size" "$n" BM_cudaMallocFree env LD_LIBRARY_PATH="$SIM" LD_PRELOAD="$PRELOAD" \
            GPUMEMTRACE_STACK_DEPTH=64 GPUMEMTRACE_OUTPUT="$WORK/whole.r$r.gmtrace"
        stat -c %s "$WORK/whole.r$r.gmtrace" >>"$WORK/w.d64.$size.bytes"
        rm -f "$WORK/whole.r$r.gmtrace"
        whole "malloc.$size" "$n" BM_mallocFree
        whole "heaptrack.$size" "$n" BM_mallocFree heaptrack -o "$WORK/whole-ht.r$r"
        stat -c %s "$WORK"/whole-ht.r"$r".* >>"$WORK/w.heaptrack.$size.bytes"
        rm -f "$WORK"/whole-ht.r"$r".*
    done
    # Marginal wall and CPU per event, paired within the round.
    for n in plain d64 malloc heaptrack; do
        for m in wall cpu; do
            b=$(tail -1 "$WORK/w.$n.big.$m")
            s_=$(tail -1 "$WORK/w.$n.small.$m")
            calc "%.1f" "($b - $s_) * 1e9 / (2 * ($WHOLE_ITERATIONS - $SMALL))" >>"$WORK/w.$n.slope.$m"
        done
    done
    echo "# whole-process round $r/$ROUNDS done" >&2
done

# --- tables -------------------------------------------------------------------------------
echo
echo "Per traced event, Google Benchmark, $ROUNDS interleaved rounds, medians (recursion $RECURSION):"
echo
echo "| configuration | ns/iteration wall | ns/iteration app CPU | cost/event wall (ns) | cost/event app CPU (ns) | ours/heaptrack (wall) | ours/heaptrack (app CPU) | trace bytes/event | event record bytes/event | stack depth recorded |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
echo "| plain cudaMalloc+cudaFree | $(med plain.real) | $(med plain.cpu) | – | – | – | – | – | – |"
for d in $DEPTHS; do
    echo "| gpumemtrace, depth $d | $(med d$d.real) | $(med d$d.cpu) | $(med d$d.cost) | $(med d$d.cpucost) | $(med3 d$d.ratio) | $(med3 d$d.cpuratio) | $(med d$d.bpe) | $(med d$d.rbpe) | $(med d$d.depth) |"
done
echo "| plain malloc+free | $(med malloc.real) | $(med malloc.cpu) | – | – | – | – | – | – |"
echo "| heaptrack (full stacks) | $(med heaptrack.real) | $(med heaptrack.cpu) | $(med ht.cost) | $(med ht.cpucost) | 1 | 1 | – | – | – |"
echo
echo "Whole process, $WHOLE_ITERATIONS iterations = $((2 * WHOLE_ITERATIONS)) events (and $SMALL iterations for the marginal cost), $ROUNDS interleaved rounds, medians:"
echo
echo "| run | wall s | user+sys s (incl. children) | max RSS MiB | output bytes | marginal wall ns/event | marginal CPU ns/event | marginal wall overhead ns/event |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for n in plain d64 malloc heaptrack; do
    base=plain
    [[ $n == heaptrack || $n == malloc ]] && base=malloc
    bytes="–"
    [[ -f $WORK/w.$n.big.bytes ]] && bytes=$(raw "w.$n.big.bytes")
    over="–"
    [[ $n != "$base" ]] && over=$(calc "%.0f" "$(raw "w.$n.slope.wall") - $(raw "w.$base.slope.wall")")
    label=$n
    case $n in
        plain) label="plain cudaMalloc+cudaFree" ;;
        d64) label="gpumemtrace, depth 64" ;;
        malloc) label="plain malloc+free" ;;
        heaptrack) label="heaptrack" ;;
    esac
    echo "| $label | $(med3 "w.$n.big.wall") | $(med3 "w.$n.big.cpu") | $(calc "%.1f" "$(raw "w.$n.big.rss") / 1024") | $bytes | $(med "w.$n.slope.wall") | $(med "w.$n.slope.cpu") | $over |"
done
