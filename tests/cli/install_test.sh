#!/usr/bin/env bash
# `cmake --install` into a temporary prefix gives the documented layout, the installed
# CLI finds its preload library, and find_package(gpumemtrace) works for a consumer.
# usage: install_test.sh BUILD_DIR CONSUMER_SOURCE WORK_DIR
set -euo pipefail
build=$1 consumer=$2 work=$3
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
