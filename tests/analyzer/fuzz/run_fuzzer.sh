#!/bin/sh
# Runs a fuzz target for a fixed number of inputs: first every input of its regression
# corpus (read-only here; new inputs go to a scratch folder), then RUNS mutations from a
# fixed seed. Any crash, undefined behaviour, input taking over 60 s of work or run
# using over 2 GiB fails the test.
#   run_fuzzer.sh FUZZER CORPUS_DIR RUNS
set -eu
fuzzer=$1
corpus=$2
runs=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$corpus"
# -timeout guards against a hang (a regression), not a measure: inputs take milliseconds.
"$fuzzer" "$scratch" "$corpus" -runs="$runs" -seed=1 -max_len=65536 -timeout=60 \
    -rss_limit_mb=2048 -malloc_limit_mb=2048 -artifact_prefix="$scratch/" -print_final_stats=1 \
    || { status=$?; for f in "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* \
             "$scratch"/oom-* "$scratch"/slow-unit-*; do
             [ -e "$f" ] && { echo "finding: $f"; od -A d -t x1 "$f" | head -40; }; done
         exit "$status"; }
