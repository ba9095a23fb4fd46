"""The C examples, built through pkg-config from an install into a temporary prefix (see the Makefile's test-examples
target), run against the emulator — under valgrind when VALGRIND is set — with codes fed from the emulator's outbox."""
import os
import pathlib
import shlex
import subprocess
import time

import pytest

EXAMPLES = pathlib.Path(os.environ.get("NATIVEAUTH_EXAMPLES_DIR", pathlib.Path(__file__).resolve().parents[1] / "build"))


def run(emulator, name, args=(), env_extra=None, stdin_codes_for=None, wrong_code_first=False):
    binary = EXAMPLES / name
    if not binary.exists():
        pytest.fail(f"{binary} not built (make test-examples builds it)")
    env = dict(os.environ, NATIVEAUTH_AUTHORITY=emulator.authority, NATIVEAUTH_CLIENT_ID=emulator.client_id)
    env.pop("NATIVEAUTH_CODE", None)
    env.update(env_extra or {})
    cmd = shlex.split(os.environ.get("VALGRIND", "")) + [str(binary), *args]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    if stdin_codes_for:
        # Wait for the code the program asked the service to send (readiness, not a fixed delay), then type it.
        deadline = time.monotonic() + 60
        while True:
            messages = emulator.control("GET", "outbox?to=" + stdin_codes_for)["messages"]
            if messages:
                break
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() is not None else "no code"
            time.sleep(0.02)
        if wrong_code_first:
            proc.stdin.write("00000000\n")
            proc.stdin.flush()
        proc.stdin.write(messages[-1]["code"] + "\n")
        proc.stdin.flush()
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_call_two_apis(emulator):
    todo, notes = emulator.apis["ToDoList"], emulator.apis["Notes"]
    rc, out, err = run(emulator, "call_two_apis", env_extra={
        "NATIVEAUTH_USERNAME": "ann@contoso.com", "NATIVEAUTH_PASSWORD": "Demo-Passw0rd!",
        "API1_URL": todo["url"], "API1_SCOPE": todo["scopes"][0], "API2_URL": notes["url"], "API2_SCOPE": notes["scopes"][0]})
    assert rc == 0, err
    assert "signed in: ann@contoso.com" in out and "API 1 answered HTTP 200" in out and "API 2 answered HTTP 200" in out
    assert "from the server" in out and out.count("from the cache") == 3 and "signed_out" in out
    assert "Demo-Passw0rd!" not in out + err


def test_call_two_apis_reports_errors(emulator):
    todo = emulator.apis["ToDoList"]
    rc, out, err = run(emulator, "call_two_apis", ["--password", "wrong"], env_extra={
        "NATIVEAUTH_USERNAME": "ann@contoso.com", "API1_URL": todo["url"], "API1_SCOPE": todo["scopes"][0],
        "API2_URL": todo["url"], "API2_SCOPE": todo["scopes"][0]})
    assert rc == 1 and "invalid_credentials" in err and "correlation id" in err


def test_sign_in_code_with_a_wrong_code_first(emulator):
    rc, out, err = run(emulator, "sign_in_code", ["--username", "olivia@contoso.com"], stdin_codes_for="olivia@contoso.com",
                       wrong_code_first=True)
    assert rc == 0, err
    assert "didn't work" in out and "signed in with a code: olivia@contoso.com" in out


def test_sign_up(emulator):
    rc, out, err = run(emulator, "sign_up", ["--username", "c.user@contoso.com", "--password", "Str0ng-Passw0rd!",
                                             "--display-name", "C User"], stdin_codes_for="c.user@contoso.com")
    assert rc == 0, err
    assert "state: attributes_required" in out and "signed up and signed in: c.user@contoso.com" in out


def test_reset_password(emulator):
    emulator.control("POST", "settings", {"reset_poll_interval": 0})
    rc, out, err = run(emulator, "reset_password", ["--username", "ann@contoso.com", "--new-password", "C-N3w-Passw0rd!"],
                       stdin_codes_for="ann@contoso.com")
    assert rc == 0, err
    assert "signed in with the new password" in out


def test_sign_in_browser_falls_back_from_native_auth(emulator):
    emulator.control("POST", "users", {"email": "bea@contoso.com", "password": "Bea-Passw0rd!", "requires_browser": True})
    page_browser = pathlib.Path(__file__).resolve().parent / "page_browser.py"
    rc, out, err = run(emulator, "sign_in_browser", ["--username", "bea@contoso.com", "--password", "Bea-Passw0rd!"],
                       env_extra={"BROWSER": f"{page_browser} %s", "PAGE_BROWSER_EMAIL": "bea@contoso.com",
                                  "PAGE_BROWSER_PASSWORD": "Bea-Passw0rd!"})
    assert rc == 0, err
    assert "needs the browser" in out and "signed in (interactive): bea@contoso.com" in out
    assert "Bea-Passw0rd!" not in out + err
