# shellcheck shell=bash
# Shared by the scripts/bench-*.sh benchmarks that source it: their work folder, and the
# medians of the figures they collect there (one number per line in a file).

# gmt_bench_need BUILD FILE... -- TOOL...: exits 2 naming the first FILE missing (which
# `cmake --build BUILD --target benchmarks` builds) or TOOL not on PATH, or unless
# LARGE > SMALL.
gmt_bench_need() {
    local build=$1
    shift
    while [[ $# -gt 0 && $1 != -- ]]; do
        [[ -e $1 ]] || { echo "missing $1: cmake --build $build --target benchmarks" >&2; exit 2; }
        shift
    done
    shift
    for t in "$@"; do
        command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 2; }
    done
    ((LARGE > SMALL)) || { echo "LARGE must exceed SMALL" >&2; exit 2; }
}

# gmt_bench_bundle BUILD: where BUILD is a bundle (scripts/gpu-bundle.sh), its CLI's own
# libraries (gpu-libs/) and its tools (tools/: heaptrack_print, GNU time, their libraries)
# are used before the machine's, so that a GPU host without them runs the bench as it is.
gmt_bench_bundle() {
    if [[ -d $1/gpu-libs ]]; then
        export LD_LIBRARY_PATH=$1/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    fi
    if [[ -d $1/tools ]]; then
        export PATH=$1/tools:$PATH
        export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$1/tools/lib
        [[ -x $1/tools/time ]] && GNU_TIME=${GNU_TIME:-$1/tools/time}
    fi
    return 0
}

# gmt_bench_work NAME: WORK := WORK_DIR, or a new temporary folder; removed when the script
# exits, unless KEEP=1.
gmt_bench_work() {
    WORK=${WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/gmt-bench-$1.XXXXXX")}
    mkdir -p "$WORK"
    [[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
}

# The median of the numbers on stdin ("nan" when there are none).
median() { sort -g | awk '{a[NR]=$1} END {if (NR == 0) print "nan"; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
# med FILE [FORMAT]: the median of $WORK/FILE, printed with FORMAT (%.1f).
med() { median <"$WORK/$1" | awk -v f="${2:-%.1f}" '{if ($1 == "nan") print $1; else printf f "\n", $1}'; }
# calc FORMAT EXPRESSION: awk's arithmetic, printed with FORMAT.
calc() { awk "BEGIN {printf \"$1\n\", $2}"; }

# gmt_bench_marginals TITLE: the closing part of a marginal-method report: under TITLE,
# each configuration's own marginal cost ($WORK/CONFIG.marginal.{wall,cpu}, for CONFIG in
# $CONFIGS), then its command (the script's `command_of CONFIG N TRACE`) for N = $SMALL and
# $LARGE.
gmt_bench_marginals() {
    echo "$1"
    echo
    echo "| configuration | wall | CPU |"
    echo "|---|---:|---:|"
    for c in $CONFIGS; do
        echo "| $c | $(med "$c.marginal.wall") | $(med "$c.marginal.cpu") |"
    done
    echo
    echo "Commands (N = $SMALL and $LARGE; each run by scripts/lib/measure.py):"
    echo
    echo '```'
    for c in $CONFIGS; do
        command_of "$c" N TRACE
    done
    echo '```'
}
