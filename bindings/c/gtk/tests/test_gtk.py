"""The GTK 4 sample app (bindings/c/gtk) against the emulator, on a private Xvfb display: scripted sessions (--script)
press the window's own buttons; the app prints what its widgets show as JSON lines and saves screenshots of its
window. Run by `make test-gtk`, which builds the app through pkg-config against an install into a temporary prefix
and passes it in NATIVEAUTH_GTK_APP (screenshots go to NATIVEAUTH_GTK_SCREENSHOTS, default build/gtk)."""
from __future__ import annotations

import json
import os
import pathlib
import re
import select
import shutil
import struct
import subprocess
import zlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[4]
APP = pathlib.Path(os.environ.get("NATIVEAUTH_GTK_APP", ROOT / "bindings" / "c" / "gtk" / "build" / "nativeauth-gtk"))
SHOTS = pathlib.Path(os.environ.get("NATIVEAUTH_GTK_SCREENSHOTS", ROOT / "build" / "gtk"))
PASSWORD = "Demo-Passw0rd!"
JWT = re.compile(r"eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+")  # an access or ID token, which must never be printed


@pytest.fixture(scope="module")
def display():
    """A private X server; Xvfb picks a free display number and writes it to the -displayfd pipe."""
    xvfb = shutil.which("Xvfb")
    if not xvfb:
        pytest.fail("Xvfb is not installed (make deps installs xvfb)")
    r, w = os.pipe()
    proc = subprocess.Popen([xvfb, "-displayfd", str(w), "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
                            pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(w)
    number = b""
    try:
        while not number.endswith(b"\n"):  # readiness, not a fixed delay
            ready, _, _ = select.select([r], [], [], 30)
            chunk = os.read(r, 16) if ready else b""
            if not chunk:
                pytest.fail("Xvfb did not start: " + (proc.stderr.read().decode(errors="replace") if proc.poll()
                                                      is not None else "no display number within 30 s"))
            number += chunk
        yield ":" + number.decode().strip()
    finally:
        os.close(r)
        proc.terminate()
        proc.wait(timeout=10)


def run_app(emulator, display, tmp_path, script: str):
    if not APP.exists():
        pytest.fail(f"{APP} not built (make test-gtk builds it)")
    ready = tmp_path / "ready.json"
    ready.write_text(json.dumps(emulator.ready))
    (tmp_path / "script.txt").write_text(script)
    (tmp_path / "runtime").mkdir(mode=0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NATIVEAUTH_", "API1_", "API2_", "WAYLAND"))}
    env.update(DISPLAY=display, GDK_BACKEND="x11", GSK_RENDERER="cairo", GTK_A11Y="none", NO_AT_BRIDGE="1",
               GSETTINGS_BACKEND="memory", XDG_RUNTIME_DIR=str(tmp_path / "runtime"))
    proc = subprocess.run([str(APP), "--emulator-ready", str(ready), "--script", str(tmp_path / "script.txt"),
                           "--screenshots", str(SHOTS)], env=env, capture_output=True, text=True, timeout=180)
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    return proc.returncode, lines, proc.stdout, proc.stderr


def steps(lines) -> dict:
    """The JSON line of each step by its (masked) text; a step repeated keeps its last line under 'text#n'."""
    out: dict = {}
    for line in lines:
        if "step" in line:
            key, n = line["step"], 1
            while key in out:
                n += 1
                key = f"{line['step']}#{n}"
            out[key] = line
    return out


def check_png(path: pathlib.Path, width: int, height: int) -> bytes:
    """A valid PNG (signature, every chunk's CRC, IHDR, the image data inflating to the right size) of the window's
    size, with a real picture in it (many distinct bytes). Returns the decompressed image data."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", path
    assert len(data) > 5000, f"{path}: {len(data)} bytes"
    pos, idat, ihdr = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"{path}: bad CRC in {kind!r}"
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
        if kind == b"IEND":
            break
    assert ihdr and ihdr[0] == width and ihdr[1] == height, (path, ihdr)
    bit_depth, color_type = ihdr[2], ihdr[3]
    channels = {0: 1, 2: 3, 4: 2, 6: 4}[color_type]
    raw = zlib.decompress(idat)
    assert len(raw) == height * (1 + width * channels * bit_depth // 8), path
    assert len(set(raw)) > 32, f"{path}: looks blank"
    return raw


def assert_no_secrets(*texts: str, secrets=(PASSWORD,)):
    for text in texts:
        for secret in secrets:
            assert secret not in text
        assert not JWT.search(text), "a token was printed"


def test_tutorial_sign_in_call_two_apis_sign_out(emulator, display, tmp_path):
    todo, notes = emulator.apis["ToDoList"], emulator.apis["Notes"]
    rc, lines, out, err = run_app(emulator, display, tmp_path, f"""
        screenshot gtk-sign-in
        sign_in ann@contoso.com {PASSWORD}
        screenshot gtk-signed-in
        call_api 1
        call_api 2
        screenshot gtk-api-result
        sign_out
        screenshot gtk-signed-out
    """)
    assert rc == 0, out + err
    assert lines[-1] == {"done": True, "steps": 8}
    s = steps(lines)
    assert all(line["ok"] for line in s.values()), out

    signed_in = s[f"sign_in ann@contoso.com ****"]
    assert signed_in["page"] == "signed_in" and signed_in["username"] == "ann@contoso.com"
    assert signed_in["status"] == "Signed in as ann@contoso.com"
    claims = signed_in["claims"]
    assert claims["preferred_username"] == "ann@contoso.com" and claims["name"] == "Ann Example"
    assert claims["aud"] == emulator.client_id and claims["tid"] == emulator.ready["tenant_id"]

    # What each API answered, as the emulator served it (its request log: one authorized GET each, HTTP 200).
    for n, api, scope in ((1, todo, "ToDoList.Read"), (2, notes, "Notes.Read")):
        line = s[f"call_api {n}"]
        assert line["api"] == f"API {n} answered HTTP 200" and line["status"] == line["api"]
        body = json.loads(line["api_body"])
        assert body == {"api": api["name"], "user": "ann@contoso.com", "scopes": [scope],
                        "items": [{"id": "1", "title": f"Welcome to {api['name']}, ann@contoso.com",
                                   "owner": "ann@contoso.com"}]}
        served = emulator.requests(api["url"].split(emulator.base, 1)[1])
        assert [(r["method"], r["status"]) for r in served] == [("GET", 200)]
    # API 2's token came from the sign-in's refresh token: one sign-in, one more token request.
    assert len(emulator.requests("/oauth2/v2.0/initiate")) == 1

    signed_out = s["sign_out"]
    assert signed_out["page"] == "sign_in" and signed_out["status"] == "Signed out"

    pictures = {}
    for name in ("gtk-sign-in", "gtk-signed-in", "gtk-api-result", "gtk-signed-out"):
        shot = s[f"screenshot {name}"]["file"]
        assert shot["path"] == str(SHOTS / f"{name}.png")
        pictures[name] = check_png(SHOTS / f"{name}.png", shot["width"], shot["height"])
    assert pictures["gtk-signed-in"] != pictures["gtk-api-result"]  # the API's answer is on screen
    assert pictures["gtk-sign-in"] != pictures["gtk-signed-in"]
    assert_no_secrets(out, err)


def test_code_sign_in_sign_up_and_password_reset(emulator, display, tmp_path):
    emulator.control("POST", "settings", {"reset_poll_interval": 0})
    rc, lines, out, err = run_app(emulator, display, tmp_path, f"""
        expect_error invalid_credentials
        sign_in ann@contoso.com wrong-Passw0rd
        sign_in olivia@contoso.com
        expect_error invalid_code
        submit_code 00000000
        code_from_emulator
        sign_out
        sign_up gtk.user@contoso.com Str0ng-Passw0rd!
        code_from_emulator
        screenshot gtk-sign-up-attributes
        attribute displayName "Gtk User"
        submit_attributes
        sign_out
        reset_password ann@contoso.com
        code_from_emulator
        password N3w-Gtk-Passw0rd!
        sign_out
        sign_in ann@contoso.com N3w-Gtk-Passw0rd!
    """)
    assert rc == 0, out + err
    s = steps(lines)
    assert all(line["ok"] for line in s.values()), out

    wrong = s["sign_in ann@contoso.com ****"]
    assert wrong["error"] == "invalid_credentials" and wrong["status"].startswith("invalid_credentials: ")
    code = s["sign_in olivia@contoso.com"]
    assert code["fields"] == ["email", "password", "code"] and code["button"] == "Verify code"
    assert code["code_hint"].startswith("Enter the 8-digit code sent to ")
    bad = s["submit_code ****"]
    assert bad["error"] == "invalid_code" and bad["fields"] == ["email", "password", "code"]  # the flow goes on
    assert s["code_from_emulator"]["username"] == "olivia@contoso.com"

    up = s["sign_up gtk.user@contoso.com ****"]
    assert up["page"] == "sign_up" and "code" in up["fields"]
    attrs = s["code_from_emulator#2"]
    assert attrs["button"] == "Submit details" and "displayName" in attrs["fields"]
    assert s["submit_attributes"]["username"] == "gtk.user@contoso.com"
    assert s["submit_attributes"]["claims"]["name"] == "Gtk User"

    reset = s["code_from_emulator#3"]
    assert reset["page"] == "reset_password" and reset["fields"] == ["email", "new_password"]
    assert s["password ****"]["username"] == "ann@contoso.com"
    assert s["sign_in ann@contoso.com ****#2"]["username"] == "ann@contoso.com"  # the new password works

    shot = s["screenshot gtk-sign-up-attributes"]["file"]
    check_png(SHOTS / "gtk-sign-up-attributes.png", shot["width"], shot["height"])
    codes = [m["code"] for m in emulator.control("GET", "outbox")["messages"]]
    assert_no_secrets(out, err, secrets=(PASSWORD, "wrong-Passw0rd", "Str0ng-Passw0rd!", "N3w-Gtk-Passw0rd!", *codes))


def test_cancel_a_wait_and_keep_going(emulator, display, tmp_path):
    # The emulator holds the next sign-in's first request, and then API 1's next request, for 30 s each; the app
    # presses Cancel 700 ms into the first wait and 300 ms into the second, then does both again.
    emulator.control("POST", "faults", {"path": "oauth2/v2.0/initiate", "delay_ms": 30000, "count": 1})
    emulator.control("POST", "faults", {"path": "api/todolist", "delay_ms": 30000, "count": 1})
    rc, lines, out, err = run_app(emulator, display, tmp_path, f"""
        cancel_next_wait 700 gtk-waiting
        sign_in ann@contoso.com {PASSWORD}
        screenshot gtk-cancelled
        sign_in ann@contoso.com {PASSWORD}
        cancel_next_wait 300
        call_api 1
        call_api 1
        sign_out
    """)
    assert rc == 0, out + err
    s = steps(lines)
    assert all(line["ok"] for line in s.values()), out

    cancelled = s["sign_in ann@contoso.com ****"]
    assert cancelled["status"] == "Cancelled" and cancelled["error"] == "cancelled" and not cancelled["busy"]
    assert cancelled["page"] == "sign_in" and cancelled["button"] == "Sign in"
    assert cancelled["elapsed_ms"] < 15000, "the cancel did not end the wait promptly"
    during = cancelled["during_wait"]
    assert during["busy"] and during["status"] == "Signing in…" and during["operation"] == "sign_in"
    assert during["cancel_visible"] and during["cancel_sensitive"] and during["spinning"]
    # The GTK main loop kept running while the library waited: its 20 ms timer fired all along.
    assert during["waited_ms"] >= 700 and during["main_loop_ticks"] >= 10
    assert len(emulator.requests("/oauth2/v2.0/initiate")) >= 1  # the request was on the wire when cancelled

    again = s["sign_in ann@contoso.com ****#2"]
    assert again["page"] == "signed_in" and again["username"] == "ann@contoso.com"

    api_cancelled = s["call_api 1"]
    assert api_cancelled["status"] == "Cancelled" and api_cancelled["api"] == "API 1: Cancelled"
    assert api_cancelled["elapsed_ms"] < 15000 and api_cancelled["during_wait"]["operation"] == "call_api"
    assert api_cancelled["during_wait"]["cancel_visible"] and api_cancelled["during_wait"]["main_loop_ticks"] >= 5
    assert json.loads(s["call_api 1#2"]["api_body"])["user"] == "ann@contoso.com"

    assert cancelled["wait_screenshot"] == str(SHOTS / "gtk-waiting.png")
    shot = s["screenshot gtk-cancelled"]["file"]
    waiting = check_png(SHOTS / "gtk-waiting.png", shot["width"], shot["height"])  # the same window
    assert waiting != check_png(SHOTS / "gtk-cancelled.png", shot["width"], shot["height"])
    assert_no_secrets(out, err)
