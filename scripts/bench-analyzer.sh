#!/usr/bin/env bash
# Analyzer throughput and memory against heaptrack_print.
#
#   scripts/bench-analyzer.sh BUILD_DIR
#
# For each size N it makes a synthetic gpumemtrace trace of N events (gen_trace) and a
# heaptrack trace of N malloc/free calls with the same pattern (malloc_loop under heaptrack),
# both over a constant live set of LIVE allocations. Then, interleaved over ROUNDS rounds,
# it times `gpumemtrace report --no-symbols --format json -o /dev/null` and
# `heaptrack_print --print-leaks 1` (its full default analysis plus leaks, written to
# /dev/null), and prints the exact commands and markdown tables of medians: wall time,
# events/s, CPU time (user + system, every thread) and max RSS, and the speed ratio.
# Within a round, which command runs first rotates from round to round. A speed ratio is
# taken within each round (the other command's wall time over ours, both from the same
# round) and the tables give the median of those with their range and the rounds where
# it was above 1: a shared machine's level moves from round to round, and a ratio of two
# medians, each possibly from another round, carries that movement.
# With SERIAL=1 each round also times our report with GPUMEMTRACE_DECODE_THREADS=0 (the
# log decoded on the reading thread: what decoding ahead on other threads gains).
#
# Environment (defaults in brackets):
#   SIZES [20000000 100000000]            event counts of our traces
#   HEAPTRACK_SIZES [same as SIZES]       sizes that also get a heaptrack run; a size not in
#                                         this list is reported as "not run" for heaptrack
#   ROUNDS [5]        rounds for sizes below 50 M events; LARGE_ROUNDS [3] for larger ones
#   LIVE [64]         live set size
#   SERIAL [0]        1: also time GPUMEMTRACE_DECODE_THREADS=0
#   BASELINE_CLI []   another build's gpumemtrace binary, timed on our traces in the same
#                     rounds (before/after a change, one table more)
#   WORK_DIR [mktemp -d under TMPDIR]  traces go here (100 M events is ~1.3 GB); KEEP=1 keeps
#                     it, and a later run with the same WORK_DIR reuses the traces it finds
#
# On a host without heaptrack (a GPU host), put the ht.N.trace.* files of a run elsewhere
# in WORK_DIR (they are small: 82 KB for 100 M events) and heaptrack_print, GNU time and
# their libraries beside the build (scripts/gpu-bundle.sh carries them into tools/ of its
# bundle, which a bundle given as BUILD_DIR puts first, with the CLI's gpu-libs/:
# gmt_bench_bundle in lib/bench.sh): heaptrack itself is needed only for a trace not there.
#
# The machine's load average is printed before and after each round, with each command's
# wall time in it: the analyzer decodes on other cores, so what other processes take of
# them shows in its figures.
#
# Requires: GNU time (/usr/bin/time, or GNU_TIME=PATH), heaptrack_print, heaptrack (for a
# trace WORK_DIR lacks), and `cmake --build BUILD_DIR --target benchmarks`.
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
SIZES=${SIZES:-"20000000 100000000"}
HEAPTRACK_SIZES=${HEAPTRACK_SIZES:-$SIZES}
SERIAL=${SERIAL:-0}
ROUNDS=${ROUNDS:-5}
LARGE_ROUNDS=${LARGE_ROUNDS:-3}
LIVE=${LIVE:-64}
GEN=$BUILD/bin/bench/gen_trace
LOOP=$BUILD/bin/bench/malloc_loop
CLI=$BUILD/bin/gpumemtrace
BASELINE_CLI=${BASELINE_CLI:-}

for f in "$GEN" "$LOOP" "$CLI" ${BASELINE_CLI:+"$BASELINE_CLI"}; do
    [[ -x $f ]] || { echo "missing $f: cmake --build $BUILD --target benchmarks" >&2; exit 2; }
done
# shellcheck source=lib/bench.sh
source "$(cd "$(dirname "$0")" && pwd)/lib/bench.sh"
gmt_bench_bundle "$BUILD"
GNU_TIME=${GNU_TIME:-/usr/bin/time}
for t in heaptrack_print "$GNU_TIME"; do
    command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 2; }
done

gmt_bench_work analyzer

has() { [[ " $1 " == *" $2 "* ]]; }

