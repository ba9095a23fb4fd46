"""A full disk during a refresh (issue 28, defect 12): `nativeauth token --force-refresh`, and a long-running host,
with the cache file's system calls failing with ENOSPC (strace's fault injection) against the emulator, which
rotates refresh tokens and detects their reuse.

- The disk is full before the refresh: the room for the new tokens is reserved (a pre-allocated temporary file)
  before the refresh token is sent, so the refresh is refused (`cache_write_failed`), nothing is sent, and the next
  refresh works.
- The write fails after the server answered (fsync, rename, the write itself): the error says the sign-in may need
  renewing; a long-running host keeps the new tokens in memory, its next call works, and the tokens are written at
  the next chance (a new process is then still signed in).

strace counts a system call's invocations per thread: `when=1` fails the first one of each thread."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from typing import List

import pytest

from cli_support import Cli, cli, todo_scope  # noqa: F401 (cli: the fixture)
from emulator_protocol import Emulator

TOKEN = "/oauth2/v2.0/token"
STRACE = shutil.which("strace")


def _injection_works() -> bool:
    if STRACE is None:
        return False
    probe = subprocess.run([STRACE, "-f", "-qq", "-o", "/dev/null", "-e", "trace=fsync", "-e",
                            "inject=fsync:error=ENOSPC", sys.executable, "-c",
                            "import os, tempfile\nwith tempfile.TemporaryFile() as f:\n"
                            "    try:\n        os.fsync(f.fileno())\n    except OSError as e:\n"
                            "        raise SystemExit(0 if e.errno == 28 else 1)\nraise SystemExit(1)"],
                           capture_output=True, timeout=60)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _injection_works(),
                                reason="strace's fault injection (-e inject=…:error=ENOSPC) is not available here")


def strace(syscalls: str, when: str = "") -> List[str]:
    """The strace prefix failing `syscalls` (comma-separated) with ENOSPC (`when`: which invocations)."""
    assert STRACE is not None
    inject = f"inject={syscalls}:error=ENOSPC" + (f":when={when}" if when else "")
    return [STRACE, "-f", "-qq", "-o", "/dev/null", "-e", f"trace={syscalls}", "-e", inject]


def refresh_grants(emulator: Emulator) -> int:
    return len([r for r in emulator.requests(TOKEN) if r["fields"].get("grant_type") == "refresh_token"])


def login(cli: Cli, scope: str) -> None:
    r = cli.run("login", "-u", "ann@contoso.com", "--password-stdin", "-s", scope, input="Demo-Passw0rd!\n")
    assert r.returncode == 0, r.stderr


def forced_refresh(cli: Cli, scope: str, prefix: List[str]) -> "subprocess.CompletedProcess[str]":
    r = subprocess.run(prefix + [cli.command, "token", "--force-refresh", "--json", "--scope", scope],
                       capture_output=True, text=True, env=cli.env, timeout=120)
    cli.outputs += [r.stdout, r.stderr]
    return r


def test_full_disk_before_the_refresh_refuses_it_and_loses_nothing(cli: Cli, emulator: Emulator) -> None:
    scope = todo_scope(emulator)
    login(cli, scope)
    before = refresh_grants(emulator)
    r = forced_refresh(cli, scope, strace("fallocate"))
    assert r.returncode == 7, (r.returncode, r.stdout, r.stderr)
    error = json.loads(r.stdout)["error"]
    assert error["code"] == "cache_write_failed"
    assert "not sent" in error["message"] and "disk is full" in error["message"], error
    assert refresh_grants(emulator) == before, "a refresh was sent although its tokens could not be stored"
    later = cli.run("token", "--force-refresh", "--scope", scope)
    assert later.returncode == 0, later.stderr
    assert emulator.control("GET", "counters").get("refresh_token_reuse_detected", 0) == 0


@pytest.mark.parametrize("syscalls", ["fsync", "rename,renameat,renameat2", "write,writev,pwrite64,pwritev"])
def test_full_disk_after_the_refresh_says_the_sign_in_may_need_renewing(cli: Cli, emulator: Emulator,
                                                                         syscalls: str) -> None:
    scope = todo_scope(emulator)
    login(cli, scope)
    before = refresh_grants(emulator)
    r = forced_refresh(cli, scope, strace(syscalls, when="1"))
    assert refresh_grants(emulator) == before + 1
    assert r.returncode == 7, (r.returncode, r.stdout, r.stderr)
    error = json.loads(r.stdout)["error"]
    assert error["code"] == "cache_write_failed" and "disk is full" in error["message"], error
    assert "may need renewing" in error["message"], error


HOST = textwrap.dedent("""
    import json, sys
    import nativeauth as na
    authority, client_id, path, scope = sys.argv[1:5]
    out = []
    with na.Client(authority, client_id, cache_path=path) as client:
        try:
            client.get_access_token([scope], force_refresh=True)
            out.append("stored")
        except na.CacheWriteFailedError as e:
            out.append(str(e))
        out.append(client.get_access_token([scope]).from_cache)   # the new token, from memory
        client.get_access_token([scope], force_refresh=True)      # refreshes with the new refresh token, and writes
        out.append("written")
    print(json.dumps(out))
""")


def test_a_long_running_host_keeps_the_tokens_and_writes_them_at_the_next_chance(cli: Cli,
                                                                                 emulator: Emulator) -> None:
    scope = todo_scope(emulator)
    login(cli, scope)
    path = os.path.join(cli.env["XDG_CACHE_HOME"], "nativeauth", "token_cache.json")
    r = subprocess.run(strace("fsync", when="1") + [sys.executable, "-c", HOST, emulator.authority, emulator.client_id,
                                                    path, scope],
                       capture_output=True, text=True, env=cli.env, timeout=120)
    assert r.returncode == 0, r.stderr
    first, from_cache, written = json.loads(r.stdout.strip().splitlines()[-1])
    assert "may need renewing" in first and "disk is full" in first, first
    assert from_cache is True and written == "written"
    # Another process reads what the host wrote at its next chance: still signed in.
    later = cli.run("token", "--force-refresh", "--scope", scope)
    assert later.returncode == 0, later.stderr
    assert emulator.control("GET", "counters").get("refresh_token_reuse_detected", 0) == 0
