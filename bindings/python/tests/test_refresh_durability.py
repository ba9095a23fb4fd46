"""A cancelled refresh keeps the sign-in (issue 28, defect 10). The emulator rotates refresh tokens and detects their
reuse (a redeemed one presented again revokes the family): a refresh that reached the server must have its answer
stored, even when the started call that sent it is cancelled (na_op_cancel, through ``nativeauth.aio``) — the call
still ends ``cancelled`` at once, the refresh is finished in the background, other calls waiting for it get its
result, and ``na_client_free`` waits for it.

The server holds its answer (a fault with ``"hold": true``, released by ``POST /_emulator/faults/release``) for as
long as a test needs: no guessed delays."""
from __future__ import annotations

import asyncio
import pathlib
import threading
import time
from typing import Any, Callable, List, Optional, Tuple

import pytest

import nativeauth as na
from emulator_protocol import Emulator
from nativeauth.aio import AsyncClient

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"
TOKEN = "/oauth2/v2.0/token"


def make(emulator: Emulator, **kwargs: Any) -> AsyncClient:
    return AsyncClient(emulator.authority, emulator.client_id, **kwargs)


def scope(emulator: Emulator, api: str) -> str:
    s: str = emulator.apis[api]["scopes"][0]
    return s


def held(emulator: Emulator) -> int:
    n: int = emulator.control("GET", "faults").get("held", 0)
    return n


def hold_next_token_answer(emulator: Emulator) -> None:
    """The next token request is handled (its refresh token redeemed, a new one issued) and its answer held."""
    emulator.control("POST", "faults", {"path": TOKEN, "stage": "after", "hold": True})


def refresh_grants(emulator: Emulator) -> int:
    return len([r for r in emulator.requests(TOKEN) if r["fields"].get("grant_type") == "refresh_token"])


def no_reuse(emulator: Emulator) -> bool:
    reused: int = emulator.control("GET", "counters").get("refresh_token_reuse_detected", 0)
    return reused == 0