# run NAME CMD...: wall seconds (ns clock), CPU seconds (user + system) and max RSS (KiB)
# appended to $WORK/NAME.{wall,cpu,rss}
run() {
    local name=$1
    shift
    local t0 t1
    t0=$(date +%s%N)
    "$GNU_TIME" -f '%M %U %S' -o "$WORK/time.tmp" "$@" >/dev/null 2>"$WORK/stderr.tmp" || {
        echo "failed: $*" >&2
        cat "$WORK/stderr.tmp" >&2
        exit 1
    }
    t1=$(date +%s%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", (b - a) / 1e9}' >>"$WORK/$name.wall"
    tail -n 1 "$WORK/time.tmp" | awk '{print $1}' >>"$WORK/$name.rss"
    tail -n 1 "$WORK/time.tmp" | awk '{printf "%.2f\n", $2 + $3}' >>"$WORK/$name.cpu"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

# time_one WHAT N: one timed run of command WHAT (ours, base, serial, ht) at size N.
time_one() {
    case $1 in
    ours) run "ours.$2" "${OURS[@]}" "$WORK/ours.$2.gmtrace" ;;
    base) run "base.$2" "$BASELINE_CLI" "${OURS[@]:1}" "$WORK/ours.$2.gmtrace" ;;
    serial) run "serial.$2" env GPUMEMTRACE_DECODE_THREADS=0 "${OURS[@]}" "$WORK/ours.$2.gmtrace" ;;
    ht) run "ht.$2" "${HT[@]}" "$WORK"/ht."$2".trace.* ;;
    esac
}

# paired NAME: the ratios of $WORK/NAME.ratio (one per round) as "MEDIAN× (MIN–MAX, above
# 1 in K of R)".
paired() {
    local m
    m=$(median <"$WORK/$1.ratio")
    sort -g "$WORK/$1.ratio" | awk -v m="$m" '{a[NR] = $1; k += ($1 > 1)}
        END {printf "%.2f× (%.2f–%.2f, above 1 in %d of %d)", m, a[1], a[NR], k, NR}'
}

echo "# work dir: $WORK ($(df -h --output=avail "$WORK" | tail -1 | tr -d ' ') free)" >&2

