"""What the command line and the library say in the first hour (issue 29): messages that are true, one punctuation
mark where a message is composed, the answer (`--account`) where several accounts are signed in, a prompt ended
before the error that follows it, lock files said held only when they are, one line for a sign-up that signs in, the
port of a refused connection, and no escape sequence with NO_COLOR.

Every test has its own emulator (ephemeral port) and private HOME, XDG_CONFIG_HOME and XDG_CACHE_HOME (cli_support)."""
from __future__ import annotations

import fcntl
import json
import os
import pathlib
import re
from typing import Any

import pytest

from cli_support import Cli, cli, closed_port, todo_scope  # noqa: F401 (cli: the fixture)
from emulator_protocol import Emulator
from nativeauth import Client, InvalidArgumentError

pexpect = pytest.importorskip("pexpect")


def finish(child: Any) -> int:
    child.expect(pexpect.EOF)
    child.close()
    status: int = child.exitstatus
    return status


def depth(text: str) -> int:
    """How deep parentheses nest in `text`."""
    deepest = level = 0
    for c in text:
        level += {"(": 1, ")": -1}.get(c, 0)
        deepest = max(deepest, level)
    return deepest


def test_the_authority_error_names_exactly_the_hosts_plain_http_may_reach() -> None:
    with pytest.raises(InvalidArgumentError) as refused:
        Client("http://127.0.0.2:1/contoso.onmicrosoft.com", "00001111-aaaa-2222-bbbb-3333cccc4444")
    message = str(refused.value)
    named = re.search(r"loopback hosts (.+); use https", message)
    assert named, message
    hosts = re.split(r", | and ", named.group(1))
    assert hosts == ["localhost", "127.0.0.1", "[::1]"], message  # (not 127.0.0.0/8: 127.0.0.2 is refused)
    for host in hosts:  # each one it names is allowed
        Client(f"http://{host}:1/contoso.onmicrosoft.com", "00001111-aaaa-2222-bbbb-3333cccc4444").close()


def test_a_refused_code_and_try_again_make_one_sentence(cli: Cli, emulator: Emulator) -> None:
    olivia = emulator.users["otp"]
    child, transcript = cli.spawn("login", "-u", olivia["email"])
    child.expect("Code: ")
    code = emulator.last_code(olivia["email"])
    child.sendline("0" * len(code) if code != "0" * len(code) else "1" * len(code))
    child.expect("Code: ")
    child.sendline(code)
    assert finish(child) == 0
    refusal = re.search(r"nativeauth: invalid_code: ([^\r\n]*)", transcript.getvalue())
    assert refusal, transcript.getvalue()
    assert ".;" not in refusal.group(1) and re.search(r"(\. Try again\.|[^.]; try again)$", refusal.group(1)), \
        refusal.group(1)


def _sign_in_two(cli: Cli, emulator: Emulator) -> tuple[str, str]:
    ann, olivia = emulator.users["password"], emulator.users["otp"]
    r = cli.run("login", "-u", ann["email"], "--password-stdin", "-s", todo_scope(emulator),
                input=ann["password"] + "\n")
    assert r.returncode == 0, r.stderr
    child, _ = cli.spawn("login", "-u", olivia["email"], "-s", todo_scope(emulator))
    child.expect("Code: ")
    child.sendline(emulator.last_code(olivia["email"]))
    assert finish(child) == 0
    return ann["email"], olivia["email"]


def test_several_accounts_token_s_answer_is_account(cli: Cli, emulator: Emulator) -> None:
    ann, olivia = _sign_in_two(cli, emulator)
    scope = todo_scope(emulator)
    token = cli.run("token", "-s", scope)
    assert token.returncode == 3
    (line,) = token.stderr.splitlines()
    assert line.startswith("nativeauth: account_required: ") and "--account" in line, line
    assert ann in line and olivia in line and "nativeauth login" not in line and depth(line) <= 1, line
    by_environment = cli.run("token", "-s", scope, env={"NATIVEAUTH_ACCOUNT": ann})
    assert by_environment.returncode == 0, by_environment.stderr


