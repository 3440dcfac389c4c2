#!/usr/bin/env bash
# The main job on an embedded default: build, trace a sample CUDA program that leaks,
# print the report. Uses the real GPU when one answers, otherwise the simulated CUDA.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
gmt_install_deps
gmt_configure_and_build build

sample=build/samples/leak_loop
if [[ ! -x $sample ]]; then
    # Without nvcc the samples are not built; the recorder test program is the same idea.
    sample=build/tests/recorder/programs/runtime_calls
fi

out=$(mktemp -d)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "gpumemtrace demo: running $sample on the real GPU ($(nvidia-smi -L | head -1))"
    libpath=${LD_LIBRARY_PATH:-}
else
    echo "gpumemtrace demo: no GPU here; running $sample on the simulated CUDA (build/lib/cudasim)"
    libpath=$PWD/build/lib/cudasim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

LD_LIBRARY_PATH=$libpath build/bin/gpumemtrace record -o "$out/demo.%p.gmtrace" -- "$sample"
echo
build/bin/gpumemtrace report --format text "$out"/demo.*.gmtrace
echo
echo "The trace is in $out; try: build/bin/gpumemtrace check $out/demo.*.gmtrace"
