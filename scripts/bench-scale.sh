#!/usr/bin/env bash
# The analyzer's costs at job scale (docs/performance.md, "Job scale"). Benchmarks, not
# tests: they print figures and assert nothing.
#
#   scripts/bench-scale.sh BUILD_DIR
#   CLI=/other/build/bin/gpumemtrace scripts/bench-scale.sh BUILD_DIR   # another analyzer
#
# (1) A job: TRACES processes of the CLI tests' probe (tests/cli/programs/cli_probe.cpp,
#     `leak 4 1024`) recorded on the simulated CUDA, one trace each; then, under
#     `ulimit -n NOFILE`, `report --format json` and `check --format json` over all of them
#     with --top JOB_TOP (every process's stacks listed). Prints peak RSS, wall time, the
#     warnings written, and how many stack frames of the output have no function name (a
#     frame printed as module+0xOFFSET).
# (2) Many leak sites: one trace of N live allocations from N distinct DEPTH-frame stacks
#     (gen_trace N N N - DEPTH) for each N of SITES; `report --format json`, `report --format html`
#     and `check --junit --sarif` (exit 1: the gate fails on the leaks, as it should), all
#     with --no-builtin-suppressions (else the stacks' libcudart frames forgive every site),
#     each with the default --top and with --top 1000000.
#
# Environment (defaults in brackets): TRACES [1000], NOFILE [1024], JOB_TOP [100000], SITES
# [131072 1000000], DEPTH [8], HUGE_TOP [1000000], CLI [BUILD_DIR/bin/gpumemtrace], MEM_CAP [none:
# an address-space cap such as 6G for each analyzer run, so a run that would take the
# machine's memory fails instead], WORK_DIR [mktemp -d] (KEEP=1 keeps it; traces found
# there are reused).
#
# Requires /usr/bin/time, python3 and `cmake --build BUILD_DIR --target gpumemtrace
# gpumemtrace_preload gmt_cli_probe gen_trace cudasim_runtime`.
set -euo pipefail

BUILD=$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)
TRACES=${TRACES:-1000}
NOFILE=${NOFILE:-1024}
SITES=${SITES:-"131072 1000000"}
HUGE_TOP=${HUGE_TOP:-1000000}
JOB_TOP=${JOB_TOP:-100000}
DEPTH=${DEPTH:-8}
CLI=${CLI:-$BUILD/bin/gpumemtrace}
PROBE=$(find "$BUILD/tests/cli" "$BUILD/bin" -maxdepth 2 -name gmt_cli_probe -type f 2>/dev/null | head -1)
GEN=$BUILD/bin/bench/gen_trace
SIM=$BUILD/lib/cudasim
PRELOAD=$BUILD/lib/libgpumemtrace.so
for f in "$CLI" "$GEN" "$PRELOAD" "$SIM/libcudart.so.13" "${PROBE:-gmt_cli_probe}"; do
    [[ -e $f ]] || { echo "missing $f: see the build targets in $0" >&2; exit 2; }
done
command -v /usr/bin/time >/dev/null || { echo "missing /usr/bin/time" >&2; exit 2; }
WORK=${WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gmt-bench-scale.XXXXXX")}
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/job"

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo); analyzer: $CLI"

# measure NAME CMD...: runs CMD under /usr/bin/time with the descriptor limit (and the
# memory cap); prints one table row: peak RSS, wall seconds, exit status, load average.
measure() {
    local name=$1
    shift
    local cap=()
    [[ -n ${MEM_CAP:-} ]] && cap=(prlimit "--as=$(numfmt --from=iec "$MEM_CAP")")
    local status=0
    (ulimit -n "$NOFILE" && exec /usr/bin/time -f '%M %e' -o "$WORK/time" "${cap[@]}" "$@") \
        >"$WORK/out" 2>"$WORK/err" || status=$?
    local rss wall
    read -r rss wall <<<"$(tail -1 "$WORK/time")"
    printf '| %s | %.2f GiB | %.1f s | %s | %s |\n' "$name" "$(awk -v k="$rss" 'BEGIN {print k / 1048576}')" \
        "$wall" "$status" "$(cut -d' ' -f1 /proc/loadavg)"
}

