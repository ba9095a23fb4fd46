#!/usr/bin/env bash
# The main job: start the emulator with the demo tenant on a free port, run the C tutorial and the Python tutorial
# against it (sign in, tokens for two APIs, call both, sign out), print the transcript, stop the emulator.
# Exit 0 only if every step succeeded. Run through `make demo` (which builds what it needs first).
set -euo pipefail
cd "$(dirname "$0")/.."
EMULATOR=${EMULATOR:-.build/debug/nativeauth-emulator}
EXAMPLES=${EXAMPLES:-bindings/c/build}
tmp=$(mktemp -d)
pid=""
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT

"$EMULATOR" --quiet --port 0 --ready-file "$tmp/ready.json" > /dev/null 2> "$tmp/emulator.log" &
pid=$!
for _ in $(seq 1 3000); do  # wait for readiness (up to 30 s), not a fixed time
    [ -f "$tmp/ready.json" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "the emulator did not start:"; cat "$tmp/emulator.log"; exit 1; }
    sleep 0.01
done
[ -f "$tmp/ready.json" ] || { echo "the emulator did not become ready"; exit 1; }

# Everything the examples need comes from the emulator's ready line.
eval "$(python3 - "$tmp/ready.json" <<'PY'
import json, shlex, sys
r = json.load(open(sys.argv[1]))
user = next(u for u in r["users"] if u["kind"] == "password")
todo, notes = r["apis"][0], r["apis"][1]
for k, v in {"NATIVEAUTH_AUTHORITY": r["authority"], "NATIVEAUTH_CLIENT_ID": r["client_id"],
             "NATIVEAUTH_USERNAME": user["email"], "NATIVEAUTH_PASSWORD": user["password"],
             "API1_URL": todo["url"], "API1_SCOPE": todo["scopes"][0], "API2_URL": notes["url"], "API2_SCOPE": notes["scopes"][0]}.items():
    print(f"export {k}={shlex.quote(v)}")
PY
)"

echo "== NativeAuth demo =================================================================="
echo "emulator: $NATIVEAUTH_AUTHORITY (client $NATIVEAUTH_CLIENT_ID)"
echo "API 1: $API1_URL  scope $API1_SCOPE"
echo "API 2: $API2_URL  scope $API2_SCOPE"
echo
echo "-- the C tutorial (bindings/c/call_two_apis.c) ----------------------------------------"
"$EXAMPLES/call_two_apis"
echo
echo "-- the Python tutorial (bindings/python/examples/call_two_apis.py) ----------------------"
PYTHONPATH=bindings/python/src python3 bindings/python/examples/call_two_apis.py
echo
echo "== demo: every step succeeded ========================================================"
