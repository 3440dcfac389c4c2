#!/usr/bin/env bash
# Analysing a job's traces on all cores against one: `gpumemtrace check DIR --jobs 1` and
# `--jobs N` over the same RANKS traces of EVENTS events each (gen_trace, one rank each),
# interleaved round by round; prints the median wall times and the speed-up.
#
#   scripts/bench-fleet.sh BUILD_DIR
#
# Environment (defaults in brackets): RANKS [64], EVENTS [1000000], ROUNDS [5],
# JOBS [nproc], WORK_DIR [mktemp -d] (KEEP=1 keeps it).
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
RANKS=${RANKS:-64}
EVENTS=${EVENTS:-1000000}
ROUNDS=${ROUNDS:-5}
JOBS=${JOBS:-$(nproc)}
GEN=$BUILD/bin/bench/gen_trace
CLI=$BUILD/bin/gpumemtrace
for f in "$GEN" "$CLI"; do
    [[ -x $f ]] || { echo "missing $f: cmake --build $BUILD --target benchmarks" >&2; exit 2; }
done
WORK=${WORK_DIR:-$(mktemp -d)}
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/job"
for ((r = 0; r < RANKS; r++)); do
    "$GEN" "$WORK/job/rank$r.gmtrace" "$EVENTS" 64 4 "$r" >/dev/null
done
now() { date +%s.%N; }
run() { # JOBS -> seconds
    local t0 t1
    t0=$(now)
    "$CLI" check "$WORK/job" --no-symbols --allow-incomplete --max-leaked-bytes 1024G \
        --jobs "$1" >/dev/null || true
    t1=$(now)
    echo "$t1 - $t0" | bc -l
}
one=() many=()
for ((i = 0; i < ROUNDS; i++)); do
    one+=("$(run 1)")
    many+=("$(run "$JOBS")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
m1=$(median "${one[@]}")
mn=$(median "${many[@]}")
echo "ranks=$RANKS events/rank=$EVENTS rounds=$ROUNDS cores=$(nproc) load=$(cut -d' ' -f1 /proc/loadavg)"
echo "jobs 1: ${one[*]}"
echo "jobs $JOBS: ${many[*]}"
printf '| traces | events each | --jobs 1: median s | --jobs %s: median s | speed-up |\n' "$JOBS"
printf '|---:|---:|---:|---:|---:|\n'
printf '| %s | %s | %.3f | %.3f | %.2f× |\n' "$RANKS" "$EVENTS" "$m1" "$mn" "$(echo "$m1 / $mn" | bc -l)"
