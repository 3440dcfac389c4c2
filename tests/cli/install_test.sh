#!/usr/bin/env bash
# `cmake --install` into a temporary prefix gives the documented layout, the installed
# CLI finds its preload library, and find_package(gpumemtrace) works for a consumer. The
# optional `cudasim` component adds the simulated CUDA, and the gate of a GPU-less CI job
# (docs/ci.md) works with what was installed: a program built against the CUDA headers and
# the installed simulated runtime, under `gpumemtrace record --check`.
# usage: install_test.sh BUILD_DIR CONSUMER_SOURCE WORK_DIR GATE_PROBE_SOURCE CUDA_INCLUDE_DIR
set -euo pipefail
build=$1 consumer=$2 work=$3 gate_probe=$4 cuda_include=$5
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
fail() { echo "FAIL: $*"; exit 1; }
for f in bin/gpumemtrace include/gpumemtrace.h share/doc/gpumemtrace/README.md; do
    [[ -f $prefix/$f ]] || fail "$f not installed"
done
lib=$(find "$prefix" -name libgpumemtrace.so -path '*/lib*' | head -1)
[[ -n $lib ]] || fail "libgpumemtrace.so not installed"
find "$prefix" -name gpumemtraceConfig.cmake | grep -q . || fail "no package config"

# The installed CLI finds the installed library (not the build tree's).
out=$(cd "$work" && "$prefix/bin/gpumemtrace" record -- true 2>&1) || fail "record: $out"
grep -q "no trace was written" <<<"$out" || fail "unexpected record output: $out"
"$prefix/bin/gpumemtrace" --version | grep -q '^gpumemtrace ' || fail "--version"

# The simulated CUDA only when asked for, in its own folder.
[[ ! -e $prefix/lib/gpumemtrace/cudasim ]] || fail "the simulator came with a plain install"
cmake --install "$build" --prefix "$prefix" --component cudasim >>"$work/install.log"
cudasim=$(dirname "$(find "$prefix" -name libcudart.so.13 -path '*/gpumemtrace/cudasim/*')")
for f in libcuda.so.1 libcudart.so.13 libcudart.so libcudart_static.a; do
    [[ -e $cudasim/$f ]] || fail "cudasim component: $f not installed"
done
[[ -f $prefix/share/doc/gpumemtrace/cudasim.md ]] || fail "cudasim.md not installed"

# A GPU-less job's gate, with nothing from the build tree: CUDA headers, the installed
# simulator and the installed CLI.
cc -I"$cuda_include" "$gate_probe" -L"$cudasim" -lcudart -o "$work/gate_probe" ||
    fail "cannot build the gate probe against the installed simulator"
gate() { (cd "$work" && LD_LIBRARY_PATH=$cudasim "$prefix/bin/gpumemtrace" record --check \
    -o "$work/gate.%p.gmtrace" -- "$work/gate_probe" "$@" 2>&1); }
out=$(gate leak) && fail "record --check passed a leak: $out"
grep -q "FAIL leaks: 1.0 MiB leaked" <<<"$out" || fail "unexpected gate output: $out"
out=$(gate) || fail "record --check failed a clean run: $out"
grep -q "gpumemtrace check: passed" <<<"$out" || fail "unexpected gate output: $out"

# Relocatable: the package config works from a moved prefix too.
mv "$prefix" "$work/moved"
prefix=$work/moved
cmake -S "$consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" >"$work/consumer.log" ||
    { cat "$work/consumer.log"; fail "consumer configure"; }
cmake --build "$work/consumer" >>"$work/consumer.log" 2>&1 ||
    { cat "$work/consumer.log"; fail "consumer build"; }
out=$(GPUMEMTRACE_OUTPUT="$work/consumer.%p.gmtrace" "$work/consumer/consumer") || fail "consumer run: $out"
[[ $out == active=[01] ]] || fail "consumer printed '$out'"
echo PASS
