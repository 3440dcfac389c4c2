#!/usr/bin/env bash
# On a GPU host: a clean default-mode PyTorch training run (tests/gpu/torch_caching.py
# train, cuBLAS in use) traced, then `report` and `check` on the same trace, to see that
# they tell one story (docs/configuration.md, `report`): what check suppresses, report does
# not call a leak.
#   scripts/gpu-one-story.sh BUNDLE OUT     (BUNDLE: scripts/gpu-bundle.sh's folder)
set -euo pipefail
bundle=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
here=$(cd "$(dirname "$0")/.." && pwd)
cli=$bundle/bin/gpumemtrace
export LD_LIBRARY_PATH=$bundle/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python=${PYTHON:-python3}
"$cli" record --library "$bundle/lib/libgpumemtrace.so" -o "$out/train.%p.gmtrace" -- \
    "$python" "$here/tests/gpu/torch_caching.py" train > "$out/train.log" 2>&1
trace=$(ls "$out"/train.*.gmtrace | head -1)
echo "== report"
"$cli" report "$trace" | sed -n '/^Summary/,/^$/p'
echo "== report --no-builtin-suppressions"
"$cli" report --no-builtin-suppressions "$trace" | sed -n '/^Summary/,/^$/p'
echo "== check"
"$cli" check "$trace" | head -8 || true
"$cli" report --format json -o "$out/report.json" "$trace"
"$python" - "$out/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("summary.leaked_bytes", r["summary"]["leaked_bytes"], "suppressed", r["leak_scope"]["suppressed_bytes"],
      "rules", [(s["rule"], s["bytes"]) for s in r["suppressions"]])
PY

# A tensor leak (torch_caching.py planted_kept: a tensor kept per step, exiting without
# freeing them): the first frame every view shows is the script's line (own code first,
# docs/configuration.md "Stacks in text"), in report, check and the HTML report.
"$cli" record --library "$bundle/lib/libgpumemtrace.so" -o "$out/planted.%p.gmtrace" -- \
    "$python" "$here/tests/gpu/torch_caching.py" planted_kept > "$out/planted.log" 2>&1 || true
planted=$(ls "$out"/planted.*.gmtrace | head -1)
echo "== planted line: $(grep -n 'LINE:planted' "$here/tests/gpu/torch_caching.py" | cut -d: -f1)"
echo "== report (planted_kept)"
"$cli" report "$planted" | sed -n '/^Leaks/,/^$/p' | head -24
echo "== check (planted_kept)"
"$cli" check "$planted" | head -16 || true
echo "== report --full-stacks, first leak (planted_kept)"
"$cli" report --full-stacks "$planted" | sed -n '/^Leaks/,/^$/p' | head -40
"$cli" report --format html -o "$out/planted.html" "$planted"
"$cli" report --format html -o "$out/train.html" "$trace"
