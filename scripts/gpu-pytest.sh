#!/usr/bin/env bash
# On a GPU host: the pytest plugin's verdicts on the real libcudart (tests/cli/pytest_module,
# the simulator's end-to-end module, through ctypes) and on PyTorch (tests/gpu/pytest_torch),
# each run twice, with the recorder's in-process verdicts and with --gpumemtrace-always-check;
# the tests' outcomes and the plugin's verdict lines must be the same. Prints the summaries
# (which verdicts came from where: on PyTorch, test_empty from the recorder's count, the
# tests that free their tensors from its accounting once cuBLAS has its workspace, the
# leak and the limit from check).
#   PYTHON=/path/to/python-with-pytest scripts/gpu-pytest.sh BUNDLE OUT
set -uo pipefail
bundle=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-python3}
export PATH=$bundle/bin:$PATH PYTHONPATH=$here/python${PYTHONPATH:+:$PYTHONPATH}
export LD_LIBRARY_PATH=$bundle/gpu-libs:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! "$python" -c "import pytest" 2>/dev/null; then
    echo "no pytest for $python: not run"
    exit 0
fi
status=0
for module in "$here/tests/cli/pytest_module/test_gpu_accounting.py" \
    "$here/tests/gpu/pytest_torch/test_torch_memory.py"; do
    name=$(basename "$module" .py)
    work=$out/$name
    mkdir -p "$work"
    cp "$(dirname "$module")"/*.py "$work/"
    for how in recorder always; do
        extra=()
        [ "$how" = always ] && extra=(--gpumemtrace-always-check)
        (cd "$work" && gpumemtrace record -q --library "$bundle/lib/libgpumemtrace.so" \
            -o "$how.%p.gmtrace" -- "$python" -m pytest -p no:cacheprovider \
            -p gpumemtrace.pytest_plugin -q -rA --gpumemtrace "${extra[@]}" "$name.py") \
            > "$work/$how.log" 2>&1
        echo "== $name, $how: exit $?"
        grep -E "verdicts|passed|failed" "$work/$how.log" | tail -3
        grep -E "^(PASSED|FAILED|ok   |FAIL ) " "$work/$how.log" | sort > "$work/$how.verdicts"
    done
    if cmp -s "$work/recorder.verdicts" "$work/always.verdicts"; then
        echo "$name: same verdicts ($(wc -l < "$work/recorder.verdicts") tests)"
    else
        echo "$name: DIFFERENT verdicts"
        diff "$work/recorder.verdicts" "$work/always.verdicts"
        status=1
    fi
done
exit $status
