"""Many processes share one sign-in through one cache file, against the emulator with refresh-token reuse detection on
(its default): refreshes are serialised across processes, a refused refresh token is dropped only if it is still the
one in the file, and a sign-out in one process reaches the others within a second (issue 18)."""
from __future__ import annotations

import json
import os
import pathlib
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import nativeauth as na
from emulator_protocol import Emulator

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"
WORKER = str(pathlib.Path(__file__).with_name("shared_cache_worker.py"))


class Worker:
    """A worker process (shared_cache_worker.py) and the JSON lines it printed."""

    def __init__(self, config: Dict[str, Any]) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pathlib.Path(na.__file__).parents[1]),
                                                           env.get("PYTHONPATH")]))
        self.proc = subprocess.Popen([sys.executable, WORKER, json.dumps(config)], stdout=subprocess.PIPE,  # noqa: S603
                                     stderr=subprocess.PIPE, env=env, text=True, bufsize=1)
        self.lines: List[Dict[str, Any]] = []

    def next_line(self, timeout: float = 60) -> Dict[str, Any]:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            self.proc.kill()
            raise AssertionError(f"the worker printed nothing within {timeout} s")
        line = self.proc.stdout.readline()
        assert line, "worker ended early: " + (self.proc.stderr.read() if self.proc.stderr else "")
        doc: Dict[str, Any] = json.loads(line)
        self.lines.append(doc)
        return doc

    def finish(self, timeout: float = 120) -> List[Dict[str, Any]]:
        out, err = self.proc.communicate(timeout=timeout)
        self.lines += [json.loads(line) for line in out.splitlines() if line.strip()]
        assert self.proc.returncode in (0, -signal.SIGKILL), err
        return self.lines


def counters(emulator: Emulator) -> Dict[str, int]:
    return {k: int(v) for k, v in emulator.control("GET", "counters").items()}


def signed_in_file(emulator: Emulator, path: pathlib.Path, scope: str) -> None:
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as c:
        state = c.sign_in(ANN, ANN_PW, scopes=[scope])
        assert isinstance(state, na.SignedIn)


