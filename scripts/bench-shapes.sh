#!/usr/bin/env bash
# The input shapes that once made the analyzer quadratic (tests/bench/gen_shapes.cpp),
# timed side by side with an anchor build: `gpumemtrace check --no-symbols` on each
# shape at two sizes, interleaved over ROUNDS rounds, medians of wall time and max RSS,
# and the marginal cost per record between the two sizes (near-linear: about the same at
# both sizes; quadratic: it grows with the size).
#
#   scripts/bench-shapes.sh BUILD_DIR [ANCHOR_GPUMEMTRACE]
#
# Environment (defaults in brackets):
#   SHAPES ["contexts modules devices reservations"]
#   SIZES_<shape> ["10000 40000"; devices "4000 16000"]
#   ROUNDS [3]
#   ANCHOR_TIMEOUT [120]  seconds an anchor run may take before it is reported as "> limit"
#
# Requires: /usr/bin/time and `cmake --build BUILD_DIR --target benchmarks gpumemtrace`.
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR [ANCHOR_GPUMEMTRACE]}
BUILD=$(cd "$BUILD" && pwd)
ANCHOR=${2:-}
SHAPES=${SHAPES:-"contexts modules devices reservations"}
ROUNDS=${ROUNDS:-3}
ANCHOR_TIMEOUT=${ANCHOR_TIMEOUT:-120}
GEN=$BUILD/bin/bench/gen_shapes
CLI=$BUILD/bin/gpumemtrace
[[ -x $GEN && -x $CLI ]] || { echo "missing $GEN or $CLI" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/gmt-bench-shapes.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }

# run LABEL BINARY TRACE LIMIT: wall seconds and max RSS (KiB) appended to $WORK/LABEL.*
run() {
    local label=$1 bin=$2 trace=$3 limit=$4 t0 t1 status=0
    t0=$(date +%s%N)
    timeout "$limit" /usr/bin/time -f %M -o "$WORK/rss.tmp" "$bin" check --no-symbols "$trace" \
        >/dev/null 2>&1 || status=$?
    t1=$(date +%s%N)
    if ((status == 124)); then
        echo "inf" >>"$WORK/$label.wall"
        echo "nan" >>"$WORK/$label.rss"
        return
    fi
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.4f\n", (b - a) / 1e9}' >>"$WORK/$label.wall"
    tail -n 1 "$WORK/rss.tmp" >>"$WORK/$label.rss"
}

echo "# $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); anchor: ${ANCHOR:-none}" >&2
echo "| shape | size | build | median wall s | max RSS MiB | marginal µs/record |"
echo "|---|---:|---|---:|---:|---:|"
for shape in $SHAPES; do
    var=SIZES_$shape
    default="10000 40000"
    [[ $shape == devices ]] && default="4000 16000"
    read -r small large <<<"${!var:-$default}"
    for n in $small $large; do
        "$GEN" "$WORK/$shape.$n.gmtrace" "$shape" "$n"
    done
    for ((r = 0; r < ROUNDS; ++r)); do
        for n in $small $large; do
            run "new.$shape.$n" "$CLI" "$WORK/$shape.$n.gmtrace" 600
            [[ -n $ANCHOR ]] && run "anchor.$shape.$n" "$ANCHOR" "$WORK/$shape.$n.gmtrace" "$ANCHOR_TIMEOUT"
        done
    done
    for build in new ${ANCHOR:+anchor}; do
        ws=$(median <"$WORK/$build.$shape.$small.wall")
        wl=$(median <"$WORK/$build.$shape.$large.wall")
        for n in $small $large; do
            w=$(median <"$WORK/$build.$shape.$n.wall")
            rss=$(median <"$WORK/$build.$shape.$n.rss")
            marginal=""
            if [[ $n == "$large" ]]; then
                marginal=$(awk -v a="$ws" -v b="$wl" -v s="$small" -v l="$large" \
                    'BEGIN {if (b == "inf") print "-"; else printf "%.2f", (b - a) / (l - s) * 1e6}')
            fi
            echo "| $shape | $n | $build | $w | $(awk -v k="$rss" 'BEGIN {printf "%.0f", k / 1024}') | $marginal |"
        done
    done
done
