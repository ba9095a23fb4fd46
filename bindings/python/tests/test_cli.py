"""The native `nativeauth` command ($NATIVEAUTH_CLI: make test-python sets it to the release build), run as a separate
process against the emulator: sign-in in a pseudo-terminal (password, email code, MFA), device code, browser, tokens
across processes, API calls, sign-out, settings precedence, exit codes, secrets kept out of the output, text from
outside escaped for the terminal, and `nativeauth emulator`; and `python -m nativeauth` running it.

Every test has its own emulator (ephemeral port), XDG_CONFIG_HOME, XDG_CACHE_HOME and HOME under tmp_path; the token
cache is plaintext (--plaintext-cache's variable) unless a test says otherwise: the keyring-protected default is
tested with its own private keyring in test_keyring.py."""
from __future__ import annotations

import json
import os
import pathlib
import re
import shlex
import signal
import shutil
import subprocess
import sys
import time
import urllib.request
from typing import IO, Any, Dict, Optional, Tuple

import pytest

from cli_support import SRC, Cli, cli, closed_port, todo_scope  # noqa: F401 (cli: the fixture)
from emulator_protocol import Emulator

pexpect = pytest.importorskip("pexpect")

PAGE_BROWSER = pathlib.Path(__file__).resolve().parents[2] / "c" / "tests" / "page_browser.py"


def _stream(s: Optional[IO[str]]) -> IO[str]:
    assert s is not None
    return s


def _search(pattern: str, text: str, flags: int = 0) -> "re.Match[str]":
    match = re.search(pattern, text, flags)
    assert match, f"{pattern!r} not in {text!r}"
    return match


def finish(child: Any) -> int:
    child.expect(pexpect.EOF)
    child.close()
    status: int = child.exitstatus
    return status


# -- sign-in in a terminal -----------------------------------------------------------------------------------------


def test_password_login_in_a_terminal_then_token_call_accounts_logout(cli: Cli, emulator: Emulator) -> None:
    ann = emulator.users["password"]
    scope = todo_scope(emulator)
    child, transcript = cli.spawn("login", "--scope", scope)
    child.expect("Username: ")
    child.sendline(ann["email"])
    child.expect("Password: ")
    child.sendline(ann["password"])
    child.expect(f"Signed in as {re.escape(ann['email'])}")
    assert finish(child) == 0
    assert ann["password"] not in transcript.getvalue()  # typed without echo
    assert ann["email"] in transcript.getvalue()  # the username is echoed as usual

    token = cli.run("token", "--scope", scope)  # a new process: the sign-in is in the token cache file
    assert token.returncode == 0, token.stderr
    access_token = token.stdout.strip()
    assert access_token.count(".") == 2 and "\n" not in access_token and token.stderr == ""
    cache_dir = pathlib.Path(cli.env["XDG_CACHE_HOME"]) / "nativeauth"
    assert (cache_dir / "token_cache.json").exists() and cache_dir.stat().st_mode & 0o777 == 0o700

    url = emulator.apis["ToDoList"]["url"]
    call = cli.run("call", url, "--scope", scope)
    assert call.returncode == 0, call.stderr
    assert json.loads(call.stdout)["user"] == ann["email"]
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {access_token}"})
    with urllib.request.urlopen(req, timeout=10) as r:  # the printed token is what the API accepts
        assert r.status == 200 and json.loads(r.read())["user"] == ann["email"]

    accounts = cli.run("accounts")
    assert accounts.returncode == 0 and accounts.stdout.split()[0] == ann["email"]
    doc = json.loads(cli.run("accounts", "--json").stdout)
    assert [a["username"] for a in doc["accounts"]] == [ann["email"]]
    assert doc["accounts"][0]["home_account_id"] in accounts.stdout

    token_doc = json.loads(cli.run("token", "--scope", scope, "--json").stdout)
    assert token_doc["access_token"] == access_token and token_doc["from_cache"] is True

    logout = cli.run("logout")
    assert logout.returncode == 0 and ann["email"] in logout.stdout
    assert cli.run("accounts", "--json").stdout.count("username") == 0
    after = cli.run("token", "--scope", scope)
    assert after.returncode == 3 and after.stdout == ""
    assert after.stderr.startswith("nativeauth: no_account: ")
    assert cli.run("logout").stdout.strip() == "Nobody was signed in."