# unnamed FILE: how many frames of a JSON report or check JSON have no function name.
unnamed() {
    python3 - "$1" <<'EOF'
import json, re, sys
frames = unnamed = 0
def walk(x, key=None):
    global frames, unnamed
    if isinstance(x, list):
        for v in x:
            if isinstance(v, dict) and "language" in v and "function" in v:  # a report frame
                frames += 1
                unnamed += not v["function"]
            elif isinstance(v, str) and key == "stack":  # check: a frame as a line of text
                frames += 1
                unnamed += bool(re.search(r"\+0x[0-9a-f]+", v))
            else:
                walk(v)
    elif isinstance(x, dict):
        for k, v in x.items():
            walk(v, k)
walk(json.load(open(sys.argv[1])))
print(f"{frames} frames, {unnamed} without a name")
EOF
}

# (1) One job of TRACES processes.
have=$(find "$WORK/job" -name '*.gmtrace' | wc -l)
if ((have < TRACES)); then
    for ((r = have; r < TRACES; r++)); do
        RANK=$r LD_LIBRARY_PATH=$SIM LD_PRELOAD=$PRELOAD \
            GPUMEMTRACE_OUTPUT="$WORK/job/rank$r.%p.gmtrace" "$PROBE" leak 4 1024 >/dev/null
    done
fi
echo
echo "## $TRACES traces of one job, ulimit -n $NOFILE ($(du -sh "$WORK/job" | cut -f1))"
echo
echo '| command | peak RSS | wall | exit | load |'
echo '|---|---:|---:|---:|---:|'
measure "report --format json --top $JOB_TOP" "$CLI" report "$WORK/job" --format json --top "$JOB_TOP" -o "$WORK/job.json"
report_names=$(unnamed "$WORK/job.json" 2>/dev/null || echo "no report")
report_warnings=$(grep -c warning "$WORK/err" || true)
measure "check --format json --top $JOB_TOP" "$CLI" check "$WORK/job" --format json --top "$JOB_TOP" --max-leaked-bytes 1T
cp "$WORK/out" "$WORK/check.json"
check_names=$(unnamed "$WORK/check.json" 2>/dev/null || echo "no output")
check_warnings=$(grep -c warning "$WORK/err" || true)
echo
echo "report: $report_names; $report_warnings warning lines"
echo "check: $check_names; $check_warnings warning lines"

# (2) Many leak sites in one trace. gen_trace's stacks pass through libcudart, which the
# built-in suppressions forgive: without them every site is a leak, listed and failed on.
all=(--no-builtin-suppressions)
for n in $SITES; do
    trace=$WORK/sites$n.gmtrace
    [[ -f $trace ]] || "$GEN" "$trace" "$n" "$n" "$n" - "$DEPTH" >/dev/null
    echo
    echo "## $n leak sites ($(du -h "$trace" | cut -f1))"
    echo
    echo '| command | peak RSS | wall | exit | load |'
    echo '|---|---:|---:|---:|---:|'
    for top in default "$HUGE_TOP"; do
        t=()
        [[ $top == default ]] || t=(--top "$top")
        measure "report --format json --top $top" "$CLI" report "$trace" "${all[@]}" --format json \
            -o "$WORK/r.json" "${t[@]}"
        measure "report --format html --top $top" "$CLI" report "$trace" "${all[@]}" --format html \
            -o "$WORK/r.html" "${t[@]}"
        measure "check --junit --sarif --top $top" "$CLI" check "$trace" "${all[@]}" --junit "$WORK/j.xml" --sarif "$WORK/s.sarif" "${t[@]}"
        rm -f "$WORK/r.json" "$WORK/r.html" "$WORK/j.xml" "$WORK/s.sarif"
    done
done
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
