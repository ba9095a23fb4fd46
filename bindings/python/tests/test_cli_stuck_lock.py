"""The cache file's write lock (`<path>.lockfile`) held by a process that stopped (SIGSTOP, a debugger, a frozen
container) while a refresh is due: the room for the refresh's answer cannot be reserved, so the refresh is refused
(`cache_write_failed`) before the refresh token is sent — as with a full disk — and nothing is lost: once the holder is
gone, the next refresh works, with no refresh token presented twice (the emulator rotates them and detects reuse)."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from typing import Iterator

from cli_support import Cli, cli, todo_scope  # noqa: F401 (cli: the fixture)
from emulator_protocol import Emulator

TOKEN = "/oauth2/v2.0/token"

HOLDER = ("import fcntl, os, signal, sys\n"
          "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)\n"
          "fcntl.flock(fd, fcntl.LOCK_EX)\n"
          "os.kill(os.getpid(), signal.SIGSTOP)\n")


def refresh_grants(emulator: Emulator) -> int:
    return len([r for r in emulator.requests(TOKEN) if r["fields"].get("grant_type") == "refresh_token"])


@contextlib.contextmanager
def stopped_holder(lock_file: str) -> Iterator[None]:
    """A process holding `lock_file`'s flock, stopped, for the duration."""
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, lock_file])
    _, status = os.waitpid(holder.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), status
    try:
        yield
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


def test_a_stopped_lock_holder_refuses_the_refresh_before_it_is_sent(cli: Cli, emulator: Emulator) -> None:
    scope = todo_scope(emulator)
    r = cli.run("login", "-u", "ann@contoso.com", "--password-stdin", "-s", scope, input="Demo-Passw0rd!\n")
    assert r.returncode == 0, r.stderr
    before = refresh_grants(emulator)
    path = os.path.join(cli.env["XDG_CACHE_HOME"], "nativeauth", "token_cache.json")
    with stopped_holder(path + ".lockfile"):
        r = cli.run("token", "--force-refresh", "--json", "--scope", scope, timeout=120)
    assert r.returncode == 7, (r.returncode, r.stdout, r.stderr)
    error = json.loads(r.stdout)["error"]
    assert error["code"] == "cache_write_failed", error
    assert "not sent" in error["message"], error
    assert refresh_grants(emulator) == before, "a refresh was sent although its tokens could not be stored"
    later = cli.run("token", "--force-refresh", "--scope", scope)
    assert later.returncode == 0, later.stderr
    assert emulator.control("GET", "counters").get("refresh_token_reuse_detected", 0) == 0