def run_workers(emulator: Emulator, tmp: pathlib.Path, path: pathlib.Path, scope: str, *, processes: int,
                threads: int, calls: int, force_refresh: bool, kill_one: str = "") -> List[Dict[str, Any]]:
    """Runs the workers; `kill_one`: "" (nobody), "holding-lock" (one stalls in its first refresh, holding the
    refresh lock, and is killed there), or "anywhere" (one is killed after a few calls, wherever it then is)."""
    go = tmp / f"go-{time.monotonic_ns()}"

    def config(stall: bool) -> Dict[str, Any]:
        # The staller starts alone (its own go file), so its first forced call is a refresh of its own.
        return {"authority": emulator.authority, "client_id": emulator.client_id, "cache_path": str(path),
                "scope": scope, "threads": threads, "calls": calls, "force_refresh": force_refresh,
                "go": str(go) + ("-staller" if stall else ""), "stall_on_refresh": stall}

    workers = [Worker(config(kill_one == "holding-lock" and i == 0)) for i in range(processes)]
    for w in workers:
        assert w.next_line() == {"ready": True}
    killed: Optional[Worker] = None
    if kill_one == "holding-lock":
        killed = workers[0]
        Path(str(go) + "-staller").touch()
        assert killed.next_line() == {"stalled": True}
        go.touch()  # the others start while it holds the lock
        killed.proc.send_signal(signal.SIGKILL)
    else:
        go.touch()
    if kill_one == "anywhere":
        killed = workers[len(workers) // 2]
        for _ in range(3):  # in the middle of its refreshes: after it finished a few calls
            assert killed.next_line().get("ok") is True
        killed.proc.send_signal(signal.SIGKILL)
    results: List[Dict[str, Any]] = []
    for w in workers:
        lines = w.finish()
        if w is not killed:
            assert {"done": True} in lines
        results += [line for line in lines if "ok" in line]
    return results


def test_processes_and_threads_refreshing_one_account_never_lose_it(emulator: Emulator,
                                                                      tmp_path: pathlib.Path) -> None:
    scope = emulator.apis["ToDoList"]["scopes"][0]
    path = tmp_path / "cache.json"
    signed_in_file(emulator, path, scope)
    before = counters(emulator)

    # Every call forces a refresh: 8 processes x 4 threads.
    results = run_workers(emulator, tmp_path, path, scope, processes=8, threads=4, calls=3, force_refresh=True)
    assert len(results) == 8 * 4 * 3
    assert [r for r in results if not r["ok"]] == []

    # Across expiry: tokens the emulator issues for 5 minutes or less are never served from a cache (MSAL's
    # 5-minute buffer), so every call needs a refresh; and the emulator's clock moves on (older refresh tokens age).
    emulator.control("POST", "clock", {"advance_seconds": 7200})
    emulator.control("POST", "settings", {"access_token_lifetime": 300})
    results = run_workers(emulator, tmp_path, path, scope, processes=8, threads=4, calls=3, force_refresh=False)
    assert [r for r in results if not r["ok"]] == []

    after = counters(emulator)
    assert after.get("refresh_token_reuse_detected", 0) == 0
    assert after.get("refresh_grants", 0) > before.get("refresh_grants", 0)
    emulator.control("POST", "settings", {"access_token_lifetime": 3600})
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as c:
        assert c.account is not None
        assert c.get_access_token([scope]).access_token


def test_a_process_killed_holding_the_refresh_lock(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """Killed (SIGKILL) while it holds the refresh lock, before its request went out: the lock dies with it, the
    others go on, every call succeeds, and the file parses."""
    scope = emulator.apis["ToDoList"]["scopes"][0]
    path = tmp_path / "cache.json"
    signed_in_file(emulator, path, scope)
    results = run_workers(emulator, tmp_path, path, scope, processes=4, threads=3, calls=8, force_refresh=True,
                          kill_one="holding-lock")
    assert len(results) == 3 * 3 * 8  # the killed one finished none
    assert [r for r in results if not r["ok"]] == []
    json.loads(path.read_text())  # the file parses
    assert counters(emulator).get("refresh_token_reuse_detected", 0) == 0
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as c:
        assert c.get_access_token([scope], force_refresh=True).access_token


def test_a_process_killed_anywhere_in_its_refreshes(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """Killed wherever it is after a few calls: the others go on to the end (nothing waits for the dead process) and
    the file parses. When the kill lands after the server rotated the refresh token but before the process wrote the
    new one, that token died with it: a server with reuse detection then revokes the sign-in when the old one is
    presented next (SECURITY.md). The others' calls then fail with interaction_required, never anything else."""
    scope = emulator.apis["ToDoList"]["scopes"][0]
    path = tmp_path / "cache.json"
    signed_in_file(emulator, path, scope)
    results = run_workers(emulator, tmp_path, path, scope, processes=4, threads=3, calls=8, force_refresh=True,
                          kill_one="anywhere")
    json.loads(path.read_text())  # the file parses
    failures = [r for r in results if not r["ok"]]
    if counters(emulator).get("refresh_token_reuse_detected", 0) == 0:
        assert failures == []
    else:
        assert {r["code"] for r in failures} == {"interaction_required"}


def test_a_sign_out_in_one_process_reaches_another_within_a_second(emulator: Emulator,
                                                                     tmp_path: pathlib.Path) -> None:
    scope = emulator.apis["ToDoList"]["scopes"][0]
    path = tmp_path / "cache.json"
    signed_in_file(emulator, path, scope)
    watcher = Worker({"authority": emulator.authority, "client_id": emulator.client_id, "cache_path": str(path),
                      "scope": scope, "threads": 1, "calls": 0, "force_refresh": False, "go": "",
                      "watch_sign_out": True})
    assert watcher.next_line() == {"ready": True}  # served from the cache, and asking again and again
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as c:
        assert c.sign_out() is True
        signed_out = time.monotonic()
    seen = watcher.next_line(timeout=10)
    watcher.finish()
    # The watcher looks at the file at most once a second; the slack is for scheduling on a busy machine.
    assert seen["signed_out_at"] - signed_out < 1.5, seen
