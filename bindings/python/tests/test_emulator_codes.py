"""Where the one-time codes are (issue 29): the emulator prints each code it "sends" — channel, masked address, code —
on its stderr when that is a terminal, and only then (never into a pipe or a log file); `nativeauth emulator` in the
foreground lets those lines reach the terminal; `nativeauth emulator --print-env` prints, as a comment, the `curl`
line that reads the outbox, and that line works.

Each test starts its own emulator on an ephemeral port; the sign-ins go through the Python package."""
from __future__ import annotations

import json
import os
import pathlib
import re
import shlex
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterator, Tuple

import pytest

from cli_support import Cli
from nativeauth import Client, CodeRequired, SignedIn

pexpect = pytest.importorskip("pexpect")

EMULATOR = os.environ.get("NATIVEAUTH_EMULATOR") or str(pathlib.Path(__file__).resolve().parents[3] / ".build" /
                                                        "debug" / "nativeauth-emulator")


@pytest.fixture
def emulator_binary() -> str:
    if not os.path.exists(EMULATOR):
        pytest.fail(f"emulator not built: {EMULATOR} (make emulator)")
    return EMULATOR


def _wait_for(path: pathlib.Path, alive: Any) -> Dict[str, Any]:
    deadline = time.monotonic() + 30
    while not path.exists():
        assert alive() and time.monotonic() < deadline, "the emulator did not start"
        time.sleep(0.02)
    ready: Dict[str, Any] = json.loads(path.read_text())
    return ready


def _otp_sign_in(ready: Dict[str, Any]) -> Tuple[str, str]:
    """An emailed-code sign-in of the demo tenant's code user, finished; (the address, the code it was sent)."""
    user = next(u for u in ready["users"] if u["kind"] == "otp")
    with Client(ready["authority"], ready["client_id"]) as client:
        state = client.sign_in(user["email"])
        assert isinstance(state, CodeRequired), state
        code = _outbox(ready, user["email"])[-1]["code"]
        assert isinstance(state.submit_code(code), SignedIn)
    return user["email"], code


def _outbox(ready: Dict[str, Any], to: str) -> Any:
    req = urllib.request.Request(ready["base_url"] + "/_emulator/outbox?to=" + urllib.parse.quote(to),
                                 headers={"X-Emulator-Token": ready["control_token"]})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())["messages"]


def _masked(email: str) -> str:
    local, _, domain = email.partition("@")
    return f"{local[0]}***{local[-1]}@{domain}"


@pytest.fixture
def terminal_emulator(tmp_path: pathlib.Path, emulator_binary: str) -> Iterator[Tuple[Any, Dict[str, Any]]]:
    """The emulator with a pseudo-terminal as its stdout and stderr."""
    ready_file = tmp_path / "ready.json"
    child = pexpect.spawn(emulator_binary, ["--quiet", "--port", "0", "--ready-file", str(ready_file)],
                          encoding="utf-8", timeout=30)
    try:
        yield child, _wait_for(ready_file, child.isalive)
    finally:
        child.kill(signal.SIGTERM)
        child.close(force=True)


def test_the_emulator_prints_each_code_on_its_terminal(terminal_emulator: Tuple[Any, Dict[str, Any]]) -> None:
    child, ready = terminal_emulator
    email, code = _otp_sign_in(ready)
    # (The address is masked: the demo tenant's is in the ready line on the same terminal.)
    child.expect(re.escape(f"nativeauth-emulator: email to {_masked(email)}: code {code} (sign_in)"))


