"""`nativeauth login --no-browser` with stdin a pipe whose writer stalls in the middle of a line (as a terminal's
Ctrl-D in mid-line does): the command keeps its deadline and Ctrl-C still ends it. (Was: the pasted line was read
with a blocking read of the whole line, so the wait never looked at its deadline, its listener or Ctrl-C again — the
command hung for good.)"""
from __future__ import annotations

import array
import re
import fcntl
import signal
import subprocess
import termios
import time
from typing import Any

from browser_support import redirect_from_another_device
from cli_support import Cli, cli, pexpect, todo_scope  # noqa: F401
from emulator_protocol import Emulator


def reading_stdin(cli: Cli, *args: str) -> "subprocess.Popen[str]":
    """The command in paste-back, its stdin a pipe this test holds open, once it says it reads the address."""
    proc = subprocess.Popen([cli.command, "login", "--no-browser", *args], env=cli.env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stderr is not None
    head = ""
    while "Reading that address" not in head:
        line = proc.stderr.readline()
        assert line, "the command ended without asking for the address: " + head
        head += line
    proc.stdin.write("http://localhost")  # half an address, no end of line, and the pipe stays open
    proc.stdin.flush()
    deadline = time.monotonic() + 30
    while unread(proc.stdin.fileno()) and time.monotonic() < deadline:  # until the command took it
        time.sleep(0.01)
    return proc


def unread(fd: int) -> int:
    """Bytes in the pipe not read yet (FIONREAD works on either end of a Linux pipe)."""
    count = array.array("i", [0])
    fcntl.ioctl(fd, termios.FIONREAD, count)
    return count[0]


def ended(proc: "subprocess.Popen[str]") -> int:
    try:
        code = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the command hung on half a line of stdin")
    return code


def test_half_a_line_on_stdin_does_not_outlive_the_timeout(cli: Cli, emulator: Emulator) -> None:
    proc = reading_stdin(cli, "--timeout", "3")
    try:
        assert ended(proc) != 0
        assert proc.stderr is not None and "did not finish in time" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_ctrl_c_ends_the_wait_for_the_rest_of_a_line(cli: Cli, emulator: Emulator) -> None:
    proc = reading_stdin(cli, "--timeout", "3600")
    try:
        proc.send_signal(signal.SIGINT)
        assert ended(proc) == 130, proc.stderr.read() if proc.stderr else ""
    finally:
        if proc.poll() is None:
            proc.kill()


def test_an_address_without_its_state_can_be_pasted_again(cli: Cli, emulator: Emulator) -> None:
    """A copy that lost its end (the state is the last parameter) is caught before the library sees it — which would
    end the sign-in on a state that does not match — and the whole address then completes it."""
    ann = emulator.users["password"]
    child: Any
    child, transcript = cli.spawn("login", "--no-browser", "--scope", todo_scope(emulator))
    child.expect(r"open this address in a browser on any device:\s+(https?://\S+)")
    url = child.match.group(1)
    child.expect("Address: ")
    address = redirect_from_another_device(url, ann["email"], ann["password"])
    child.sendline(re.sub(r"[&?]state=[^&#]*", "", address))
    child.expect("carries no state.*paste it again")
    child.sendline(address)
    child.expect(f"Signed in as {re.escape(ann['email'])}")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, transcript.getvalue()


def test_ctrl_c_while_the_pasted_code_is_redeemed(cli: Cli, emulator: Emulator) -> None:
    """The token endpoint holds its answer to the code's redemption; Ctrl-C then ends the command with 130, as it
    does during the wait for the address (was: 1, the cancelled flow's "cancelled")."""
    ann = emulator.users["password"]
    proc = subprocess.Popen([cli.command, "login", "--no-browser", "--timeout", "3600"], env=cli.env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdin is not None and proc.stderr is not None
    try:
        url, head = "", ""
        while "Reading that address" not in head:
            line = proc.stderr.readline()
            assert line, "the command ended without showing an address: " + head
            head += line
            found = re.search(r"https?://\S+", line)
            url = found.group(0) if found and "authorize" in line else url
        address = redirect_from_another_device(url, ann["email"], ann["password"])
        emulator.control("POST", "faults", {"path": "/oauth2/v2.0/token", "hold": True})
        proc.stdin.write(address + "\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while emulator.control("GET", "faults").get("held", 0) == 0:  # the redemption is under way
            assert time.monotonic() < deadline, "the code was not redeemed"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        assert ended(proc) == 130, proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
        emulator.control("POST", "faults/release")
        emulator.control("DELETE", "faults")
