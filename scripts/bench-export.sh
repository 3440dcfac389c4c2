#!/usr/bin/env bash
# `gpumemtrace export` throughput and memory, each format side by side with `report` (the
# same reading pass and analysis, without the writer): docs/performance.md, section
# "Export".
#
#   scripts/bench-export.sh BUILD_DIR
#
# For each size N it makes a synthetic trace of N events (gen_trace: a constant live set,
# few stacks), then, interleaved over rounds, runs `report --no-symbols --format json` and
# `export --no-symbols` in every format, all writing to /dev/null (the ndjson tables through
# a directory of links to /dev/null): what is measured is the work and the memory, not the
# disk. Output bytes per event come from one run per format on a BYTES_SIZE-event trace
# written to real files. Prints medians of wall and CPU (user+sys) time, events/s on CPU
# and max RSS as a markdown table.
#
# Environment (defaults in brackets):
#   SIZES [20000000 100000000]   ROUNDS [3]   LARGE_ROUNDS [1] (sizes >= 50 M)
#   LIVE [64]   BYTES_SIZE [1000000]   WORK_DIR [mktemp -d under TMPDIR]; KEEP=1 keeps it
#
# Requires /usr/bin/time and `cmake --build BUILD_DIR --target benchmarks`.
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
SIZES=${SIZES:-"20000000 100000000"}
ROUNDS=${ROUNDS:-3}
LARGE_ROUNDS=${LARGE_ROUNDS:-1}
LIVE=${LIVE:-64}
BYTES_SIZE=${BYTES_SIZE:-1000000}
GEN=$BUILD/bin/bench/gen_trace
CLI=$BUILD/bin/gpumemtrace
for f in "$GEN" "$CLI" /usr/bin/time; do
    [[ -x $f ]] || { echo "missing $f: cmake --build $BUILD --target benchmarks" >&2; exit 2; }
done

WORK=${WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gmt-bench-export.XXXXXX")}
mkdir -p "$WORK"
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# The ndjson tables into /dev/null: a directory whose table files are links to it.
NULL_DIR=$WORK/null-tables
mkdir -p "$NULL_DIR"
for t in events allocations stacks processes devices leaks peak; do
    ln -sf /dev/null "$NULL_DIR/$t.ndjson"
done
ln -sf /dev/null "$NULL_DIR/schema.sql"

FORMATS="report memory-viz perfetto folded ndjson"
command_for() { # FORMAT TRACE OUT: the command line, OUT a file or (ndjson) a directory
    local format=$1 trace=$2 out=$3
    case $format in
    report) echo "$CLI report --no-symbols --format json -o $out $trace" ;;
    folded) echo "$CLI export --no-symbols --format folded --metric allocated -o $out $trace" ;;
    *) echo "$CLI export --no-symbols --format $format -o $out $trace" ;;
    esac
}

# run NAME CMD...: appends wall s, CPU s (user+sys) and max RSS KiB to $WORK/NAME.*
run() {
    local name=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.tmp" "$@" >/dev/null 2>"$WORK/stderr.tmp" || {
        echo "failed: $*" >&2
        cat "$WORK/stderr.tmp" >&2
        exit 1
    }
    read -r wall user sys rss <"$WORK/time.tmp"
    echo "$wall" >>"$WORK/$name.wall"
    awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f\n", u + s}' >>"$WORK/$name.cpu"
    echo "$rss" >>"$WORK/$name.rss"
}

echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for n in $SIZES $BYTES_SIZE; do
    [[ -f $WORK/t.$n.gmtrace ]] || "$GEN" "$WORK/t.$n.gmtrace" "$n" "$LIVE" >/dev/null
done

# Output size: one run per format into real files.
declare -A BYTES
for f in $FORMATS; do
    out=$WORK/bytes.$f
    rm -rf "$out"
    [[ $f == ndjson ]] && mkdir -p "$out"
    # shellcheck disable=SC2046
    $(command_for "$f" "$WORK/t.$BYTES_SIZE.gmtrace" "$out") >/dev/null
    BYTES[$f]=$(du -sb "$out" | cut -f1)
done

for ((r = 1; r <= ROUNDS; r++)); do
    for n in $SIZES; do
        if ((n >= 50000000 && r > LARGE_ROUNDS)); then
            continue
        fi
        for f in $FORMATS; do
            out=/dev/null
            [[ $f == ndjson ]] && out=$NULL_DIR
            # shellcheck disable=SC2046
            run "$f.$n" $(command_for "$f" "$WORK/t.$n.gmtrace" "$out")
        done
    done
    echo "# round $r done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

echo
echo "| events | format | median wall s | median CPU s | events/s (CPU) | max RSS | output bytes/event | runs |"
echo "|---:|---|---:|---:|---:|---:|---:|---:|"
for n in $SIZES; do
    for f in $FORMATS; do
        w=$(median <"$WORK/$f.$n.wall")
        c=$(median <"$WORK/$f.$n.cpu")
        m=$(median <"$WORK/$f.$n.rss")
        runs=$(wc -l <"$WORK/$f.$n.wall")
        awk -v n="$n" -v f="$f" -v w="$w" -v c="$c" -v m="$m" -v b="${BYTES[$f]}" -v e="$BYTES_SIZE" -v r="$runs" \
            'BEGIN {printf "| %d | %s | %.2f | %.2f | %.1f M/s | %.1f MiB | %.1f | %d |\n", n, f, w, c, n / c / 1e6, m / 1024, b / e, r}'
    done
done
