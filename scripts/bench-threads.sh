#!/usr/bin/env bash
# What the recorder's per-thread set-up costs a program of many short-lived threads.
#
#   scripts/bench-threads.sh BUILD_DIR
#
# The workload is tests/bench/thread_churn.cpp: THREADS threads, BATCH alive at a time,
# each making one cudaMalloc/cudaFree pair on the simulated CUDA, so nearly all of a traced
# thread's cost is its first event: its first stack walked with nothing cached for it
# (preload/unwind_cache.cpp), its thread-local state set up and torn down. Each round runs
# the program untraced and traced (GPUMEMTRACE_STACK_DEPTH=64), interleaved; the table shows
# the median wall, user and sys seconds over the rounds (`time`'s figures).
#
# Environment (defaults in brackets): ROUNDS [5], THREADS [10000], BATCH [16].
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
ROUNDS=${ROUNDS:-5}
THREADS=${THREADS:-10000}
BATCH=${BATCH:-16}
CHURN=$BUILD/bin/bench/thread_churn
PRELOAD=$BUILD/lib/libgpumemtrace.so
SIM=$BUILD/lib/cudasim
for f in "$CHURN" "$PRELOAD" "$SIM/libcudart.so.13"; do
    [[ -e $f ]] || { echo "missing $f: cmake --build $BUILD --target benchmarks" >&2; exit 2; }
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/gmt-bench-threads.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
TIMEFORMAT='%R %U %S'

# run NAME [ENV...]: appends "wall user sys" of one run to NAME.times.
run() {
    local name=$1
    shift
    { time env LD_LIBRARY_PATH="$SIM" "$@" "$CHURN" "$THREADS" "$BATCH" >/dev/null; } \
        2>>"$WORK/$name.times"
    rm -f "$WORK"/*.gmtrace
}

for ((r = 0; r < ROUNDS; ++r)); do
    run untraced
    run traced LD_PRELOAD="$PRELOAD" GPUMEMTRACE_STACK_DEPTH=64 \
        GPUMEMTRACE_OUTPUT="$WORK/t.%p.gmtrace"
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf '%s threads, %s at a time, %s rounds (median seconds)\n' "$THREADS" "$BATCH" "$ROUNDS"
printf '%-10s %8s %8s %8s\n' config wall user sys
for name in untraced traced; do
    printf '%-10s' "$name"
    for col in 1 2 3; do
        printf ' %8.2f' "$(cut -d' ' -f$col "$WORK/$name.times" | median)"
    done
    printf '\n'
done