def test_several_accounts_the_helpers_answer_is_account(cli: Cli, emulator: Emulator) -> None:
    ann, olivia = _sign_in_two(cli, emulator)
    scope = todo_scope(emulator)
    host = "dev.contoso.com"
    asked = f"protocol=https\nhost={host}\n\n"
    git = cli.run("git-credential", "--host", host, "-s", scope, "get", input=asked)
    assert git.returncode == 0 and git.stdout == "", git  # git goes on to ask its next helper
    assert "account_required" in git.stderr and "--account" in git.stderr, git.stderr
    assert "nativeauth login" not in git.stderr and depth(git.stderr) <= 1, git.stderr
    # The answer works: git-credential and kubectl-credential take --account.
    chosen = cli.run("git-credential", "--host", host, "-s", scope, "--account", olivia, "get", input=asked)
    assert chosen.returncode == 0 and f"username={olivia}\n" in chosen.stdout, chosen
    kube = cli.run("kubectl-credential", "-s", scope, "--account", ann)
    assert kube.returncode == 0 and json.loads(kube.stdout)["status"]["token"], kube


def test_a_prompt_at_the_end_of_the_input_ends_its_line(cli: Cli) -> None:
    r = cli.run("login", input="")
    assert r.returncode == 2
    assert r.stderr.splitlines()[0] == "Username: " and "Username: nativeauth" not in r.stderr, r.stderr
    assert re.search(r"^nativeauth: usage: ", r.stderr, re.M), r.stderr


def test_status_says_whether_a_lock_is_held(cli: Cli, emulator: Emulator) -> None:
    ann = emulator.users["password"]
    assert cli.run("login", "-u", ann["email"], "--password-stdin", input=ann["password"] + "\n").returncode == 0
    cache = pathlib.Path(cli.env["XDG_CACHE_HOME"]) / "nativeauth" / "token_cache.json"
    lock = pathlib.Path(str(cache) + ".refresh-lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # as a process refreshing a token holds it
        held = cli.run("status")
        held_json = json.loads(cli.run("status", "--json").stdout)
        fcntl.flock(fd, fcntl.LOCK_UN)
        free = cli.run("status")
        free_json = json.loads(cli.run("status", "--json").stdout)
    finally:
        os.close(fd)
    line = next(x for x in held.stdout.splitlines() if x.strip().startswith(f"lock file: {lock}"))
    assert "held now" in line, held.stdout
    line = next(x for x in free.stdout.splitlines() if x.strip().startswith(f"lock file: {lock}"))
    assert "present, not held" in line and "during a refresh" in line, free.stdout

    def state(doc: Any) -> Any:
        return next(x for x in doc["cache"]["lock_files"] if x["path"] == str(lock))
    assert state(held_json) == {"path": str(lock), "present": True, "held": True}
    assert state(free_json) == {"path": str(lock), "present": True, "held": False}


def test_a_refused_connection_names_host_and_port(cli: Cli) -> None:
    port = closed_port()
    r = cli.run("login", "-u", "ann@contoso.com", "--password-stdin", "--authority",
                f"http://127.0.0.1:{port}/contoso.onmicrosoft.com", input="x\n")
    assert r.returncode == 4, r.stderr
    assert f"127.0.0.1:{port}" in r.stderr, r.stderr


def _device_code_login(cli: Cli, emulator: Emulator, env: dict[str, str]) -> str:
    child, transcript = cli.spawn("login", "--device-code", env=env)
    child.expect(r"enter the code (\S+)")
    code = child.match.group(1)
    child.expect("Waiting for the sign-in on the other device")
    assert emulator.control("POST", "device/approve",
                            {"user_code": code, "email": emulator.users["password"]["email"]})["ok"]
    child.expect("Signed in as")
    assert finish(child) == 0
    return transcript.getvalue()


def test_no_escape_sequence_with_no_color(cli: Cli, emulator: Emulator) -> None:
    plain = _device_code_login(cli, emulator, {"NO_COLOR": "1", "TERM": "xterm-256color"})
    assert "\x1b" not in plain and "\r" not in plain.replace("\r\n", "\n"), repr(plain)
    assert "Waiting for the sign-in on the other device… (Ctrl-C to stop)" in plain
    # (An empty NO_COLOR is no NO_COLOR: the spinner draws, with its escape sequences.)
    assert "\x1b[K" in _device_code_login(cli, emulator, {"NO_COLOR": "", "TERM": "xterm-256color"})
    # TERM=dumb: no escape sequence either.
    assert "\x1b" not in _device_code_login(cli, emulator, {"NO_COLOR": "", "TERM": "dumb"})
