#!/usr/bin/env bash
# make gtk-demo: start the emulator with the demo tenant on a free port and open the GTK sample app against it (every
# setting from the emulator's ready document). Without a display (no DISPLAY or WAYLAND_DISPLAY) the app runs its
# scripted tour on a virtual X server instead and leaves screenshots in build/gtk/. Stops the emulator at the end.
set -euo pipefail
cd "$(dirname "$0")/../../.."
EMULATOR=${EMULATOR:-.build/debug/nativeauth-emulator}
GTK_APP=${GTK_APP:-bindings/c/gtk/build/nativeauth-gtk}
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

echo "== NativeAuth GTK demo =============================================================="
python3 - "$tmp/ready.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"emulator: {r['authority']} (client {r['client_id']})")
for n, api in enumerate(r["apis"][:2], 1):
    print(f"API {n}: {api['url']}  scope {api['scopes'][0]}")
print("demo users (their passwords are in the emulator's ready document, users[].password):")
for u in r["users"]:
    print(f"  {u['email']:<22} {u['kind']}")
print("codes: press 'Get code from emulator' (the emulator's outbox stands in for the mailbox)")
PY
echo "ready document: $tmp/ready.json"

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
    "$GTK_APP" --emulator-ready "$tmp/ready.json"
    exit
fi

echo "no display: running the scripted tour on a virtual X server (xvfb-run); screenshots in build/gtk/"
password=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["users"][0]["password"])' "$tmp/ready.json")
cat > "$tmp/tour.txt" <<TOUR
screenshot demo-sign-in
sign_in ann@contoso.com $password
screenshot demo-signed-in
call_api 1
call_api 2
screenshot demo-api-result
sign_out
sign_in olivia@contoso.com
screenshot demo-code-required
code_from_emulator
sign_out
TOUR
cat > "$tmp/show.py" <<'PY'
import json, sys
for line in sys.stdin:
    d = json.loads(line)
    if "done" in d:
        print(f"tour: {d['steps']} steps, every one ok")
        continue
    print(f"{d['step']:<34} {'ok ' if d['ok'] else 'FAILED'} {d.get('failure') or d['status']}")
    if d.get("file"):
        print(f"{'':<38}{d['file']['path']}")
PY
GDK_BACKEND=x11 GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory \
    xvfb-run -a "$GTK_APP" --emulator-ready "$tmp/ready.json" --script "$tmp/tour.txt" --screenshots build/gtk \
    | python3 "$tmp/show.py"
exit "${PIPESTATUS[0]}"
