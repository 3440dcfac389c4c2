#!/usr/bin/env bash
# The main job on an embedded default: build the tool (not its test suite), trace a sample
# CUDA program that leaks, print the report. Uses the real GPU when one answers, otherwise
# the simulated CUDA. The sample is compiled by nvcc (the CUDA toolkit in /usr/local/cuda,
# or where CUDAToolkit_ROOT says).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
gmt_install_deps
build=build-demo
gmt_configure_and_build "$build" -DGPUMEMTRACE_BUILD_TESTS=OFF \
    -DGPUMEMTRACE_BUILD_BENCHMARKS=OFF -DGPUMEMTRACE_BUILD_CUDASIM=ON

sample=$build/samples/leak_loop
if [[ ! -x $sample ]]; then
    echo "gpumemtrace demo: the sample needs nvcc (the CUDA toolkit; CUDAToolkit_ROOT=${CUDAToolkit_ROOT:-/usr/local/cuda} has none)" >&2
    exit 2
fi

out=$(mktemp -d)
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "gpumemtrace demo: running $sample on the real GPU ($(nvidia-smi -L | head -1))"
    libpath=${LD_LIBRARY_PATH:-}
else
    echo "gpumemtrace demo: no GPU here; running $sample on the simulated CUDA ($build/lib/cudasim)"
    libpath=$PWD/$build/lib/cudasim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

LD_LIBRARY_PATH=$libpath $build/bin/gpumemtrace record -o "$out/demo.%p.gmtrace" -- "$sample"
echo
$build/bin/gpumemtrace report --format text "$out"/demo.*.gmtrace
echo
echo "The trace is in $out; try: $build/bin/gpumemtrace check $out/demo.*.gmtrace"