def test_email_code_login_in_a_terminal_with_a_mistyped_code(cli: Cli, emulator: Emulator) -> None:
    olivia = emulator.users["otp"]
    child, transcript = cli.spawn("login")
    child.expect("Username: ")
    child.sendline(olivia["email"])
    child.expect("A one-time code was sent")
    child.expect("Code: ")
    code = emulator.last_code(olivia["email"])
    wrong = "0" * len(code) if code != "0" * len(code) else "1" * len(code)
    child.sendline(wrong)
    child.expect("nativeauth: invalid_code: .*[Tt]ry again")
    child.expect("Code: ")
    child.sendline(code)
    child.expect(f"Signed in as {re.escape(olivia['email'])}")
    assert finish(child) == 0
    assert code not in transcript.getvalue() and wrong not in transcript.getvalue()
    assert cli.run("accounts").stdout.split()[0] == olivia["email"]


def test_mfa_login_in_a_terminal(cli: Cli, emulator: Emulator) -> None:
    mike = emulator.users["password+mfa"]
    child, transcript = cli.spawn("login", "--username", mike["email"])
    child.expect("Password: ")
    child.sendline(mike["password"])
    child.expect("Code: ")
    code = emulator.last_code(mike["mfa_email"])
    child.sendline(code)
    child.expect("Signed in as")
    assert finish(child) == 0
    assert mike["password"] not in transcript.getvalue() and code not in transcript.getvalue()


def test_password_stdin_and_refused_password(cli: Cli, emulator: Emulator) -> None:
    ann = emulator.users["password"]
    wrong = cli.run("login", "-u", ann["email"], "--password-stdin", input="Not-The-Passw0rd\n")
    assert wrong.returncode == 6 and wrong.stderr.startswith("nativeauth: invalid_credentials: ")
    assert "Not-The-Passw0rd" not in wrong.stdout + wrong.stderr
    unknown = cli.run("login", "-u", "nobody@contoso.com", "--password-stdin", input="x\n")
    assert unknown.returncode == 6 and "user_not_found" in unknown.stderr
    ok = cli.run("login", "-u", ann["email"], "--password-stdin", "--json", input=ann["password"] + "\n")
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert doc["status"] == "signed_in" and doc["account"]["username"] == ann["email"]
    assert "token" not in ok.stdout


# -- device code and browser ---------------------------------------------------------------------------------------