# --- inputs -------------------------------------------------------------------------------
rm -f "$WORK"/*.wall "$WORK"/*.cpu "$WORK"/*.rss "$WORK"/*.ratio
for n in $SIZES; do
    if [[ ! -s $WORK/ours.$n.gmtrace ]]; then
        t0=$(date +%s%N)
        "$GEN" "$WORK/ours.$n.gmtrace" "$n" "$LIVE" >/dev/null
        t1=$(date +%s%N)
        echo "# generated ours.$n.gmtrace: $(stat -c %s "$WORK/ours.$n.gmtrace") bytes in $(( (t1 - t0) / 1000000 )) ms" >&2
    fi
    if has "$HEAPTRACK_SIZES" "$n" && ! ls "$WORK"/ht."$n".trace.* >/dev/null 2>&1; then
        command -v heaptrack >/dev/null || { echo "missing heaptrack (to record ht.$n.trace.* in $WORK)" >&2; exit 2; }
        t0=$(date +%s%N)
        heaptrack -o "$WORK/ht.$n" "$LOOP" "$n" "$LIVE" >"$WORK/heaptrack.$n.log" 2>&1
        t1=$(date +%s%N)
        ht=$(ls "$WORK"/ht."$n".* | head -1)
        mv "$ht" "$WORK/ht.$n.trace${ht##*ht."$n"}"
        echo "# recorded $(basename "$WORK"/ht."$n".trace.*): $(stat -c %s "$WORK"/ht."$n".trace.*) bytes in $(( (t1 - t0) / 1000000 )) ms" >&2
    fi
done

# --- timed runs, interleaved: every round runs every size of both tools -------------------
OURS=("$CLI" report --no-symbols --format json -o /dev/null)
HT=(heaptrack_print --print-leaks 1)
echo "## Commands"
echo
echo '```'
echo "ours:            ${OURS[*]} ours.N.gmtrace"
((SERIAL)) && echo "ours, serial:    GPUMEMTRACE_DECODE_THREADS=0 ${OURS[*]} ours.N.gmtrace"
[[ -n $BASELINE_CLI ]] && echo "baseline:        $BASELINE_CLI ${OURS[*]:1} ours.N.gmtrace"
echo "heaptrack_print: ${HT[*]} ht.N.trace.zst > /dev/null"
echo '```'
echo
echo "Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load average (1, 5, 15 min) before the runs: $(load)."
for ((r = 1; r <= ROUNDS; r++)); do
    before=$(load)
    walls=""
    for n in $SIZES; do
        if ((n >= 50000000 && r > LARGE_ROUNDS)); then
            continue
        fi
        # The others are each compared with ours within the round; the first to run rotates.
        others=()
        [[ -n $BASELINE_CLI ]] && others+=(base)
        ((SERIAL)) && others+=(serial)
        has "$HEAPTRACK_SIZES" "$n" && others+=(ht)
        timed=(ours "${others[@]}")
        for ((i = 0; i < ${#timed[@]}; i++)); do
            time_one "${timed[(r - 1 + i) % ${#timed[@]}]}" "$n"
        done
        walls+="; $n events: ours $(tail -n 1 "$WORK/ours.$n.wall") s"
        for o in "${others[@]}"; do
            calc %.4f "$(tail -n 1 "$WORK/$o.$n.wall") / $(tail -n 1 "$WORK/ours.$n.wall")" \
                >>"$WORK/$o.$n.ratio"
            walls+=", $o $(tail -n 1 "$WORK/$o.$n.wall") s"
        done
    done
    echo "# round $r done (load before: $before; after: $(load))" >&2
    echo "Round $r: load average before $before, after $(load)$walls."
done

# --- tables -------------------------------------------------------------------------------
fmt_rate() { awk -v n="$1" -v s="$2" 'BEGIN {if (s == "nan" || s == 0) print "n/a"; else printf "%.2f M/s", n / s / 1e6}'; }
fmt_mib() { awk -v k="$1" 'BEGIN {if (k == "nan") print "n/a"; else printf "%.1f MiB", k / 1024}'; }
echo
echo "| events | trace bytes (ours / heaptrack) | ours: median s | ours: events/s | ours: CPU s | ours: max RSS | heaptrack_print: median s | heaptrack_print: events/s | heaptrack_print: CPU s | heaptrack_print: max RSS | speed ratio ours/heaptrack, per round: median (range, rounds ours was faster) | runs |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
    ow=$(median <"$WORK/ours.$n.wall")
    ocpu=$(median <"$WORK/ours.$n.cpu")
    orss=$(median <"$WORK/ours.$n.rss")
    runs=$(wc -l <"$WORK/ours.$n.wall")
    osize=$(stat -c %s "$WORK/ours.$n.gmtrace")
    if has "$HEAPTRACK_SIZES" "$n"; then
        hw=$(median <"$WORK/ht.$n.wall")
        hcpu=$(median <"$WORK/ht.$n.cpu")
        hrss=$(median <"$WORK/ht.$n.rss")
        hsize=$(stat -c %s "$WORK"/ht."$n".trace.*)
        ratio=$(paired "ht.$n")
        echo "| $n | $osize / $hsize | $ow | $(fmt_rate "$n" "$ow") | $ocpu | $(fmt_mib "$orss") | $hw | $(fmt_rate "$n" "$hw") | $hcpu | $(fmt_mib "$hrss") | $ratio | $runs |"
    else
        echo "| $n | $osize / not run | $ow | $(fmt_rate "$n" "$ow") | $ocpu | $(fmt_mib "$orss") | not run | not run | not run | not run | n/a | $runs |"
    fi
done
if ((SERIAL)); then
    echo
    echo "| events | ours, decoding ahead: median s | ours, decoded on the reading thread: median s | CPU s (ahead / serial) | max RSS (ahead / serial) | gain, per round: median (range, rounds ahead was faster) |"
    echo "|---:|---:|---:|---|---|---:|"
    for n in $SIZES; do
        ow=$(median <"$WORK/ours.$n.wall")
        sw=$(median <"$WORK/serial.$n.wall")
        echo "| $n | $ow | $sw | $(median <"$WORK/ours.$n.cpu") / $(median <"$WORK/serial.$n.cpu") | $(fmt_mib "$(median <"$WORK/ours.$n.rss")") / $(fmt_mib "$(median <"$WORK/serial.$n.rss")") | $(paired "serial.$n") |"
    done
fi
if [[ -n $BASELINE_CLI ]]; then
    echo
    echo "| events | baseline: median s | ours: median s | CPU s (baseline / ours) | max RSS (baseline / ours) | speed-up over baseline, per round: median (range, rounds ours was faster) |"
    echo "|---:|---:|---:|---|---|---:|"
    for n in $SIZES; do
        ow=$(median <"$WORK/ours.$n.wall")
        bw=$(median <"$WORK/base.$n.wall")
        echo "| $n | $bw | $ow | $(median <"$WORK/base.$n.cpu") / $(median <"$WORK/ours.$n.cpu") | $(fmt_mib "$(median <"$WORK/base.$n.rss")") / $(fmt_mib "$(median <"$WORK/ours.$n.rss")") | $(paired "base.$n") |"
    done
fi
echo
echo "Load average after the runs: $(load)."
