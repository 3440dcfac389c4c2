#!/usr/bin/env bash
# The HTML report at scale: page size and time to interactive in headless chromium.
#
#   scripts/bench-html.sh BUILD_DIR
#
# Makes two synthetic traces of EVENTS events with gen_trace: the analyzer benchmark's
# (64 live allocations, 4 stacks) and a heavy one (LIVE live allocations out of STACKS
# distinct 64-frame stacks, which fills every cap of the page). For each, `report --format
# html` and, to compare, `--format json` (wall time and max RSS, /usr/bin/time); then
# tests/browser/bench_page.mjs loads the pages ROUNDS times each, interleaved, and prints
# the median time from navigation start until every view is drawn. Prints markdown.
#
# Environment: EVENTS [100000000], LIVE [10000], STACKS [100000], ROUNDS [5],
# WORK_DIR [mktemp -d] (100 M events take about 1.3 GB per trace), KEEP=1 keeps it.
# Requires: cmake --build BUILD_DIR --target gpumemtrace gen_trace; chromium; and
# tests/browser/node_modules (scripts/test.sh fetches it).
set -euo pipefail
BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
EVENTS=${EVENTS:-100000000}
LIVE=${LIVE:-10000}
STACKS=${STACKS:-100000}
ROUNDS=${ROUNDS:-5}
GEN=$BUILD/bin/bench/gen_trace
CLI=$BUILD/bin/gpumemtrace
for f in "$GEN" "$CLI"; do
    [[ -x $f ]] || { echo "missing $f" >&2; exit 2; }
done
HERE=$(cd "$(dirname "$0")/.." && pwd)
WORK=${WORK_DIR:-$(mktemp -d)}
mkdir -p "$WORK"
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT

"$GEN" "$WORK/plain.gmtrace" "$EVENTS" >/dev/null
"$GEN" "$WORK/heavy.gmtrace" "$EVENTS" "$LIVE" "$STACKS" >/dev/null

echo "| trace | format | wall s | max RSS MiB | output |"
echo "|---|---|---:|---:|---:|"
for t in plain heavy; do
    for fmt in html json; do
        out=$WORK/$t.$fmt
        stats=$( { /usr/bin/time -f "%e %M" "$CLI" report --no-symbols --format "$fmt" \
            -o "$out" "$WORK/$t.gmtrace"; } 2>&1 | tail -1)
        read -r wall rss <<<"$stats"
        printf "| %s, %s events | %s | %s | %.1f | %s bytes |\n" "$t" "$EVENTS" "$fmt" "$wall" \
            "$(echo "$rss / 1024" | bc -l)" "$(stat -c %s "$out")"
    done
done
echo
(cd "$HERE/tests/browser" && node bench_page.mjs "$ROUNDS" "$WORK/plain.html" "$WORK/heavy.html")
echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
