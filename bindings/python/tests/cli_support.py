"""What the tests of the native `nativeauth` command share (test_cli.py, test_credential_helpers.py, …): the command's
path ($NATIVEAUTH_CLI, else the release build), `Cli` (runs it with a private environment: HOME, XDG_CONFIG_HOME and
XDG_CACHE_HOME under the test's tmp_path, a plaintext token cache, the emulator's authority and client id), the `cli`
fixture, a closed port and the demo API's scope."""
from __future__ import annotations

import io
import os
import pathlib
import signal
import socket
import subprocess
from typing import Any, Dict, Optional, Tuple

import pytest

from emulator_protocol import Emulator

pexpect = pytest.importorskip("pexpect")

SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
ROOT = SRC.parents[2]


def native_command() -> str:
    path = os.environ.get("NATIVEAUTH_CLI") or str(ROOT / ".build" / "release" / "nativeauth-cli")
    if not os.access(path, os.X_OK):
        pytest.fail(f"the nativeauth command is not built: {path} (make cli)")
    return path

class Cli:
    """Runs the nativeauth command with a private environment."""

    def __init__(self, tmp_path: pathlib.Path, emulator: Optional[Emulator] = None) -> None:
        self.tmp = tmp_path
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("NATIVEAUTH_", "XDG_", "BROWSER", "PAGE_BROWSER"))}
        for keep in ("NATIVEAUTH_LIBRARY", "NATIVEAUTH_EMULATOR"):
            if keep in os.environ:
                env[keep] = os.environ[keep]
        env["PYTHONPATH"] = os.pathsep.join([str(SRC)] + ([os.environ["PYTHONPATH"]] if "PYTHONPATH" in os.environ
                                                          else []))
        env["HOME"] = str(tmp_path / "home")
        env["XDG_CONFIG_HOME"] = str(tmp_path / "config")
        env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
        env["BROWSER"] = "false"  # never a real browser
        env["NATIVEAUTH_PLAINTEXT_CACHE"] = "1"  # (the machine's keyrings stay untouched)
        self.command = native_command()
        if emulator is not None:
            env["NATIVEAUTH_AUTHORITY"] = emulator.authority
            env["NATIVEAUTH_CLIENT_ID"] = emulator.client_id
        (tmp_path / "home").mkdir(exist_ok=True)
        self.env = env
        self.outputs: list[str] = []  # everything every command printed, for the secrets checks

    def run(self, *args: str, input: str | None = None, env: Optional[Dict[str, str]] = None,
            timeout: float = 60) -> "subprocess.CompletedProcess[str]":
        r = subprocess.run([self.command, *args], input=input, capture_output=True, text=True,
                           env={**self.env, **(env or {})}, timeout=timeout)
        self.outputs += [r.stdout, r.stderr]
        return r

    def spawn(self, *args: str, env: Optional[Dict[str, str]] = None) -> Tuple[Any, io.StringIO]:
        transcript = io.StringIO()
        # SIGINT back to its default: a test run started in the background (`pytest &`) inherits it ignored, and
        # Python then keeps ignoring Ctrl-C.
        child = pexpect.spawn(self.command, list(args), env={**self.env, **(env or {})},
                              encoding="utf-8", timeout=30, dimensions=(24, 200),
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        child.logfile_read = transcript
        return child, transcript


@pytest.fixture
def cli(tmp_path: pathlib.Path, emulator: Emulator) -> Cli:
    return Cli(tmp_path, emulator)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def todo_scope(emulator: Emulator, write: bool = False) -> str:
    scope: str = emulator.apis["ToDoList"]["scopes"][1 if write else 0]
    return scope
