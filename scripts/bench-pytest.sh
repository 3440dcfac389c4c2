#!/usr/bin/env bash
# What the pytest plugin costs per test, against the plugin of another revision.
#
#   scripts/bench-pytest.sh BUILD_DIR
#
# The workload is N tests in one module (generated here): empty (WORKLOAD=empty), each
# allocating a 1 MiB device buffer and freeing it through the simulated libcudart by ctypes,
# as the plugin's own tests do (WORKLOAD=alloc), or each making a 1 MiB tensor and freeing it
# through the stand-in PyTorch caching allocator of tests/frameworks (BUILD_DIR's
# tests/frameworks/fake_torch; the first test's segment stays cached for the others), as the
# plugin's PyTorch-style tests do (WORKLOAD=blocks). It runs three ways, each under
# `gpumemtrace record` of BUILD_DIR (the simulated CUDA on LD_LIBRARY_PATH, as in the tests):
#
#   recorded   python -m pytest test_WORKLOAD.py                (the plugin not enabled)
#   plugin     python -m pytest --gpumemtrace test_WORKLOAD.py  (this tree's plugin)
#   before     the same with the plugin of git revision BEFORE_REF, first on PYTHONPATH
#              (its copy, named gpumemtrace_pytest like the installed one, shadows ours)
#
# The cost per test is (configuration - recorded) / N, of pytest's own session time (the
# "N passed in S s" it prints: collection and the tests, without the interpreter's and the
# recorder's start-up, whose noise would hide a few tests' cost), medians over ROUNDS
# interleaved rounds; the tables show the whole process's wall time too. The old plugin
# re-reads the whole trace in a `gpumemtrace check` per test, so "before" runs only for the
# counts in BEFORE_COUNTS.
#
# Environment (defaults in brackets): WORKLOAD [empty], COUNTS [10 100 1000 10000],
# BEFORE_COUNTS [10 100 1000], BEFORE_REF [main], ROUNDS [3], PYTHON [a python3 with
# pytest], WORK_DIR [mktemp -d].
set -euo pipefail

BUILD=${1:?usage: $0 BUILD_DIR}
BUILD=$(cd "$BUILD" && pwd)
WORKLOAD=${WORKLOAD:-empty}
[[ $WORKLOAD == empty || $WORKLOAD == alloc || $WORKLOAD == blocks ]] ||
    { echo "WORKLOAD: empty, alloc or blocks" >&2; exit 2; }
FAKE_C10=$BUILD/tests/frameworks/fake_torch/lib/libc10_cuda.so
MODULE=test_$WORKLOAD.py
COUNTS=${COUNTS:-"10 100 1000 10000"}
BEFORE_COUNTS=${BEFORE_COUNTS:-"10 100 1000"}
BEFORE_REF=${BEFORE_REF:-main}
ROUNDS=${ROUNDS:-3}
GMT=$BUILD/bin/gpumemtrace
SIM=$BUILD/lib/cudasim
HERE=$(cd "$(dirname "$0")" && pwd)
MEASURE=$HERE/lib/measure.py

needed=("$GMT" "$BUILD/lib/libgpumemtrace.so" "$SIM/libcudart.so.13")
[[ $WORKLOAD == blocks ]] && needed+=("$FAKE_C10")
for f in "${needed[@]}"; do
    [[ -e $f ]] || { echo "missing $f: cmake --build $BUILD" >&2; exit 2; }
done
PYTHON=${PYTHON:-}
if [[ -z $PYTHON ]]; then
    for p in python3 /usr/bin/python3; do
        if "$p" -c "import pytest" 2>/dev/null; then PYTHON=$(command -v "$p"); break; fi
    done
fi
[[ -n $PYTHON ]] || { echo "no python3 with pytest" >&2; exit 2; }

