"""The cache file's refresh lock (`<cache>.refresh-lock`) is held from the refresh's lock step to its unlock step and
given back however the refresh ends: failed at any step, cancelled while waiting for it, or cancelled while the
background refresh of a started call holds it. Another process (here: another open file description, and another
client) can refresh right after; the thread that refreshed is not left marked as holding it (no reentrant_call)."""
from __future__ import annotations

import asyncio
import fcntl
import os
import pathlib
import threading
import time
from typing import Any, Callable, Dict, List, Optional

import pytest

import nativeauth as na
from emulator_protocol import Emulator
from nativeauth.aio import AsyncClient

TOKEN = "/oauth2/v2.0/token"


def lock_path(cache: pathlib.Path) -> str:
    return str(cache) + ".refresh-lock"


def lock_is_free(cache: pathlib.Path) -> bool:
    """Whether another open file description can take the lock now (flock locks are per open file description)."""
    fd = os.open(lock_path(cache), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def until(condition: Callable[[], bool], what: str, seconds: float = 30) -> None:
    """Waits for a condition (readiness polling, not a fixed delay)."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def refresh_grants(emulator: Emulator) -> int:
    return len([r for r in emulator.requests(TOKEN) if r["fields"].get("grant_type") == "refresh_token"])


def signed_in(emulator: Emulator, cache: pathlib.Path, **kwargs: Any) -> na.Client:
    ann = emulator.users["password"]
    client = na.Client(emulator.authority, emulator.client_id, cache_path=cache, **kwargs)
    assert isinstance(client.sign_in(ann["email"], ann["password"]), na.SignedIn)
    return client


def another_client_refreshes(emulator: Emulator, cache: pathlib.Path, scope: str) -> None:
    """A second client of the same file refreshes at once (a lock left held would end its wait with a timeout)."""
    with na.Client(emulator.authority, emulator.client_id, cache_path=cache, request_timeout_ms=3000) as other:
        before = refresh_grants(emulator)
        assert other.get_access_token([scope], force_refresh=True).access_token
        assert refresh_grants(emulator) == before + 1


def test_a_refresh_that_fails_at_each_step_gives_the_lock_back(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache.json"
    scope = emulator.apis["ToDoList"]["scopes"][0]
    with signed_in(emulator, cache, request_timeout_ms=1500) as client:
        failures: List[Dict[str, Any]] = [
            {"status": 500},  # the server answers an error
            {"drop": True},  # the connection closes without an answer
            {"status": 200, "body": "not json"},  # an answer that does not decode
            {"hold": True, "status": 503},  # no answer within the request timeout (the service never sees it)
        ]
        for fault in failures:
            # Answers before the service sees the request (its refresh token stays live); a resent try fails too.
            emulator.control("POST", "faults", {"path": TOKEN, "count": 5, **fault})
            with pytest.raises(na.NativeAuthError) as e:
                client.get_access_token([scope], force_refresh=True)
                pytest.fail(f"no error with {fault}")
            assert not isinstance(e.value, na.ReentrantCallError)
            emulator.control("POST", "faults/release")
            emulator.control("DELETE", "faults")
            assert lock_is_free(cache), f"the lock is still held after {fault}: {e.value.code}"
            # The same thread refreshes again: it is not taken for one still holding the lock.
            assert client.get_access_token([scope], force_refresh=True).access_token
            assert lock_is_free(cache)
        # A refused refresh token (dropped from the cache under the lock): interaction_required, the lock given back.
        emulator.control("POST", "token_errors", {"error": "invalid_grant", "grant_type": "refresh_token",
                                                  "count": 1})
        with pytest.raises(na.InteractionRequiredError):
            client.get_access_token([scope], force_refresh=True)
        assert lock_is_free(cache)
    # Signed in again, another client of the file refreshes right after.
    signed_in(emulator, cache).close()
    another_client_refreshes(emulator, cache, scope)


def test_a_refresh_waiting_for_another_process_gives_up_with_its_timeout(emulator: Emulator,
                                                                         tmp_path: pathlib.Path) -> None:
    """Another process holds the lock past the call's wait: timeout, nothing sent; the lock, once the other process
    lets it go, is taken by the next refresh at once."""
    cache = tmp_path / "cache.json"
    scope = emulator.apis["ToDoList"]["scopes"][0]
    with signed_in(emulator, cache, request_timeout_ms=500) as client:
        fd = os.open(lock_path(cache), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            before = refresh_grants(emulator)
            with pytest.raises(na.RequestTimeoutError):
                client.get_access_token([scope], force_refresh=True)
            assert refresh_grants(emulator) == before
        finally:
            os.close(fd)
        assert client.get_access_token([scope], force_refresh=True).access_token
        assert lock_is_free(cache)


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def test_a_started_call_cancelled_while_waiting_for_the_lock(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """A started call waiting for another process's refresh is cancelled: CancelledError; nothing is sent, and once
    that process lets the lock go, a new call refreshes (the cancelled one left nothing held)."""
    cache = tmp_path / "cache.json"
    scope = emulator.apis["ToDoList"]["scopes"][0]
    signed_in(emulator, cache).close()
    lines: List[str] = []

    def log(level: int, message: str, correlation_id: Optional[str]) -> None:
        lines.append(message)

    async def main() -> None:
        async with AsyncClient(emulator.authority, emulator.client_id, cache_path=cache, log_level="verbose",
                               log_handler=log, request_timeout_ms=20000) as client:
            fd = os.open(lock_path(cache), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                before = refresh_grants(emulator)
                task = asyncio.ensure_future(client.get_access_token([scope], force_refresh=True))
                while not any("waiting for another process" in line for line in lines):
                    await asyncio.sleep(0.01)
                task.cancel()
                with pytest.raises((asyncio.CancelledError, na.CancelledError)):
                    await task
            finally:
                os.close(fd)
            token = await client.get_access_token([scope], force_refresh=True)
            assert token.access_token
            assert refresh_grants(emulator) == before + 1

    run(main())
    until(lambda: lock_is_free(cache), "the lock to be free")


def test_a_started_call_cancelled_while_its_refresh_holds_the_lock(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """Cancelled while its refresh is on the wire: the call answers at once, the background refresh keeps the lock
    until its answer is stored (another process could otherwise present the same refresh token), then gives it
    back."""
    cache = tmp_path / "cache.json"
    scope = emulator.apis["ToDoList"]["scopes"][0]
    signed_in(emulator, cache).close()
    finished = threading.Event()

    def log(level: int, message: str, correlation_id: Optional[str]) -> None:
        if "refresh of a cancelled call" in message:
            finished.set()

    async def main() -> None:
        async with AsyncClient(emulator.authority, emulator.client_id, cache_path=cache, log_level="info",
                               log_handler=log, request_timeout_ms=20000) as client:
            emulator.control("POST", "faults", {"path": TOKEN, "hold": True, "stage": "after"})
            task = asyncio.ensure_future(client.get_access_token([scope], force_refresh=True))
            while emulator.control("GET", "faults").get("held", 0) < 1:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises((asyncio.CancelledError, na.CancelledError)):
                await task
            assert not lock_is_free(cache), "the lock was given back while the refresh was on the wire"
            emulator.control("POST", "faults/release")
            while not finished.is_set():
                await asyncio.sleep(0.01)
            assert lock_is_free(cache)
            grants = refresh_grants(emulator)
            # The refreshed token was kept: served from the cache, no new grant.
            assert (await client.get_access_token([scope])).access_token
            assert refresh_grants(emulator) == grants

    run(main())
    another_client_refreshes(emulator, cache, scope)
