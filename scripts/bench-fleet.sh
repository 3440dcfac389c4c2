#!/usr/bin/env bash
# Analysing a job's traces on all cores against one: `gpumemtrace check DIR --jobs 1` and
# `--jobs N` over the same RANKS traces of EVENTS events each (gen_trace, one rank each),
# interleaved round by round, with a control: N separate `--jobs 1` processes over an N-th
# of the traces each, started together (what the machine gives N independent workers at
# that moment). Prints the median wall and CPU (user + system, all threads) seconds of each,
# the CPU each kept busy (CPU / wall, in cores) and the speed-ups.
#
#   scripts/bench-fleet.sh BUILD_DIR
#   JOBS=$(nproc) scripts/bench-fleet.sh .carry/build     # a bundle (scripts/gpu-bundle.sh)
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
# shellcheck source=lib/bench.sh
source "$(cd "$(dirname "$0")" && pwd)/lib/bench.sh"
gmt_bench_bundle "$BUILD"
WORK=${WORK_DIR:-$(mktemp -d)}
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/job"
for ((r = 0; r < RANKS; r++)); do
    "$GEN" "$WORK/job/rank$r.gmtrace" "$EVENTS" 64 4 "$r" >/dev/null
    part=$WORK/part$((r % JOBS))
    mkdir -p "$part"
    ln "$WORK/job/rank$r.gmtrace" "$part/"
done
check() { # DIR JOBS TIMES_FILE: one check process, its wall, user and system seconds
    local TIMEFORMAT='%R %U %S'
    { time "$CLI" check "$1" --no-symbols --allow-incomplete --max-leaked-bytes 1024G \
        --jobs "$2" >/dev/null 2>&1; } 2>"$3" || true
}
sum_times() { # FILES... -> "wall cpu" (wall: the longest)
    awk '{w = $1 > w ? $1 : w; c += $2 + $3} END {printf "%.3f %.3f\n", w, c}' "$@"
}
one=() many=() split=()
for ((i = 0; i < ROUNDS; i++)); do
    check "$WORK/job" 1 "$WORK/t1" && one+=("$(sum_times "$WORK/t1")")
    check "$WORK/job" "$JOBS" "$WORK/tn" && many+=("$(sum_times "$WORK/tn")")
    t0=$(date +%s.%N)
    for ((p = 0; p < JOBS; p++)); do
        check "$WORK/part$p" 1 "$WORK/tp$p" &
    done
    wait
    t1=$(date +%s.%N)
    cpu=$(sum_times "$WORK"/tp* | cut -d' ' -f2)
    split+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f", b - a}') $cpu")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { local k=$1; shift; for x in "$@"; do echo "$x" | cut -d' ' -f"$k"; done; }
w1=$(median $(col 1 "${one[@]}")) c1=$(median $(col 2 "${one[@]}"))
wn=$(median $(col 1 "${many[@]}")) cn=$(median $(col 2 "${many[@]}"))
ws=$(median $(col 1 "${split[@]}")) cs=$(median $(col 2 "${split[@]}"))
echo "ranks=$RANKS events/rank=$EVENTS rounds=$ROUNDS cores=$(nproc) load=$(cut -d' ' -f1-3 /proc/loadavg)"
echo "jobs 1 (wall cpu): ${one[*]}"
echo "jobs $JOBS (wall cpu): ${many[*]}"
echo "$JOBS processes (wall cpu): ${split[*]}"
printf '| run | median wall s | median CPU s | cores busy | speed-up over --jobs 1 |\n'
printf '|---|---:|---:|---:|---:|\n'
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.4f", a / b}'; } # awk: bc may be absent
row() { printf '| %s | %.3f | %.3f | %.2f | %.2f× |\n' "$1" "$2" "$3" "$(ratio "$3" "$2")" "$(ratio "$w1" "$2")"; }
row "\`check --jobs 1\`" "$w1" "$c1"
row "\`check --jobs $JOBS\`" "$wn" "$cn"
row "control: $JOBS \`--jobs 1\` processes, 1/$JOBS of the traces each" "$ws" "$cs"
