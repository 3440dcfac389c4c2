#!/usr/bin/env bash
# Builds gpumemtrace from this checkout (without its tests) and installs it into PREFIX;
# with --with-cudasim also the simulated CUDA (PREFIX/lib/gpumemtrace/cudasim), which lets a
# CI machine without a GPU run the same gate (docs/ci.md). Installs the Debian packages it
# needs first (scripts/lib/deps.sh). The CUDA toolkit headers are expected in
# /usr/local/cuda, or where CUDAToolkit_ROOT says.
#   scripts/install.sh /opt/gpumemtrace --with-cudasim
set -euo pipefail
usage() {
    echo "usage: $0 PREFIX [--with-cudasim] [--build-dir DIR]" >&2
    exit 2
}
[[ $# -ge 1 && $1 != -* ]] || usage
prefix=$(realpath -m "$1") # before the cd below
shift
with_cudasim=0
build=build-install # relative to the checkout
while [[ $# -gt 0 ]]; do
    case $1 in
    --with-cudasim) with_cudasim=1 ;;
    --build-dir)
        [[ $# -ge 2 ]] || usage
        build=$2
        shift
        ;;
    *) usage ;;
    esac
    shift
done
cd "$(dirname "$0")/.."
source scripts/lib/deps.sh
gmt_install_deps
gmt_install_npm analyzer/views/html # uPlot, compiled into the HTML report
gmt_configure_and_build "$build" -DGPUMEMTRACE_BUILD_TESTS=OFF \
    -DGPUMEMTRACE_BUILD_BENCHMARKS=OFF -DGPUMEMTRACE_BUILD_CUDASIM="$with_cudasim"
cmake --install "$build" --prefix "$prefix" >/dev/null
if ((with_cudasim)); then
    cmake --install "$build" --prefix "$prefix" --component cudasim >/dev/null
fi
"$prefix/bin/gpumemtrace" --version
echo "gpumemtrace installed in $prefix$( ((with_cudasim)) &&
    echo "; simulated CUDA in $prefix/lib/gpumemtrace/cudasim")"