def test_device_code_login_approved_through_the_emulator(cli: Cli, emulator: Emulator) -> None:
    ann = emulator.users["password"]
    proc = subprocess.Popen([cli.command, "login", "--device-code", "--scope",
                             todo_scope(emulator)], env=cli.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = _stream(proc.stderr).readline()
        match = re.search(r"open (\S+) and enter the code (\S+)", line)
        assert match, line
        assert match.group(1).startswith(emulator.base)
        assert emulator.control("POST", "device/approve", {"user_code": match.group(2), "email": ann["email"]})["ok"]
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.strip() == f"Signed in as {ann['email']}."
    assert cli.run("token").returncode == 0


def test_device_code_denied_is_refused(cli: Cli, emulator: Emulator) -> None:
    proc = subprocess.Popen([cli.command, "login", "--device-code"], env=cli.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        code = _search(r"enter the code (\S+)", _stream(proc.stderr).readline()).group(1)
        emulator.control("POST", "device/approve", {"user_code": code, "deny": True})
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 6 and "access_denied" in err


def test_browser_login_through_a_browser_command(cli: Cli, emulator: Emulator) -> None:
    ann = emulator.users["password"]
    env = {"BROWSER": f"{PAGE_BROWSER} %s", "PAGE_BROWSER_EMAIL": ann["email"], "PAGE_BROWSER_PASSWORD": ann["password"]}
    r = cli.run("login", "--browser", "--scope", todo_scope(emulator), "--timeout", "60", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"Signed in as {ann['email']}."
    assert emulator.control("GET", "authorize_log")["requests"]  # the page browser went through the authorize page
    assert cli.run("token", "--scope", todo_scope(emulator)).returncode == 0
    # --browser-command (a flag) wins over $BROWSER ("false" here opens nothing)
    r = cli.run("login", "--browser", "--browser-command", f"{PAGE_BROWSER} %s", "--timeout", "60",
                env={"PAGE_BROWSER_EMAIL": ann["email"], "PAGE_BROWSER_PASSWORD": ann["password"]})
    assert r.returncode == 0, r.stderr


def test_ctrl_c_while_waiting_for_the_device_code(cli: Cli, emulator: Emulator) -> None:
    child, transcript = cli.spawn("login", "--device-code")
    child.expect("enter the code (\\S+)")
    child.expect("Waiting for the sign-in on the other device")  # the spinner: stderr is a terminal
    child.sendintr()
    child.expect("nativeauth: interrupted")
    assert finish(child) == 130


# -- settings ------------------------------------------------------------------------------------------------------


def write_config(cli: Cli, text: str) -> None:
    path = pathlib.Path(cli.env["XDG_CONFIG_HOME"]) / "nativeauth" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)  # whatever the umask: a file others may write is refused


def test_settings_precedence_flag_over_env_over_profile(tmp_path: pathlib.Path, emulator: Emulator) -> None:
    cli = Cli(tmp_path)  # nothing in the environment
    ann = emulator.users["password"]
    dead = f"http://127.0.0.1:{closed_port()}/contoso.onmicrosoft.com"
    write_config(cli, f"""
# two profiles besides the default one
[profiles.default]
authority = "{dead}"
client_id = "{emulator.client_id}"
scopes = ["{todo_scope(emulator)}"]

[profiles.good]
authority = "{emulator.authority}"
client_id = "{emulator.client_id}"
cache_path = "{tmp_path / 'good-cache' / 'tokens.json'}"

[profiles.bad]
authority = "{dead}"
client_id = "{emulator.client_id}"
""")

    def login(*args: str, env: Optional[Dict[str, str]] = None) -> "subprocess.CompletedProcess[str]":
        return cli.run("login", "-u", ann["email"], "--password-stdin", *args, input=ann["password"] + "\n", env=env)

    assert login().returncode == 4  # the default profile's authority does not answer
    r = login(env={"NATIVEAUTH_AUTHORITY": emulator.authority})  # env over profile
    assert r.returncode == 0, r.stderr
    assert login("--authority", dead, env={"NATIVEAUTH_AUTHORITY": emulator.authority}).returncode == 4  # flag > env
    assert login("--profile", "bad").returncode == 4
    r = login("--profile", "good")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "good-cache" / "tokens.json").exists()  # the profile's cache_path
    assert login(env={"NATIVEAUTH_PROFILE": "good"}).returncode == 0
    assert login("--profile", "bad", env={"NATIVEAUTH_PROFILE": "good"}).returncode == 4  # flag > env
    # the default profile's scopes are what `token` asks for without --scope; NATIVEAUTH_SCOPES overrides them
    token = cli.run("token", "--json", env={"NATIVEAUTH_AUTHORITY": emulator.authority})
    assert token.returncode == 0, token.stderr
    assert todo_scope(emulator) in json.loads(token.stdout)["scopes"]
    notes = emulator.apis["Notes"]["scopes"][0]
    token = cli.run("token", "--json", env={"NATIVEAUTH_AUTHORITY": emulator.authority, "NATIVEAUTH_SCOPES": notes})
    assert token.returncode == 0, token.stderr
    assert notes in json.loads(token.stdout)["scopes"] and todo_scope(emulator) not in token.stdout
    # "good" has its own cache file; --no-cache reads none
    assert cli.run("accounts", "--profile", "good").stdout.split()[0] == ann["email"]
    assert cli.run("accounts", "--profile", "good", "--no-cache", "--json").stdout.count("username") == 0

    unknown = cli.run("accounts", "--profile", "nope")
    assert unknown.returncode == 2 and "no profile 'nope'" in unknown.stderr and "good" in unknown.stderr


def test_invalid_configuration_file_is_a_usage_error(cli: Cli) -> None:
    write_config(cli, '[profiles.default]\nauthority = "x"\ncolor = "blue"\n')
    r = cli.run("accounts")
    assert r.returncode == 2 and "unknown setting 'color'" in r.stderr
    write_config(cli, '[profiles.default\n')
    assert cli.run("accounts").returncode == 2
    assert cli.run("accounts", "--config", str(cli.tmp / "missing.toml")).returncode == 2


# -- exit codes and errors -----------------------------------------------------------------------------------------


def test_exit_codes(tmp_path: pathlib.Path, emulator: Emulator) -> None:
    cli = Cli(tmp_path, emulator)
    assert cli.run().returncode == 2  # no command
    bad = cli.run("token", "--bogus")
    assert bad.returncode == 2 and "nativeauth: usage:" in bad.stderr
    no_client = Cli(tmp_path).run("accounts")
    assert no_client.returncode == 2 and "no client id" in no_client.stderr
    assert cli.run("token").returncode == 3  # nobody signed in
    dead = f"http://127.0.0.1:{closed_port()}/contoso.onmicrosoft.com"
    network = cli.run("login", "-u", "ann@contoso.com", "--password-stdin", "--authority", dead, input="x\n")
    assert network.returncode == 4 and network.stderr.startswith("nativeauth: network: ")
    assert cli.run("call", emulator.apis["ToDoList"]["url"]).returncode == 2  # call needs a scope


def test_json_error_document(cli: Cli, emulator: Emulator) -> None:
    r = cli.run("token", "--scope", todo_scope(emulator), "--json")
    assert r.returncode == 3
    doc = json.loads(r.stdout)
    assert doc["error"]["code"] == "no_account" and doc["error"]["message"] and doc["exit_code"] == 3
    assert r.stderr.startswith("nativeauth: no_account: ")
    ann = emulator.users["password"]
    r = cli.run("--json", "login", "-u", ann["email"], "--password-stdin", input="wrong\n")  # --json before the command
    assert r.returncode == 6 and json.loads(r.stdout)["error"]["code"] == "invalid_credentials"
    assert "flow" not in json.loads(r.stdout)["error"]


def test_call_post_with_headers_and_http_errors(cli: Cli, emulator: Emulator) -> None:
    ann = emulator.users["password"]
    write = todo_scope(emulator, write=True)
    assert cli.run("login", "-u", ann["email"], "--password-stdin", "-s", write, input=ann["password"] + "\n") \
        .returncode == 0
    url = emulator.apis["ToDoList"]["url"]
    r = cli.run("call", url, "-s", write, "-d", '{"title": "from the shell"}', "-H", "X-Test: 1", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["status"] == 201 and doc["body"]["created"]["title"] == "from the shell"
    missing = cli.run("call", emulator.base + "/api/missing", "-s", write)
    assert missing.returncode == 5 and "HTTP 404" in missing.stderr and missing.stdout  # the body is printed
    assert cli.run("call", url, "-s", write, "-H", "no colon").returncode == 2
    # A header without its colon is not quoted back: it may hold a secret.
    typo = cli.run("call", url, "-s", write, "-H", "X-Test: 1", "-H", "X-Api-Key s3cr3tValue")
    assert typo.returncode == 2 and "header 2 of 2" in typo.stderr
    assert "s3cr3tValue" not in typo.stderr + typo.stdout


# -- secrets -------------------------------------------------------------------------------------------------------


def test_no_secrets_in_any_output_even_verbose(cli: Cli, emulator: Emulator) -> None:
    ann, olivia = emulator.users["password"], emulator.users["otp"]
    scope = todo_scope(emulator)
    r = cli.run("--verbose", "login", "-u", ann["email"], "--password-stdin", "-s", scope,
                input=ann["password"] + "\n")
    assert r.returncode == 0, r.stderr
    assert "nativeauth: log " in r.stderr  # the library's log lines are there
    child, transcript = cli.spawn("login", "--verbose", "-u", olivia["email"])
    child.expect("Code: ")
    code = emulator.last_code(olivia["email"])
    child.sendline(code)
    child.expect("Signed in as")
    assert finish(child) == 0
    cli.outputs.append(transcript.getvalue())
    for args in (("accounts", "--json", "-v"), ("token", "-v", "--account", ann["email"], "--json"),
                 ("call", emulator.apis["ToDoList"]["url"], "-s", scope, "--account", ann["email"], "-v"),
                 ("logout", "--all", "-v", "--json")):
        assert cli.run(*args).returncode == 0
    token = json.loads(cli.outputs[-6])["access_token"]  # the token command's intended output
    cache = pathlib.Path(cli.env["XDG_CACHE_HOME"]) / "nativeauth" / "token_cache.json"
    assert cache.exists()
    everything = "\n".join(cli.outputs)
    assert ann["password"] not in everything and code not in everything
    assert everything.count(token) == 1  # only where it was asked for


def test_several_accounts_need_account(cli: Cli, emulator: Emulator) -> None:
    ann, olivia = emulator.users["password"], emulator.users["otp"]
    assert cli.run("login", "-u", ann["email"], "--password-stdin", input=ann["password"] + "\n").returncode == 0
    child, _ = cli.spawn("login", "-u", olivia["email"])
    child.expect("Code: ")
    child.sendline(emulator.last_code(olivia["email"]))
    assert finish(child) == 0
    r = cli.run("token")
    assert r.returncode == 3 and "account_required" in r.stderr and "--account" in r.stderr
    assert cli.run("token", "--account", olivia["email"]).returncode == 0
    r = cli.run("logout", "--account", olivia["email"])
    assert r.returncode == 0 and olivia["email"] in r.stdout
    assert cli.run("token").returncode == 0  # ann is the only one left


# -- the emulator command ------------------------------------------------------------------------------------------


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie waiting for a reaper has stopped too
        return "\nState:\tZ" in pathlib.Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return True


def _wait_gone(pid: int) -> None:
    deadline = time.monotonic() + 15
    while not _gone(pid):
        assert time.monotonic() < deadline, f"process {pid} still running"
        time.sleep(0.02)


@pytest.fixture
def emulator_binary() -> str:
    binary = os.environ.get("NATIVEAUTH_EMULATOR") or str(SRC.parents[2] / ".build" / "debug" /
                                                          "nativeauth-emulator")
    if not os.path.exists(binary):
        pytest.fail(f"emulator not built: {binary} (make emulator)")
    return binary


def test_emulator_print_env(tmp_path: pathlib.Path, emulator_binary: str) -> None:
    cli = Cli(tmp_path)
    r = cli.run("emulator", "--print-env", env={"NATIVEAUTH_EMULATOR": emulator_binary}, timeout=30)
    assert r.returncode == 0, r.stderr  # returns at once: eval "$(nativeauth emulator --print-env)" works
    exported = {}
    for line in r.stdout.splitlines():
        if line.startswith("export "):
            name, _, value = line[len("export "):].partition("=")
            exported[name] = shlex.split(value)[0]
        else:
            assert line.startswith("#"), line
    pid = int(exported["NATIVEAUTH_EMULATOR_PID"])
    try:
        assert {"NATIVEAUTH_AUTHORITY", "NATIVEAUTH_CLIENT_ID", "NATIVEAUTH_EMULATOR_URL",
                "NATIVEAUTH_EMULATOR_CONTROL_TOKEN"} <= exported.keys()
        user = _search(r"^# user (\S+) \(password\)  password: (\S+)$", r.stdout, re.M)
        login = cli.run("login", "-u", user.group(1), "--password-stdin", env=exported, input=user.group(2) + "\n")
        assert login.returncode == 0, login.stderr
        assert cli.run("token", env=exported).returncode == 0
        # the control token works with the controls
        req = urllib.request.Request(exported["NATIVEAUTH_EMULATOR_URL"] + "/_emulator/counters",
                                     headers={"X-Emulator-Token": exported["NATIVEAUTH_EMULATOR_CONTROL_TOKEN"]})
        with urllib.request.urlopen(req, timeout=10) as resp:
            assert resp.status == 200
    finally:
        os.kill(pid, signal.SIGTERM)
    _wait_gone(pid)


@pytest.mark.parametrize("sig, as_json", [(signal.SIGINT, False), (signal.SIGTERM, True)])
def test_emulator_in_the_foreground_stops_on_a_signal(tmp_path: pathlib.Path, emulator_binary: str,
                                                      sig: signal.Signals, as_json: bool) -> None:
    cli = Cli(tmp_path)
    proc = subprocess.Popen([cli.command, "emulator"] + (["--json"] if as_json else []),
                            env={**cli.env, "NATIVEAUTH_EMULATOR": emulator_binary}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        if as_json:
            ready = json.loads(_stream(proc.stdout).readline())
        else:
            header = _stream(proc.stdout).readline()
            assert header.startswith("NativeAuth emulator running (pid ")
            ready = {"pid": int(_search(r"pid (\d+)", header).group(1))}
            lines = [_stream(proc.stdout).readline() for _ in range(2)]
            assert lines[0].startswith("authority: http://127.0.0.1:") and lines[1].startswith("client id: ")
            ready["base_url"] = lines[0].split()[1].rsplit("/", 1)[0]
        with urllib.request.urlopen(ready["base_url"] + "/contoso.onmicrosoft.com/v2.0/.well-known/"
                                                        "openid-configuration", timeout=10) as resp:
            assert resp.status == 200
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "the emulator stopped" in err
    _wait_gone(ready["pid"])


def test_emulator_not_found(tmp_path: pathlib.Path) -> None:
    """Neither NATIVEAUTH_EMULATOR, nor beside the command (a copy of it, alone in a directory: the build directory may
    hold an emulator), nor on PATH."""
    cli = Cli(tmp_path)
    env = {k: v for k, v in cli.env.items() if k != "NATIVEAUTH_EMULATOR"}
    env["PATH"] = str(tmp_path)
    alone = tmp_path / "alone"
    alone.mkdir()
    command = shutil.copy(cli.command, alone / "nativeauth")
    r = subprocess.run([command, "emulator"], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and r.stderr.startswith("nativeauth: emulator_not_found: ")


def test_call_prints_a_body_that_is_not_text_as_bytes(cli: Cli, emulator: Emulator) -> None:
    import http.server
    import threading

    payload = bytes([0xFF, 0x00, 0x01, 0x80, 0x0A, 0xFE])

    class Binary(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Binary)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        ann = emulator.users["password"]
        scope = todo_scope(emulator)
        login = cli.run("login", "-u", ann["email"], "--password-stdin", "--scope", scope, input=ann["password"] + "\n")
        assert login.returncode == 0, login.stderr
        url = f"http://127.0.0.1:{server.server_address[1]}/blob"
        r = subprocess.run([cli.command, "call", url, "--scope", scope], capture_output=True,
                           env=cli.env, timeout=60)
        assert r.returncode == 0, r.stderr
        assert r.stdout == payload
        doc = json.loads(cli.run("call", url, "--scope", scope, "--json").stdout)
        assert doc["body"] is None and doc["body_base64"] == "/wABgAr+"
    finally:
        server.shutdown()
        server.server_close()


# -- text from outside reaches the terminal escaped (security issue #18) -------------------------------------------

# Terminal controls a hostile provider could send: set the window title (OSC 0), write the clipboard (OSC 52), clear
# the screen, return to the line's start, C1 CSI and NEL, DEL, bidirectional overrides and isolates, and a newline
# followed by a fake line.
HOSTILE = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\r\x9b1A\x85\x7f\u202e\u2066\u200f\u061c\nfake signed in"
# What must never be in the output raw: C0 but the output's own newlines, DEL, C1, bidirectional controls.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def run_bytes(cli: Cli, *args: str, input: str = "", timeout: float = 60) -> Tuple[int, str, str]:
    """Runs the command line with stdout and stderr as bytes (text mode would turn a raw CR into a newline), in a
    session of its own (no terminal: getpass reads stdin). Returns (exit code, stdout, stderr), decoded as UTF-8."""
    r = subprocess.run([cli.command, *args], input=input.encode(), capture_output=True,
                       env=cli.env, timeout=timeout, start_new_session=True)
    out, err = r.stdout.decode("utf-8"), r.stderr.decode("utf-8")  # strict: the output is UTF-8 too
    cli.outputs += [out, err]
    return r.returncode, out, err


def assert_clean(*outputs: str) -> None:
    for text in outputs:
        raw = RAW.findall(text)
        assert not raw, f"raw {raw!r} in {text!r}"
        assert not re.search(r"^fake signed in", text, re.M), text  # a newline inside a value starts no line


def test_username_from_the_id_token_and_log_lines_are_escaped(cli: Cli, emulator: Emulator) -> None:
    ann = emulator.users["password"]
    username, name = f"ann{HOSTILE}@contoso.com", f"Ann {HOSTILE}"
    # The sign-in's ID token names the user with controls; the token cache file keeps them for the later commands.
    emulator.control("POST", "token_answers", {"count": 1, "id_token_claims": {"preferred_username": username,
                                                                               "name": name}})
    code, out, err = run_bytes(cli, "-v", "login", "-u", ann["email"], "--password-stdin",
                               input=ann["password"] + "\n")
    assert code == 0, err
    assert_clean(out, err)
    assert out.startswith("Signed in as ann\\x1b]0;pwned\\x07\\x1b]52;c;cHduZWQ=\\x07") and "nativeauth: log " in err
    assert "\\u202e\\u2066\\u200f\\u061c\\x0afake signed in@contoso.com." in out

    code, out, err = run_bytes(cli, "accounts", "-v")
    assert code == 0 and out.startswith("ann\\x1b]0;pwned"), err
    assert_clean(out, err)
    code, out, err = run_bytes(cli, "accounts", "--json", "-v")
    assert code == 0, err
    assert_clean(out, err)
    account = json.loads(out)["accounts"][0]
    assert account["username"] == username and account["name"] == name  # the same value, escaped the JSON way
    code, out, err = run_bytes(cli, "token", "-v", "--json")
    assert code == 0, err
    assert_clean(out, err)
    code, out, err = run_bytes(cli, "logout", "-v", "--json")
    assert code == 0, err
    assert_clean(out, err)
    assert json.loads(out)["signed_out"] == [username]

    emulator.control("POST", "token_answers", {"count": 1, "id_token_claims": {"preferred_username": username}})
    code, out, err = run_bytes(cli, "login", "-v", "--json", "-u", ann["email"], "--password-stdin",
                               input=ann["password"] + "\n")
    assert code == 0, err
    assert_clean(out, err)
    assert json.loads(out)["account"]["username"] == username
    code, out, err = run_bytes(cli, "logout", "-v")
    assert code == 0 and out.startswith("Signed out ann\\x1b]0;pwned"), err
    assert_clean(out, err)


@pytest.mark.parametrize("as_json", [False, True])
def test_device_code_answer_and_server_error_are_escaped(cli: Cli, emulator: Emulator, as_json: bool) -> None:
    # The device authorization answer is the provider's own: a code, addresses and a message full of controls.
    emulator.control("POST", "faults", {"path": "oauth2/v2.0/devicecode", "status": 200, "body": {
        "device_code": "DC.hostile", "user_code": f"AB{HOSTILE}CD", "verification_uri": f"{emulator.base}/d{HOSTILE}",
        "verification_uri_complete": f"{emulator.base}/d?c={HOSTILE}", "expires_in": 60, "interval": 1,
        "message": f"open {HOSTILE}"}})
    # Its token endpoint then refuses with an error, suberror and description that are controls too.
    emulator.control("POST", "token_errors", {"grant_type": "device_code", "count": 1, "error": f"bad{HOSTILE}"[:60],
                                              "suberror": f"sub{HOSTILE}", "error_description": f"desc {HOSTILE}"})
    code, out, err = run_bytes(cli, "login", "--device-code", "-v", *(["--json"] if as_json else []))
    assert code == 5, err
    assert_clean(out, err)
    assert "and enter the code AB\\x1b]0;pwned\\x07" in err and "(or open " in err
    if as_json:
        document = json.loads(out)
        assert document["error"]["code"] == "server" and document["exit_code"] == 5
    else:
        assert out == ""
    assert err.rstrip("\n").splitlines()[-1].startswith("nativeauth: server: ")


def test_code_prompt_and_mfa_methods_from_the_server_are_escaped(cli: Cli, emulator: Emulator) -> None:
    olivia, mike = emulator.users["otp"], emulator.users["password+mfa"]
    # Where the code went and over which channel: the server's words, shown before the Code: prompt.
    emulator.control("POST", "faults", {"path": "oauth2/v2.0/challenge", "stage": "after", "body": {
        "continuation_token": "ct", "challenge_type": "oob", "binding_method": "prompt",
        "challenge_channel": f"email{HOSTILE}", "challenge_target_label": f"o***{HOSTILE}@co**o.com",
        "code_length": 8}})
    code, out, err = run_bytes(cli, "-v", "login", "-u", olivia["email"], input="12345678\n")
    assert code != 0  # the flow the fault made up goes nowhere
    assert_clean(out, err)
    assert "A one-time code was sent to o***\\x1b]0;pwned\\x07" in err

    # The second factors to choose from: labels and addresses from the server.
    method = {"challenge_type": "oob", "challenge_channel": f"email{HOSTILE}", "login_hint": f"m***{HOSTILE}"}
    emulator.control("POST", "faults", {"path": "oauth2/v2.0/introspect", "stage": "after", "body": {
        "continuation_token": "ct", "methods": [{"id": "one", **method}, {"id": "two", **method}]}})
    code, out, err = run_bytes(cli, "-v", "login", "-u", mike["email"], input=mike["password"] + "\n1\n")
    assert code != 0
    assert_clean(out, err)
    assert "  1. email\\x1b]0;pwned\\x07" in err and "  2. email" in err and "m***\\x1b]0;pwned" in err


def test_browser_redirect_error_is_escaped(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    # A "browser" that delivers the provider's error redirect at once: error=<controls>.
    browser = tmp_path / "error_browser.py"
    # The library hands the browser a one-time start page: fetch it (keeping its cookie), read the real
    # authorization URL from its redirect, then come back with the error.
    browser.write_text(f"""import http.cookiejar, os, sys, urllib.error, urllib.parse, urllib.request
class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None
if os.fork() == 0:  # like xdg-open: return at once, the "page" comes later
    opener = urllib.request.build_opener(NoRedirect, urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
    try:
        opener.open(sys.argv[1], timeout=30)
        location = ""
    except urllib.error.HTTPError as e:
        location = e.headers.get("Location", "")
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))
    error = urllib.parse.urlencode({{"error": {HOSTILE[:40]!r}, "error_description": {HOSTILE!r},
                                     "state": query.get("state", "")}})
    try:
        opener.open(query.get("redirect_uri", "") + "?" + error, timeout=30).read()
    except Exception:
        pass
    os._exit(0)
""")
    for as_json in (False, True):
        code, out, err = run_bytes(cli, "login", "--browser", "-v", "--timeout", "60", "--browser-command",
                                   f"{sys.executable} {browser} %s", *(["--json"] if as_json else []))
        assert code == 5, err
        assert_clean(out, err)
        # The library strips the controls from its message; whatever is left is printed escaped.
        assert "nativeauth: server: " in err and "pwned" in err
        if as_json:
            assert json.loads(out)["error"]["code"] == "server"


def test_emulator_print_env_escapes_the_tenant_configuration(tmp_path: pathlib.Path, emulator_binary: str) -> None:
    cli = Cli(tmp_path)
    config = tmp_path / "tenant.json"
    config.write_text(json.dumps({"users": [{"email": f"eve{HOSTILE}@contoso.com", "password": f"P{HOSTILE}"}]}))
    env = {"NATIVEAUTH_EMULATOR": emulator_binary}
    for as_json in (False, True):
        cli.env.update(env)
        code, out, err = run_bytes(cli, "emulator", "--print-env", "--tenant-config", str(config),
                                   *(["--json"] if as_json else []), timeout=30)
        pid = json.loads(out)["pid"] if as_json else int(_search(r"NATIVEAUTH_EMULATOR_PID=(\d+)", out).group(1))
        try:
            assert code == 0, err
            assert_clean(out, err)
            if as_json:
                assert [u["email"] for u in json.loads(out)["users"]] == [f"eve{HOSTILE}@contoso.com".lower()]
            else:
                assert "# user eve\\x1b]0;pwned\\x07" in out
        finally:
            os.kill(pid, signal.SIGTERM)
        _wait_gone(pid)


def test_six_parallel_forced_refreshes_keep_the_sign_in(cli: Cli, emulator: Emulator) -> None:
    """Issue 18, as a user saw it: six `nativeauth token --force-refresh` at once against a server with refresh-token
    reuse detection (the emulator's default) each print a token, and the sign-in survives them."""
    scope = todo_scope(emulator)
    r = cli.run("login", "-u", "ann@contoso.com", "--password-stdin", "-s", scope, input="Demo-Passw0rd!\n")
    assert r.returncode == 0, r.stderr
    procs = [subprocess.Popen([cli.command, "token", "--force-refresh", "--scope", scope],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=cli.env)
             for _ in range(6)]
    results = [(p.wait(timeout=60), p.stdout.read() if p.stdout else "", p.stderr.read() if p.stderr else "")
               for p in procs]
    for rc, out, err in results:
        assert rc == 0, err
        assert out.strip().count(".") == 2, "a JWT access token"
    counters = emulator.control("GET", "counters")
    assert counters.get("refresh_token_reuse_detected", 0) == 0
    later = cli.run("token", "--force-refresh", "--scope", scope)
    assert later.returncode == 0, later.stderr


# -- python -m nativeauth and the console script run the native command -------------------------------------------


def test_python_m_nativeauth_runs_the_native_command(cli: Cli, tmp_path: pathlib.Path) -> None:
    env = {**cli.env, "PYTHONPATH": str(SRC), "NATIVEAUTH_CLI": cli.command}
    probe = "import sys; sys.argv = ['nativeauth', '--version']; import _nativeauth_command; _nativeauth_command.main()"
    r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    version = r.stdout.strip()
    assert version == cli.run("--version").stdout.strip() and version.startswith("nativeauth ")
    r = subprocess.run([sys.executable, "-m", "nativeauth", "accounts", "--json"], env=env, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0 and json.loads(r.stdout) == {"accounts": []}, r.stderr  # the native command's answer
    # Never itself: with no native executable anywhere, a `nativeauth` script on the PATH is not run.
    script = tmp_path / "bin" / "nativeauth"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\necho recursion\n")
    script.chmod(0o755)
    lonely = {**env, "PATH": str(script.parent)}
    del lonely["NATIVEAUTH_CLI"]
    r = subprocess.run([sys.executable, "-m", "nativeauth", "--version"], env=lonely, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 127 and "recursion" not in r.stdout and "not installed" in r.stderr


def test_sign_up_in_a_terminal_with_code_password_and_attributes(cli: Cli, emulator: Emulator) -> None:
    email = "cli.newcomer@contoso.com"
    child, transcript = cli.spawn("signup", "-s", todo_scope(emulator), "--attribute", "city=Oslo")
    child.expect("Username: ")
    child.sendline(email)
    child.expect("A one-time code was sent")
    child.expect("Code: ")
    code = emulator.last_code(email)
    child.sendline(code)
    child.expect("New password: ")
    child.sendline("Brand-New-Passw0rd!")
    child.expect("Repeat the password: ")
    child.sendline("Brand-New-Passw0rd?")  # a typo: asked again
    child.expect("The two passwords differ")
    child.expect("New password: ")
    child.sendline("short")  # refused by the server's policy: the flow lives on
    child.expect("Repeat the password: ")
    child.sendline("short")
    child.expect("nativeauth: invalid_password: .*[Tt]ry again")
    child.expect("New password: ")
    child.sendline("Brand-New-Passw0rd!")
    child.expect("Repeat the password: ")
    child.sendline("Brand-New-Passw0rd!")
    child.expect("displayName: ")  # the demo tenant requires it; city was given up front
    child.sendline("New \x1b[31mComer")
    child.expect(f"Signed up and signed in as {re.escape(email)}")
    assert finish(child) == 0
    text = transcript.getvalue()
    assert "Signed up.\r\n" not in text  # one line says both
    assert "Brand-New-Passw0rd" not in text and code not in text
    assert cli.run("accounts").stdout.split()[0] == email
    assert cli.run("token", "-s", todo_scope(emulator)).returncode == 0
    # The account exists with its attributes: a second sign-up is refused; the password signs in.
    again = cli.run("signup", "-u", email)
    assert again.returncode == 6 and "user_already_exists" in again.stderr
    r = cli.run("login", "-u", email, "--password-stdin", "-s", todo_scope(emulator), input="Brand-New-Passw0rd!\n")
    assert r.returncode == 0, r.stderr