WORK=${WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gmt-bench-pytest.XXXXXX")}
mkdir -p "$WORK/before"
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
git -C "$HERE/.." show "$BEFORE_REF:python/gpumemtrace/pytest_plugin.py" \
    >"$WORK/before/gpumemtrace_pytest.py"

median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
calc() { awk "BEGIN {printf \"$1\n\", $2}"; }

# The module of N tests.
module() {
    local n=$1 dir="$WORK/tests.$1"
    mkdir -p "$dir"
    if [[ $WORKLOAD == empty ]]; then
        for ((i = 0; i < n; i++)); do printf 'def test_%05d():\n    pass\n\n' "$i"; done
    elif [[ $WORKLOAD == blocks ]]; then
        cat <<EOF
import ctypes

torch = ctypes.CDLL("$FAKE_C10")
torch.fake_torch_malloc.restype = ctypes.c_void_p
torch.fake_torch_malloc.argtypes = [ctypes.c_size_t, ctypes.c_void_p]
torch.fake_torch_free.argtypes = [ctypes.c_void_p]
torch.fake_torch_init()


def tensor(size):
    pointer = torch.fake_torch_malloc(size, None)
    assert pointer
    torch.fake_torch_free(pointer)


EOF
        for ((i = 0; i < n; i++)); do printf 'def test_%05d():\n    tensor(1 << 20)\n\n' "$i"; done
    else
        cat <<'EOF'
import ctypes

cudart = ctypes.CDLL("libcudart.so.13")
cudart.cudaMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
cudart.cudaFree.argtypes = [ctypes.c_void_p]


def alloc_free(size):
    pointer = ctypes.c_void_p()
    assert cudart.cudaMalloc(ctypes.byref(pointer), size) == 0
    assert cudart.cudaFree(pointer) == 0


EOF
        for ((i = 0; i < n; i++)); do printf 'def test_%05d():\n    alloc_free(1 << 20)\n\n' "$i"; done
    fi >"$dir/$MODULE"
    echo "$dir"
}

# run NAME N: appends the wall seconds to NAME.N.
run() {
    local name=$1 n=$2 dir="$WORK/tests.$2"
    local -a args=(-m pytest -q -p no:cacheprovider "$MODULE")
    local -a env=(env LD_LIBRARY_PATH="$SIM")
    case $name in
        plugin) args+=(--gpumemtrace) ;;
        before) args+=(--gpumemtrace); env+=(PYTHONPATH="$WORK/before") ;;
    esac
    (cd "$dir" && "${env[@]}" python3 "$MEASURE" "$WORK/time.tmp" \
        "$GMT" record -q -o "$WORK/trace.%p.gmtrace" -- "$PYTHON" "${args[@]}") \
        >"$WORK/run.log" 2>&1 || { echo "failed: $name $n" >&2; tail -20 "$WORK/run.log" >&2; exit 1; }
    grep -q "$n passed" "$WORK/run.log" || { echo "$name $n: not all passed" >&2; tail -5 "$WORK/run.log" >&2; exit 1; }
    if [[ $name != recorded ]]; then
        grep -q "verdicts: $n from the recorder\|^ok   $MODULE::test_$(printf %05d $((n - 1)))" \
            "$WORK/run.log" || { echo "$name $n: no verdicts" >&2; tail -5 "$WORK/run.log" >&2; exit 1; }
    fi
    cut -d' ' -f1 "$WORK/time.tmp" >>"$WORK/$name.$n.wall"
    sed -n 's/.* passed in \([0-9.]*\)s.*/\1/p' "$WORK/run.log" | tail -1 >>"$WORK/$name.$n"
    rm -f "$WORK"/trace.*
}

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
echo "# $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); load before: $LOAD_BEFORE" >&2
for n in $COUNTS; do module "$n" >/dev/null; done
for ((r = 1; r <= ROUNDS; r++)); do
    for n in $COUNTS; do
        run recorded "$n"
        run plugin "$n"
        if [[ " $BEFORE_COUNTS " == *" $n "* ]]; then run before "$n"; fi
    done
    echo "# round $r/$ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg))" >&2
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)

med() { median <"$WORK/$1" | xargs printf %.2f; }
cost() { # NAME N: ms per test over `recorded`, or "not run"
    [[ -s $WORK/$1.$2 ]] || { echo "not run"; return; }
    calc "%.2f" "($(median <"$WORK/$1.$2") - $(median <"$WORK/recorded.$2")) * 1000 / $2"
}
echo
what="Empty tests"
[[ $WORKLOAD == alloc ]] && what="Tests that allocate and free 1 MiB"
[[ $WORKLOAD == blocks ]] && what="Tests that make and free a 1 MiB tensor (stand-in PyTorch)"
echo "$what under \`gpumemtrace record\`, medians of $ROUNDS interleaved rounds. Load"
echo "average: $LOAD_BEFORE before, $LOAD_AFTER after; $(nproc) cores. Session: pytest's own time"
echo "(\"N passed in S s\"); process: the whole run's wall time. The plugin's cost per test is"
echo "(session with it - session without it) / tests."
echo
echo "| tests | without the plugin: session / process (s) | plugin: session / process (s) | plugin, ms/test | $BEFORE_REF's plugin: session / process (s) | $BEFORE_REF's plugin, ms/test |"
echo "|---:|---:|---:|---:|---:|---:|"
for n in $COUNTS; do
    before_s="not run"
    [[ -s $WORK/before.$n ]] && before_s="$(med "before.$n") / $(med "before.$n.wall")"
    echo "| $n | $(med "recorded.$n") / $(med "recorded.$n.wall") | $(med "plugin.$n") / $(med "plugin.$n.wall") | $(cost plugin "$n") | $before_s | $(cost before "$n") |"
done
echo
echo "Command: $GMT record -q -o TRACE -- $PYTHON -m pytest -q -p no:cacheprovider [--gpumemtrace] $MODULE"
echo "(LD_LIBRARY_PATH=$SIM; before: PYTHONPATH holding $BEFORE_REF's plugin as gpumemtrace_pytest.py)"