def _post(url: str, form: Dict[str, str]) -> Dict[str, Any]:
    req = urllib.request.Request(url, data=urllib.parse.urlencode(form).encode(), method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        answer: Dict[str, Any] = json.loads(r.read())
        return answer


def test_a_hostile_address_does_not_reach_the_terminal_raw(terminal_emulator: Tuple[Any, Dict[str, Any]]) -> None:
    child, ready = terminal_emulator
    # A sign-up sends a code to whatever address it is given (the library would refuse this one: straight to the
    # endpoints); the terminal's controls in it are shown as "?".
    hostile = "ne\x1b[2Jw@con\x1b]0;owned\x07toso\u202e.com"
    client = {"client_id": ready["client_id"], "challenge_type": "oob password redirect"}
    started = _post(ready["authority"] + "/signup/v1.0/start", {**client, "username": hostile})
    _post(ready["authority"] + "/signup/v1.0/challenge",
          {**client, "continuation_token": started["continuation_token"]})
    child.expect(r"nativeauth-emulator: email to n\*\*\*w@con\?\]0;owned\?toso\?\.com: code \d+ \(sign_up\)")
    assert "\x1b" not in child.before + child.after and "\u202e" not in child.before + child.after


def test_no_code_into_a_pipe(tmp_path: pathlib.Path, emulator_binary: str) -> None:
    ready_file = tmp_path / "ready.json"
    proc = subprocess.Popen([emulator_binary, "--port", "0", "--ready-file", str(ready_file)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, code = _otp_sign_in(_wait_for(ready_file, lambda: proc.poll() is None))
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert "/oauth2/v2.0/challenge" in err  # (the request log is there: stderr was written)
    assert code not in err and "nativeauth-emulator: email to" not in err


def test_nativeauth_emulator_shows_the_codes_in_its_terminal(tmp_path: pathlib.Path, emulator_binary: str) -> None:
    cli = Cli(tmp_path)
    child, transcript = cli.spawn("emulator", env={"NATIVEAUTH_EMULATOR": emulator_binary})
    try:
        child.expect(r"authority: (http://127\.0\.0\.1:\d+/\S+)\r\n")
        authority = child.match.group(1)
        child.expect(r"client id: (\S+)\r\n")
        ready = {"authority": authority, "client_id": child.match.group(1),
                 "base_url": authority.rsplit("/", 1)[0]}
        child.expect(r"controls: \S+ \(header X-Emulator-Token: (\S+)\)")
        ready["control_token"] = child.match.group(1)
        child.expect("One-time codes it sends are shown here")
        child.expect(r"export NATIVEAUTH_AUTHORITY")
        email = re.findall(r"^user (\S+) \(otp\)", transcript.getvalue(), re.M)[0]
        ready["users"] = [{"kind": "otp", "email": email}]
        _, code = _otp_sign_in(ready)
        child.expect(re.escape(f"email to {_masked(email)}: code {code} (sign_in)"))
    finally:
        child.kill(signal.SIGINT)
        child.expect(pexpect.EOF)
        child.close()


def test_nativeauth_emulator_into_a_pipe_prints_no_code(tmp_path: pathlib.Path, emulator_binary: str) -> None:
    cli = Cli(tmp_path)
    proc = subprocess.Popen([cli.command, "emulator", "--json", "-v"], env={**cli.env, "NATIVEAUTH_EMULATOR":
                                                                          emulator_binary},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        _, code = _otp_sign_in(json.loads(proc.stdout.readline()))
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert "/oauth2/v2.0/challenge" in err and code not in err  # (-v: the emulator's log reaches the pipe)


def test_print_env_says_how_to_read_the_outbox(tmp_path: pathlib.Path, emulator_binary: str) -> None:
    cli = Cli(tmp_path)
    r = cli.run("emulator", "--print-env", env={"NATIVEAUTH_EMULATOR": emulator_binary}, timeout=30)
    assert r.returncode == 0, r.stderr
    exported = {}
    for line in r.stdout.splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export "):].partition("=")
            exported[name] = shlex.split(value)[0]
    try:
        (read_outbox,) = [line[len("# codes it sends: "):] for line in r.stdout.splitlines()
                          if line.startswith("# codes it sends: ")]
        ready = {"authority": exported["NATIVEAUTH_AUTHORITY"], "client_id": exported["NATIVEAUTH_CLIENT_ID"],
                 "base_url": exported["NATIVEAUTH_EMULATOR_URL"],
                 "control_token": exported["NATIVEAUTH_EMULATOR_CONTROL_TOKEN"],
                 "users": [{"kind": "otp", "email": re.findall(r"^# user (\S+) \(otp\)", r.stdout, re.M)[0]}]}
        email, code = _otp_sign_in(ready)
        # The printed line, run by a shell with the exported variables, reads the outbox.
        out = subprocess.run(["bash", "-c", read_outbox], env={**os.environ, **exported}, capture_output=True,
                             text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        assert {"to": email, "code": code}.items() <= json.loads(out.stdout)["messages"][-1].items()
    finally:
        os.kill(int(exported["NATIVEAUTH_EMULATOR_PID"]), signal.SIGTERM)
