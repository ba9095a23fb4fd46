"""`nativeauth login` on machines without a browser (issue 31), against the emulator's browser pages with a scripted
browser on the other side: paste-back (`--no-browser`) in a pseudo-terminal and with the address on stdin, then
`nativeauth token` from the cache; `--browser` on a machine where no browser can show (no display, an SSH session, a
container) offering paste-back without running $BROWSER or xdg-open (fake commands on PATH record every run); WSL
opening the Windows browser; a browser command that stays running not holding the sign-in back; the note the command
prints when the browser does not come back, and Ctrl-C while it waits; Entra's nativeclient redirect URI."""
from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from typing import Any, Dict, Iterator, List, Optional

import pytest

from browser_support import NoRedirect, redirect_from_another_device
from cli_support import Cli, cli, todo_scope  # noqa: F401 (cli: the fixture)
from emulator_protocol import Emulator

pexpect = pytest.importorskip("pexpect")

ROOT = pathlib.Path(__file__).resolve().parents[3]
PAGE_BROWSER = ROOT / "bindings" / "c" / "tests" / "page_browser.py"
DESKTOP = ("DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "SSH_TTY", "SSH_CLIENT", "WSL_DISTRO_NAME", "container",
           "BROWSER")
URL = re.compile(r"https?://\S+")


def finish(child: Any) -> int:
    child.expect(pexpect.EOF)
    child.close()
    status: int = child.exitstatus
    return status


class FakeCommands:
    """A directory put first on the command's PATH: fake programs (xdg-open, wslview, …) that append their
    arguments to <name>.ran, then do what the test says."""

    def __init__(self, tmp: pathlib.Path) -> None:
        self.dir = tmp / "bin"
        self.dir.mkdir(exist_ok=True)

    def add(self, name: str, then: str = "exit 0") -> None:
        path = self.dir / name
        path.write_text(f"#!/bin/sh\necho \"$@\" >> '{self.dir}/{name}.ran'\n{then}\n")
        path.chmod(0o755)

    def ran(self, name: str) -> Optional[str]:
        path = self.dir / f"{name}.ran"
        return path.read_text() if path.exists() else None


def machine(cli: Cli, fakes: FakeCommands, **variables: str) -> None:
    """The command's environment as on a machine with these variables only (of those that tell desktops, SSH
    sessions, containers and WSL apart), with the fake commands first on PATH."""
    for name in DESKTOP:
        cli.env.pop(name, None)
    cli.env.update(variables)
    cli.env["PATH"] = f"{fakes.dir}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"


def shown_url(child: Any) -> str:
    """The authorization URL the command shows (on a line of its own, indented)."""
    child.expect(r"open this address in a browser on any device:\s+(https?://\S+)")
    url: str = child.match.group(1)
    return url


def page_browser_env(emulator: Emulator) -> Dict[str, str]:
    ann = emulator.users["password"]
    return {"PAGE_BROWSER_EMAIL": ann["email"], "PAGE_BROWSER_PASSWORD": ann["password"]}


# -- paste-back --------------------------------------------------------------------------------------------------


