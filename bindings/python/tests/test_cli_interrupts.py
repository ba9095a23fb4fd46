"""Ctrl-C while the command waits for a browser sign-in: the spinner says "Ctrl-C to stop", and docs/command-line.md
says Ctrl-C cancels the sign-in (exit 130). (The device code's wait is test_cli.py's.)"""
from __future__ import annotations

import pathlib
import socket
import time
from typing import Any

from cli_support import Cli, cli, pexpect  # noqa: F401
from emulator_protocol import Emulator


def finish(child: Any) -> int:
    child.expect(pexpect.EOF)
    child.close()
    status: int = child.exitstatus
    return status


def test_ctrl_c_while_waiting_for_the_system_browser(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """A browser was opened (a browser command that opens nothing, and succeeds) and the sign-in waits for its
    redirect, for up to an hour: Ctrl-C ends the wait at once — the command says so and exits 130 — and the
    sign-in's listener is gone. (Was: the blocking call could not be cancelled, and Ctrl-C waited for the whole timeout.)"""
    browser = tmp_path / "browser.sh"
    opened = tmp_path / "opened"
    browser.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}.tmp && mv {opened}.tmp {opened}\n")
    browser.chmod(0o700)
    child, transcript = cli.spawn("login", "--browser", "--timeout", "3600", env={"BROWSER": f"{browser} %s"})
    try:
        child.expect("Waiting for the sign-in in the browser")  # the spinner
        deadline = time.monotonic() + 30
        while not opened.exists() and time.monotonic() < deadline:  # the browser opened: the wait for it is on
            time.sleep(0.02)
        start_page = opened.read_text()
        assert start_page.startswith("http://"), start_page
        child.sendintr()
        child.expect("nativeauth: interrupted")
        assert finish(child) == 130, transcript.getvalue()
    finally:
        child.terminate(force=True)
    host, port = start_page.split("/")[2].rsplit(":", 1)
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", int(port))) != 0  # nobody listens there any more
    assert cli.run("accounts").stdout.strip() == ""  # nothing was signed in