async def until(condition: Callable[[], bool], seconds: float = 20.0) -> None:
    """Polls ``condition`` on the loop until it holds; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


class Lines:
    """A log handler that keeps the lines, and whether any came after ``closed`` was set."""

    def __init__(self) -> None:
        self.lines: List[str] = []
        self.closed = False
        self.after_close: List[str] = []
        self._lock = threading.Lock()

    def __call__(self, level: int, message: str, correlation_id: Optional[str]) -> None:
        with self._lock:
            self.lines.append(message)
            if self.closed:
                self.after_close.append(message)

    def saw(self, text: str) -> bool:
        with self._lock:
            return any(text in line for line in self.lines)


def test_a_forced_refresh_cancelled_on_the_wire_is_finished_and_kept(emulator: Emulator) -> None:
    """Cancelled while the server holds the answer of a refresh it already made: the call ends ``cancelled`` before
    the answer is released; once it is, the next forced refreshes work (the first may share the finishing refresh,
    or be served the token it stored after this call began — new either way, if not from the wire; the second is a
    grant of its own with the stored, rotated refresh token)."""
    todo = scope(emulator, "ToDoList")

    async def main() -> Tuple[int, na.AccessToken]:
        async with make(emulator) as client:
            assert isinstance(await client.sign_in(ANN, ANN_PW, scopes=[todo]), na.SignedIn)
            signed_in = (await client.get_access_token([todo])).access_token
            hold_next_token_answer(emulator)
            task = asyncio.ensure_future(client.get_access_token([todo], force_refresh=True))
            await until(lambda: held(emulator) == 1)  # the server redeemed the refresh token; its answer waits
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            still_held = held(emulator)  # the call ended without waiting for the answer
            emulator.control("POST", "faults/release")
            assert (await client.get_access_token([todo], force_refresh=True)).access_token != signed_in
            return still_held, await client.get_access_token([todo], force_refresh=True)

    still_held, token = asyncio.run(main())
    assert still_held == 1
    assert not token.from_cache and todo in token.scopes
    assert no_reuse(emulator)
    assert refresh_grants(emulator) >= 2


def test_calls_waiting_for_a_cancelled_calls_refresh_get_its_result(emulator: Emulator) -> None:
    """Another call for the same token waits for the refresh a cancelled call sent, and gets its token: one refresh
    grant, no reuse."""
    notes = scope(emulator, "Notes")

    async def main() -> na.AccessToken:
        async with make(emulator) as client:
            assert isinstance(await client.sign_in(ANN, ANN_PW, scopes=[scope(emulator, "ToDoList")]), na.SignedIn)
            hold_next_token_answer(emulator)
            first = asyncio.ensure_future(client.get_access_token([notes]))
            await until(lambda: held(emulator) == 1)
            second = asyncio.ensure_future(client.get_access_token([notes]))
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first
            emulator.control("POST", "faults/release")
            return await second

    token = asyncio.run(main())
    assert notes in token.scopes
    assert refresh_grants(emulator) == 1
    assert no_reuse(emulator)


def test_freeing_the_client_waits_for_the_refresh_it_finishes(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """na_client_free while a cancelled call's refresh is finishing: it returns once the refresh was stored (in the
    cache file: another client's forced refresh then works), and no log line reaches the host after it returned."""
    todo = scope(emulator, "ToDoList")
    cache = tmp_path / "cache.json"
    lines = Lines()

    async def main() -> None:
        client = make(emulator, cache_path=str(cache), log_level="verbose", log_handler=lines)
        assert isinstance(await client.sign_in(ANN, ANN_PW, scopes=[todo]), na.SignedIn)
        hold_next_token_answer(emulator)
        task = asyncio.ensure_future(client.get_access_token([todo], force_refresh=True))
        await until(lambda: held(emulator) == 1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        freeing = threading.Event()
        releaser = threading.Thread(target=lambda: (freeing.wait(30), emulator.control("POST", "faults/release")))
        releaser.start()
        freeing.set()
        await client.aclose()  # na_client_free: waits (the loop with it) until the refresh was stored
        lines.closed = True
        releaser.join()

    asyncio.run(main())
    assert lines.after_close == []
    with na.Client(emulator.authority, emulator.client_id, cache_path=str(cache)) as other:
        assert not other.get_access_token([todo], force_refresh=True).from_cache
    assert no_reuse(emulator)


def test_a_refresh_cancelled_before_it_was_sent_leaves_the_waiting_call_its_own(emulator: Emulator,
                                                                               tmp_path: pathlib.Path) -> None:
    """A started refresh waiting for another process's refresh (the cache file's refresh lock) is cancelled before it
    sent anything: the call of the same client waiting for that refresh is not cancelled with it — it refreshes
    itself once the lock is free."""
    todo, notes = scope(emulator, "ToDoList"), scope(emulator, "Notes")
    cache = str(tmp_path / "cache.json")
    lines = Lines()

    async def main() -> na.AccessToken:
        async with make(emulator, cache_path=cache) as other, \
                make(emulator, cache_path=cache, log_level="verbose", log_handler=lines) as client:
            assert isinstance(await other.sign_in(ANN, ANN_PW, scopes=[todo]), na.SignedIn)
            hold_next_token_answer(emulator)
            holder = asyncio.ensure_future(other.get_access_token([todo], force_refresh=True))
            await until(lambda: held(emulator) == 1)  # `other` holds the refresh lock while the answer is held
            first = asyncio.ensure_future(client.get_access_token([notes]))
            await until(lambda: lines.saw("waiting for another process's token refresh"))
            second = asyncio.ensure_future(client.get_access_token([notes]))
            await until(lambda: lines.saw("waiting for a token refresh another call is making"))
            first.cancel()
            with pytest.raises(asyncio.CancelledError):
                await first
            assert not second.done()
            emulator.control("POST", "faults/release")
            assert not (await holder).from_cache
            return await second

    token = asyncio.run(main())
    assert notes in token.scopes and not token.from_cache
    assert no_reuse(emulator)
