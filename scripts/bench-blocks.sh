#!/usr/bin/env bash
# What a caching allocator's block event (docs/frameworks.md) costs a PyTorch-like training
# step, without a GPU: tests/bench/block_step.py on the stand-in libc10_cuda.so and the
# simulated CUDA. Each tensor is made by one of 16 operators through 24 native frames of its
# own (tests/bench/block_ops.cpp, as PyTorch's dispatch puts a few dozen between Python and
# the allocator), from Python lines nested in modules called as nn.Module's are, and freed
# where its last reference goes: 3 block events (alloc, free_requested, free_completed).
#
#   scripts/bench-blocks.sh BUILD_DIR [BASELINE_LIBRARY]
#
# Whole processes, marginal method: each configuration runs SMALL and LARGE steps; the
# difference, less plain's difference, divided by the extra block events (3 per extra
# tensor, as the program counts them), is the cost of one more block event, with start-up
# and exit taken out:
#
#   plain      block_step.py, untraced
#   ours       LD_PRELOAD=BUILD_DIR/lib/libgpumemtrace.so, defaults (native + Python stacks)
#   baseline   the same with BASELINE_LIBRARY (another build's libgpumemtrace.so: before/after
#              in the same rounds); only when given
#   noblocks   ours with GPUMEMTRACE_CACHING_ALLOCATOR=0 (no block events: what the rest of
#              the recorder costs this program, about nothing)
#
# Wall time is the traced thread's critical path (the program is single-threaded; the
# writer thread drains on another core); CPU time is user + sys of every thread
# (scripts/lib/measure.py). Every round runs every configuration once at each size
# (interleaved); the tables show medians over rounds.
#
# Environment (defaults in brackets): PYTHON [python3; the H200 runs 3.12, whose code
# objects are checked more cheaply than 3.10/3.11's], ROUNDS [7], SMALL [100], LARGE [500]
# steps, LAYERS [32] (5 tensors per layer and step), WORK_DIR [mktemp -d], KEEP=1 keeps the
# traces.
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR [BASELINE_LIBRARY]}
BUILD=$(cd "$BUILD" && pwd)
BASELINE=${2:-}
PYTHON=${PYTHON:-python3}
ROUNDS=${ROUNDS:-7}
SMALL=${SMALL:-100}
LARGE=${LARGE:-500}
LAYERS=${LAYERS:-32}
HERE=$(cd "$(dirname "$0")" && pwd)
STEP=$HERE/../tests/bench/block_step.py
MEASURE=$HERE/lib/measure.py
OPS=$BUILD/bin/bench/libgmt_block_ops.so
PRELOAD=$BUILD/lib/libgpumemtrace.so
SIM=$BUILD/lib/cudasim
FAKE_TORCH=$BUILD/tests/frameworks/fake_torch

# shellcheck source=lib/bench.sh
source "$HERE/lib/bench.sh"
gmt_bench_need "$BUILD" "$OPS" "$PRELOAD" "$SIM/libcudart.so.13" "$FAKE_TORCH/lib/libc10_cuda.so" \
    ${BASELINE:+"$BASELINE"} -- "$PYTHON" jq
gmt_bench_work blocks

# The command of configuration NAME for N steps, as an argv (also printed in the report).
command_of() {
    local name=$1 n=$2 trace=$3
    local run=(env LD_LIBRARY_PATH="$SIM" FAKE_TORCH="$FAKE_TORCH")
    case $name in
        plain) ;;
        ours) run+=(LD_PRELOAD="$PRELOAD" GPUMEMTRACE_OUTPUT="$trace") ;;
        baseline) run+=(LD_PRELOAD="$BASELINE" GPUMEMTRACE_OUTPUT="$trace") ;;
        noblocks) run+=(LD_PRELOAD="$PRELOAD" GPUMEMTRACE_CACHING_ALLOCATOR=0 GPUMEMTRACE_OUTPUT="$trace") ;;
    esac
    echo "${run[*]} $PYTHON $STEP $OPS $n $LAYERS"
}

# run NAME N: appends wall and user+sys seconds to NAME.N.{wall,cpu}, the tensors to N.tensors.
run() {
    local name=$1 n=$2 trace="$WORK/trace.$1.$2"
    local cmd
    read -r -a cmd <<<"$(command_of "$name" "$n" "$trace.gmtrace")"
    python3 "$MEASURE" "$WORK/time.tmp" "${cmd[@]}" >"$WORK/run.out" 2>"$WORK/run.err" ||
        { echo "failed: ${cmd[*]}" >&2; cat "$WORK/run.err" >&2; exit 1; }
    read -r wall cpu <"$WORK/time.tmp"
    echo "$wall" >>"$WORK/$name.$n.wall"
    echo "$cpu" >>"$WORK/$name.$n.cpu"
    jq -r .tensors "$WORK/run.out" >"$WORK/$n.tensors"
    rm -f "$trace".*
}

CONFIGS="plain ours ${BASELINE:+baseline} noblocks"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $("$PYTHON" --version 2>&1); load before: $LOAD_BEFORE" >&2
for ((r = 1; r <= ROUNDS; r++)); do
    for c in $CONFIGS; do
        run "$c" "$SMALL"
        run "$c" "$LARGE"
    done
    EVENTS=$((3 * ($(cat "$WORK/$LARGE.tensors") - $(cat "$WORK/$SMALL.tensors"))))
    for c in $CONFIGS; do
        for m in wall cpu; do
            calc "%.2f" "($(tail -1 "$WORK/$c.$LARGE.$m") - $(tail -1 "$WORK/$c.$SMALL.$m")) * 1e9 / $EVENTS" \
                >>"$WORK/$c.marginal.$m"
        done
    done
    for c in $CONFIGS; do
        [[ $c == plain ]] && continue
        for m in wall cpu; do
            calc "%.2f" "$(tail -1 "$WORK/$c.marginal.$m") - $(tail -1 "$WORK/plain.marginal.$m")" \
                >>"$WORK/$c.cost.$m"
        done
        calc "%.4f" "$(tail -1 "$WORK/$c.marginal.wall") / $(tail -1 "$WORK/plain.marginal.wall")" \
            >>"$WORK/$c.ratio"
    done
    echo "# round $r/$ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

echo
echo "Cost of one block event, whole process, marginal between $SMALL and $LARGE training steps"
echo "of $LAYERS layers ($EVENTS block events), $ROUNDS interleaved rounds, medians; $("$PYTHON" --version 2>&1)."
echo "Load average: $LOAD_BEFORE before, $LOAD_AFTER after; $(nproc) cores."
echo
echo "| configuration | wall ns/block event | CPU ns/block event (all threads) | steps' wall vs plain |"
echo "|---|---:|---:|---:|"
for c in $CONFIGS; do
    [[ $c == plain ]] && continue
    echo "| $c | $(med "$c.cost.wall") | $(med "$c.cost.cpu") | $(med "$c.ratio" %.3f)× |"
done
echo
gmt_bench_marginals "The workload itself, per block event (3 per tensor; ns, medians):"
