#!/usr/bin/env bash
# Builds gpumemtrace from this checkout (without its tests) and installs it into PREFIX;
# with --with-cudasim also the simulated CUDA (PREFIX/lib/gpumemtrace/cudasim), which lets a
# CI machine without a GPU run the same gate (docs/ci.md). Installs the Debian packages it
# needs first (scripts/lib/deps.sh). The CUDA toolkit headers are expected in
# /usr/local/cuda, or where CUDAToolkit_ROOT says.
#   scripts/install.sh /opt/gpumemtrace --with-cudasim
set -euo pipefail
source "$(dirname "$0")/lib/args.sh"
gmt_parse_args "$0 PREFIX [--with-cudasim] [--build-dir DIR]" build-install with-cudasim -- "$@"
prefix=$GMT_DEST
with_cudasim=$GMT_FLAG_with_cudasim
build=$GMT_BUILD # relative to the checkout
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