def test_no_browser_in_a_terminal_takes_the_pasted_address_then_token_from_the_cache(
        cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    ann = emulator.users["password"]
    scope = todo_scope(emulator)
    fakes = FakeCommands(tmp_path)
    fakes.add("xdg-open")
    fakes.add("desktop-browser")
    machine(cli, fakes, DISPLAY=":0", BROWSER="desktop-browser")  # a desktop: still, --no-browser opens nothing
    child, transcript = cli.spawn("login", "--no-browser", "--scope", scope)
    url = shown_url(child)
    assert url.startswith(emulator.authority + "/oauth2/v2.0/authorize?") and "state=" in url
    child.expect("which it cannot load on another device")
    child.expect("Address: ")
    address = redirect_from_another_device(url, ann["email"], ann["password"])
    assert address.startswith("http://localhost:") and "code=" in address

    # Mistakes are caught before they cost the sign-in: another address, one without a code, one of another sign-in.
    child.sendline("https://evil.example/?code=x&state=y")
    child.expect("that is not the address the sign-in ended on .*paste it again")
    child.sendline(address.split("?")[0])
    child.expect("carries no code.*paste it again")
    other = re.sub(r"state=[^&#]+", "state=from-another-sign-in", address)
    child.sendline(other)
    child.expect("from another sign-in .*paste it again")
    child.sendline(address)
    child.expect(f"Signed in as {re.escape(ann['email'])}")
    assert finish(child) == 0
    assert fakes.ran("xdg-open") is None and fakes.ran("desktop-browser") is None
    code = re.search(r"code=([^&]+)", address)
    # The code is in the terminal's echo of the two pastes that carried it, never in what the command printed.
    assert code and transcript.getvalue().count(code.group(1)) == 2

    token = cli.run("token", "--scope", scope)  # a new process: from the cache
    assert token.returncode == 0, token.stderr
    assert token.stdout.strip().count(".") == 2 and token.stderr == ""


def test_no_browser_reads_the_address_from_stdin(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    ann = emulator.users["password"]
    scope = todo_scope(emulator)
    fakes = FakeCommands(tmp_path)
    machine(cli, fakes)
    proc = subprocess.Popen([cli.command, "login", "--no-browser", "--scope", scope], env=cli.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stderr is not None
    try:
        url, head = "", ""
        while "Reading that address" not in head:
            line = proc.stderr.readline()
            assert line, "the command ended without showing an address: " + head
            head += line
            found = URL.search(line)
            url = found.group(0) if found and "authorize" in line else url
        address = redirect_from_another_device(url, ann["email"], ann["password"])
        out, err = proc.communicate(address + "\n", timeout=60)
        err = head + err
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.strip() == f"Signed in as {ann['email']}."
    assert "Reading that address from stdin" in err and "Address: " not in err
    assert cli.run("token", "--scope", scope).returncode == 0

    # Not the redirect: refused at once (no terminal to try again on), and the code never repeated.
    r = cli.run("login", "--no-browser", input="http://localhost:1/?code=SECRETCODE&state=s\n")
    assert r.returncode == 2 and "nativeauth: invalid_argument: that is not the address" in r.stderr
    assert "SECRETCODE" not in r.stdout + r.stderr
    # Nothing on stdin.
    r = cli.run("login", "--no-browser", input="")
    assert r.returncode == 2 and "stdin ended before the address" in r.stderr


def test_the_nativeclient_redirect_uri_works_the_same_way(tmp_path: pathlib.Path, emulator_binary: str) -> None:
    nativeclient = "https://login.microsoftonline.com/common/oauth2/nativeclient"
    config = tmp_path / "tenant.json"
    config.write_text(json.dumps({"clients": [{"client_id": "00001111-aaaa-2222-bbbb-3333cccc4444",
                                               "redirect_uris": [nativeclient]}]}))
    with started_emulator(emulator_binary, config) as ready:
        cli = Cli(tmp_path)
        cli.env.update(NATIVEAUTH_AUTHORITY=ready["authority"], NATIVEAUTH_CLIENT_ID=ready["client_id"],
                       NATIVEAUTH_REDIRECT_URI=nativeclient)
        user = next(u for u in ready["users"] if u["kind"] == "password")
        for flag in ("--no-browser", "--browser"):  # --browser: no listener for it, so paste-back
            child, _ = cli.spawn("login", flag)
            if flag == "--browser":
                child.expect("No browser was opened here: the redirect URI is not on this machine")
            url = shown_url(child)
            child.expect("ends on an address starting with " + re.escape(nativeclient))
            child.expect("Address: ")
            address = redirect_from_another_device(url, user["email"], user["password"])
            assert address.startswith(nativeclient + "?code=")
            child.sendline(address)
            child.expect("Signed in as " + re.escape(user["email"]))
            assert finish(child) == 0


@pytest.fixture
def emulator_binary() -> str:
    path = os.environ.get("NATIVEAUTH_EMULATOR") or str(ROOT / ".build" / "debug" / "nativeauth-emulator")
    if not os.path.exists(path):
        pytest.fail(f"emulator not built: {path}")
    return path


class started_emulator:
    """The emulator with a tenant configuration file, on an ephemeral port, until the block ends."""

    def __init__(self, binary: str, config: pathlib.Path) -> None:
        self.binary, self.config = binary, config
        self.tmp = tempfile.TemporaryDirectory()

    def __enter__(self) -> Dict[str, Any]:
        ready = pathlib.Path(self.tmp.name) / "ready.json"
        self.proc = subprocess.Popen([self.binary, "--quiet", "--port", "0", "--config", str(self.config),
                                      "--ready-file", str(ready)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not ready.exists():
            assert self.proc.poll() is None, "the emulator exited"
            assert time.monotonic() < deadline, "the emulator did not start"
            time.sleep(0.01)
        document: Dict[str, Any] = json.loads(ready.read_text())
        return document

    def __exit__(self, *exc: Any) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.tmp.cleanup()


# -- choosing well -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("variables, why", [
    ({}, "(neither DISPLAY nor WAYLAND_DISPLAY is set)"),
    ({"DISPLAY": ":0", "SSH_CONNECTION": "10.1.1.1 50000 10.1.1.2 22"}, "an SSH session (SSH_CONNECTION is set)"),
    ({"container": "podman"}, "container"),
])
def test_login_browser_where_no_browser_can_show_offers_paste_back_and_runs_nothing(
        cli: Cli, emulator: Emulator, tmp_path: pathlib.Path, variables: Dict[str, str], why: str) -> None:
    ann = emulator.users["password"]
    fakes = FakeCommands(tmp_path)
    fakes.add("xdg-open")
    machine(cli, fakes, **variables)
    child, transcript = cli.spawn("login", "--browser")
    child.expect("No browser was opened here: ")
    child.expect(re.escape(why))
    child.expect("nativeauth login --device-code")
    url = shown_url(child)
    child.expect("Address: ")
    child.sendline(redirect_from_another_device(url, ann["email"], ann["password"]))
    child.expect(f"Signed in as {re.escape(ann['email'])}")
    assert finish(child) == 0
    assert fakes.ran("xdg-open") is None, "xdg-open was run"


def test_a_desktop_still_runs_xdg_open(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """The control of the test above: with a display, outside SSH, the same fake xdg-open is run (and completes)."""
    fakes = FakeCommands(tmp_path)
    fakes.add("xdg-open", f"exec {sys.executable} {PAGE_BROWSER} \"$@\"")
    machine(cli, fakes, DISPLAY=":0")
    r = cli.run("login", "--browser", "--timeout", "60", env=page_browser_env(emulator))
    assert r.returncode == 0, r.stderr
    assert (fakes.ran("xdg-open") or "").startswith("http://localhost:")


def test_an_ssh_session_runs_the_browser_variable(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """$BROWSER is the user's choice (a remote editor's helper that opens the browser at the user's end)."""
    fakes = FakeCommands(tmp_path)
    fakes.add("xdg-open")
    fakes.add("remote-open", f"exec {sys.executable} {PAGE_BROWSER} \"$@\"")
    machine(cli, fakes, SSH_TTY="/dev/pts/4", BROWSER="remote-open")
    r = cli.run("login", "--browser", "--timeout", "60", env=page_browser_env(emulator))
    assert r.returncode == 0, r.stderr
    assert fakes.ran("remote-open") and fakes.ran("xdg-open") is None


def test_wsl_opens_the_windows_browser(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    fakes = FakeCommands(tmp_path)
    fakes.add("xdg-open")
    fakes.add("wslview", f"exec {sys.executable} {PAGE_BROWSER} \"$@\"")
    machine(cli, fakes, WSL_DISTRO_NAME="Ubuntu-24.04")
    r = cli.run("login", "--browser", "--timeout", "60", env=page_browser_env(emulator))
    assert r.returncode == 0, r.stderr
    assert (fakes.ran("wslview") or "").startswith("http://localhost:") and fakes.ran("xdg-open") is None


# -- launching costs nothing -------------------------------------------------------------------------------------

STAYING_BROWSER = r"""import http.cookiejar, html, os, re, sys, time, urllib.error, urllib.parse, urllib.request
# A browser started directly: it loads the page, and stays running until the test lets it go. A page that does not
# load within 1.5 s is one this "browser" gives up on (exit 1, a failed command).
d = sys.argv[1]
open(os.path.join(d, "pid"), "w").write(str(os.getpid()))
class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
def fetch(url, data=None, timeout=30):
    try:
        r = opener.open(urllib.request.Request(url, data=data), timeout=timeout)
        return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()
try:
    status, headers, body = fetch(sys.argv[2], timeout=1.5)
except OSError:
    sys.exit(1)
listener = urllib.parse.urlsplit(sys.argv[2]).netloc
current = sys.argv[2]
for _ in range(10):
    if status in (302, 303):
        current = urllib.parse.urljoin(current, headers["Location"])
        status, headers, body = fetch(current)
        if urllib.parse.urlsplit(current).netloc == listener:
            break
        continue
    request = re.search(r'name="request" value="([^"]+)"', body)
    form = urllib.parse.urlencode({"request": html.unescape(request.group(1)), "username": os.environ["PAGE_BROWSER_EMAIL"],
                                   "password": os.environ["PAGE_BROWSER_PASSWORD"]}).encode()
    status, headers, body = fetch(current, form)
deadline = time.monotonic() + 60
while not os.path.exists(os.path.join(d, "release")) and time.monotonic() < deadline:
    time.sleep(0.05)
open(os.path.join(d, "exited"), "w").write("")
sys.exit(3)
"""


def test_a_browser_that_stays_running_does_not_hold_the_sign_in_back(
        cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """The start page is served at once, while the browser command still runs: the sign-in completes before the
    browser exits (it waits for the test), and its later non-zero exit is not a failure (it had loaded the page).
    Before, the library waited up to 2 s on the command before serving its page, so this browser, which gives a
    page 1.5 s to load, failed."""
    fakes = FakeCommands(tmp_path)
    browser = tmp_path / "staying_browser.py"
    browser.write_text(STAYING_BROWSER)
    machine(cli, fakes, BROWSER=f"{sys.executable} {browser} {tmp_path} %s")
    r = cli.run("login", "--browser", "--timeout", "20", env=page_browser_env(emulator))
    try:
        assert r.returncode == 0, r.stderr
        assert not (tmp_path / "exited").exists(), "the browser had exited before the sign-in completed"
        pid = int((tmp_path / "pid").read_text())
        os.kill(pid, 0)  # still running
    finally:
        (tmp_path / "release").write_text("")
    deadline = time.monotonic() + 30
    while not (tmp_path / "exited").exists():
        assert time.monotonic() < deadline, "the browser did not exit"
        time.sleep(0.05)


def test_the_command_says_what_it_waits_for_and_takes_a_pasted_address(
        cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """A browser that opened nothing (its opener exited 0): after a few seconds the command says what it waits
    for, how to stop, and takes the address the browser ended on, pasted (here: the test signs in on the start page
    and pastes where it was sent)."""
    ann = emulator.users["password"]
    fakes = FakeCommands(tmp_path)
    fakes.add("opener")  # records the start page, opens nothing
    machine(cli, fakes, BROWSER="opener")
    child, transcript = cli.spawn("login", "--browser")
    child.expect("Waiting for the sign-in in the browser")
    deadline = time.monotonic() + 30
    while not fakes.ran("opener"):
        assert time.monotonic() < deadline, "the opener was not run"
        time.sleep(0.02)
    start = (fakes.ran("opener") or "").strip()
    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(start, timeout=20)
        raise AssertionError("the start page did not redirect")
    except urllib.error.HTTPError as e:
        assert e.code == 302
        authorization_url = e.headers["Location"]
    address = redirect_from_another_device(authorization_url, ann["email"], ann["password"])
    child.expect(r"Still waiting for the browser to come back to http://localhost:\d+", timeout=60)
    child.expect("press Ctrl-C to stop")
    child.expect("paste that address here")
    child.expect("nativeauth login --no-browser")
    child.sendline(address)
    child.expect(f"Signed in as {re.escape(ann['email'])}")
    assert finish(child) == 0


def test_ctrl_c_stops_a_browser_sign_in_at_once(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    fakes = FakeCommands(tmp_path)
    fakes.add("opener")
    machine(cli, fakes, BROWSER="opener")
    child, transcript = cli.spawn("login", "--browser")
    child.expect("Waiting for")
    child.sendintr()
    child.expect("interrupted")
    assert finish(child) == 130
    assert "Still waiting" not in transcript.getvalue()
