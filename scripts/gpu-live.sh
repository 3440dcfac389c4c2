#!/usr/bin/env bash
# On a GPU host: a PyTorch inference server with a planted slow leak (a cache keyed by
# request, tests/gpu/torch_live_server.py) watched while it runs (docs/live.md): `top --once`
# after 200 and after 400 requests (the leak's line grows), `snapshot` as text and JSON and
# `check` on the JSON, `control` pause and resume, then the report of the whole trace.
#   scripts/gpu-live.sh BUNDLE OUT     (BUNDLE: scripts/gpu-bundle.sh's folder)
set -euo pipefail
bundle=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
cli=$bundle/bin/gpumemtrace
export LD_LIBRARY_PATH=$bundle/gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
python=${PYTHON:-python3}
srv=$out/srv
rm -rf "$srv" "$out"/live.*.gmtrace
"$cli" record -q --library "$bundle/lib/libgpumemtrace.so" -o "$out/live.%p.gmtrace" -- \
    "$python" "$here/tests/gpu/torch_live_server.py" "$srv" > "$out/live.log" 2>&1 &
recorder=$!
trap 'touch "$srv/stop"; wait $recorder || true' EXIT
# Waits (at most 10 minutes) until the server has served $1 requests.
served() {
    for _ in $(seq 6000); do
        if [ -f "$srv/requests" ] && [ "$(cat "$srv/requests")" -ge "$1" ]; then return 0; fi
        kill -0 $recorder 2>/dev/null || { cat "$out/live.log"; exit 1; }
        sleep 0.1
    done
    echo "the server did not serve $1 requests"; exit 1
}
served 200
pid=$(cat "$srv/pid")
echo "== planted line: $(grep -n 'LINE:planted' "$here/tests/gpu/torch_live_server.py" | cut -d: -f1)"
echo "== top --once (200 requests)"
"$cli" top "$pid" --once
served 400
echo "== top --once (400 requests)"
"$cli" top "$pid" --once
echo "== snapshot"
"$cli" snapshot "$pid" | sed -n '1,/^Peak/p'
"$cli" snapshot "$pid" -o "$out/snap.json"
echo "== check on the snapshot (fails on the planted leak)"
"$cli" check "$out/snap.json" | head -8 || true
echo "== control: pause for 300 requests, then resume"
"$cli" control "$pid" pause
now=$(cat "$srv/requests"); served $((now + 300))
"$cli" control "$pid" resume
now=$(cat "$srv/requests"); served $((now + 100))
"$cli" top "$pid" --once | head -6
touch "$srv/stop"
wait $recorder || true
trap - EXIT
echo "== report of the whole trace"
"$cli" report "$(ls "$out"/live.*.gmtrace | head -1)" | sed -n '1,/^Peak/p'
