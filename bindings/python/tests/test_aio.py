"""nativeauth.aio against the emulator: concurrency on one event loop that never stalls, cancellation (which cancels
the library's operation and waits for its done), the async flow states, errors, closing, the event-loop rule."""
from __future__ import annotations

import asyncio
import dataclasses
import gc
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.parse
from typing import Any, Awaitable, Callable, Coroutine, Dict, List, Optional, Tuple, Type, TypeVar

import pytest

import nativeauth as na
from emulator_protocol import Emulator
from nativeauth import _native, aio, states
from nativeauth.aio import AsyncClient

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"
TOKEN = "/oauth2/v2.0/token"
_T = TypeVar("_T")


def run(coro: Coroutine[Any, Any, _T]) -> _T:
    return asyncio.run(coro)


def make(emulator: Emulator, **kwargs: Any) -> AsyncClient:
    return AsyncClient(emulator.authority, emulator.client_id, capabilities=["mfa_required", "registration_required"],
                       **kwargs)


def refresh_grants(emulator: Emulator) -> int:
    return len([r for r in emulator.requests(TOKEN) if r["fields"].get("grant_type") == "refresh_token"])


def nothing_pending(client: AsyncClient) -> bool:
    """Every operation the client started has had its done run (and its handle freed)."""
    return not client._ops and not aio._PENDING


class Ticker:
    """A task that ticks every 5 ms and keeps the largest gap between two ticks: how long the loop was kept from
    running it (plus the 5 ms).

    The time the loop's thread spent runnable but waiting for a CPU (``/proc/thread-self/schedstat``'s run-queue
    time) is taken out of each gap: a machine busy with other work delays every thread, which is no stall of the
    loop's making. A call that blocks the loop (sleeping in the kernel: a lock, a socket, the GIL) or work on the
    loop's thread still counts in full. ``max_wall_gap`` keeps the gap as measured, for the failure message."""

    def __init__(self) -> None:
        self.max_gap = 0.0
        self.max_wall_gap = 0.0
        self.ticks = 0
        self._task: Optional[asyncio.Task[None]] = None
        try:
            self._schedstat: Optional[int] = os.open("/proc/thread-self/schedstat", os.O_RDONLY)
        except OSError:  # no scheduler statistics: wall time only
            self._schedstat = None

    def _waited(self) -> float:
        """Seconds the calling thread has spent runnable, waiting for a CPU."""
        if self._schedstat is None:
            return 0.0
        return int(os.pread(self._schedstat, 128, 0).split()[1]) / 1e9

    async def _run(self) -> None:
        last, waited = time.monotonic(), self._waited()
        while True:
            await asyncio.sleep(0.005)
            now, now_waited = time.monotonic(), self._waited()
            self.max_wall_gap = max(self.max_wall_gap, now - last)
            self.max_gap = max(self.max_gap, now - last - (now_waited - waited))
            self.ticks += 1
            last, waited = now, now_waited

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await self._task
        if self._schedstat is not None:
            os.close(self._schedstat)


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Polls ``condition`` on the loop (never blocking it) until it holds; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.005)


def test_concurrent_tokens_and_sign_ins_never_stall_the_loop(emulator: Emulator) -> None:
    """50 concurrent get_access_token after one sign-in (one refresh shared), then 10 concurrent sign-ins of 10 users,
    while a 5 ms ticker runs: the loop never waits for the library. The token endpoint answers 200 ms late, so a call
    that blocked the loop would show as a gap of 200 ms or more."""
    notes = emulator.apis["Notes"]["scopes"][0]
    users = [f"aio.user{i}@contoso.com" for i in range(10)]
    for email in users:
        emulator.control("POST", "users", {"email": email, "password": "Aio-Passw0rd!"})

    async def main() -> Tuple[Ticker, List[na.AccessToken], List[na.State], List[na.Account]]:
        async with make(emulator) as client:
            assert isinstance(await client.sign_in(ANN, ANN_PW), na.SignedIn)
            # The refresh and the ten sign-ins' token requests; set before the ticker starts (a control blocks).
            emulator.control("POST", "faults", {"path": TOKEN, "delay_ms": 200, "count": 11})
            ticker = Ticker()
            ticker.start()
            tokens = await asyncio.gather(*(client.get_access_token([notes]) for _ in range(50)))
            signed = await asyncio.gather(*(client.sign_in(email, "Aio-Passw0rd!") for email in users))
            await ticker.stop()
            return ticker, tokens, signed, await client.accounts()

    ticker, tokens, signed, accounts = run(main())
    assert len({t.access_token for t in tokens}) == 1 and notes in tokens[0].scopes
    assert refresh_grants(emulator) == 1  # fifty callers, one refresh
    assert all(isinstance(s, na.SignedIn) for s in signed)
    assert sorted(s.account.username for s in signed if isinstance(s, na.SignedIn)) == sorted(users)
    assert sorted(a.username for a in accounts) == sorted(users + [ANN])
    assert ticker.ticks > 20
    assert ticker.max_gap < 0.020, (f"the event loop stalled: {ticker.max_gap * 1000:.1f} ms between two 5 ms ticks "
                                    f"({ticker.max_wall_gap * 1000:.1f} ms with the waits for a CPU)")


def test_cancelling_an_interactive_sign_in(emulator: Emulator) -> None:
    """A task waiting for the browser is cancelled: CancelledError within a second, the operation's done ran, the
    sign-in's loopback listener is closed, nobody is signed in, and the client's only worker is free again (a sign-in
    that follows completes; with the worker still waiting it would queue behind it for a minute)."""
    opened: List[str] = []

    async def main() -> Tuple[float, List[na.Account], na.State]:
        loop = asyncio.get_running_loop()
        browser_opened = asyncio.Event()

        def opener(url: str) -> bool:  # a worker thread: record, wake the loop, open nothing
            opened.append(url)
            loop.call_soon_threadsafe(browser_opened.set)
            return True

        async with make(emulator, browser=opener, async_workers=1) as client:
            task = asyncio.ensure_future(client.sign_in_interactive(timeout=60))
            await asyncio.wait_for(browser_opened.wait(), 10)
            assert not task.done()
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            elapsed = time.monotonic() - started
            assert nothing_pending(client)  # done ran, the op was freed
            port = urllib.parse.urlsplit(opened[0]).port
            assert port is not None
            await until(lambda: refused(port))  # the sign-in's listener is gone with it
            accounts = await client.accounts()
            after = await asyncio.wait_for(client.sign_in(ANN, ANN_PW), 10)
            return elapsed, accounts, after

    elapsed, accounts, after = run(main())
    assert elapsed < 1.0, f"cancelling took {elapsed:.2f} s"
    assert accounts == [] and isinstance(after, na.SignedIn)
    assert len(opened) == 1


def refused(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_a_cancelled_get_access_token_ends_at_once_and_its_refresh_is_kept(emulator: Emulator) -> None:
    """Cancelled while its refresh is on the wire: CancelledError at once (the operation's done ran); the refresh it
    sent is finished in the background and the next call gets its token (test_refresh_durability.py has the rest)."""
    notes = emulator.apis["Notes"]["scopes"][0]

    async def main() -> Tuple[float, na.AccessToken]:
        async with make(emulator) as client:
            assert isinstance(await client.sign_in(ANN, ANN_PW), na.SignedIn)
            emulator.control("POST", "faults", {"path": TOKEN, "delay_ms": 5000})
            task = asyncio.ensure_future(client.get_access_token([notes]))
            await until(lambda: not emulator.control("GET", "faults")["faults"])  # the refresh reached the server
            started = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            elapsed = time.monotonic() - started
            assert nothing_pending(client)
            return elapsed, await client.get_access_token([notes])

    elapsed, token = run(main())
    assert elapsed < 1.0, f"cancelling took {elapsed:.2f} s"
    assert notes in token.scopes
    assert refresh_grants(emulator) == 1  # the next call got the cancelled call's refresh: no second one


def test_email_code_password_and_mfa_flows_with_async_states(emulator: Emulator) -> None:
    olivia = "olivia@contoso.com"

    async def main() -> None:
        async with make(emulator) as client:
            state = await client.sign_in(olivia)
            assert isinstance(state, aio.AsyncCodeRequired) and state.code_length == 8 and "***" in state.sent_to
            old = emulator.last_code(olivia)
            state = await state.resend_code()
            assert isinstance(state, aio.AsyncCodeRequired)
            with pytest.raises(na.InvalidCodeError) as wrong:
                await state.submit_code(old)
            assert wrong.value.state is state  # the same flow, try again
            signed = await state.submit_code(emulator.last_code(olivia))
            assert isinstance(signed, na.SignedIn) and signed.account.username == olivia

            with pytest.raises(na.InvalidCredentialsError) as refused_password:
                await client.sign_in(ANN, "wrong")
            retry = refused_password.value.state
            assert isinstance(retry, aio.AsyncPasswordRequired) and retry.flow_type == "sign_in"
            assert isinstance(await retry.submit_password(ANN_PW), na.SignedIn)

            mfa = await client.sign_in("mike@contoso.com", "Mfa-Passw0rd!")
            assert isinstance(mfa, aio.AsyncMfaRequired) and mfa.methods[0].channel == "email"
            code = await mfa.request_challenge()
            assert isinstance(code, aio.AsyncCodeRequired)
            assert isinstance(await code.submit_code(emulator.last_code("mike.backup@fabrikam.com")), na.SignedIn)

            up = await client.sign_up("aio.new@contoso.com", "Str0ng-Passw0rd!")
            assert isinstance(up, aio.AsyncCodeRequired) and up.flow_type == "sign_up"
            attributes = await up.submit_code(emulator.last_code("aio.new@contoso.com"))
            assert isinstance(attributes, aio.AsyncAttributesRequired)
            done = await attributes.submit_attributes({"displayName": "Aio New"})
            assert isinstance(done, aio.AsyncSignUpCompleted)
            assert isinstance(await done.sign_in(), na.SignedIn)

            pending = await client.sign_in("olivia@contoso.com")
            assert isinstance(pending, aio.AsyncCodeRequired)
            await pending.cancel()
            with pytest.raises(na.FlowInvalidError):
                await pending.submit_code("12345678")
            assert sorted(a.username for a in await client.accounts()) == sorted(
                [olivia, ANN, "mike@contoso.com", "aio.new@contoso.com"])

    run(main())


def test_device_code_and_browser_pending_wait(emulator: Emulator) -> None:
    """The waits of the device-code and browser flows as coroutines; cancelling the task of a device-code wait that
    is polling ends it at once (and its flow, or — cancelled while a poll was on the wire — keeps the flow, as an
    aborted step does)."""
    ann = emulator.users["password"]
    scopes = emulator.apis["ToDoList"]["scopes"]

    def polled() -> bool:
        return any("device_code" in str(r["fields"].get("grant_type")) for r in emulator.requests(TOKEN))

    async def main() -> None:
        async with make(emulator) as client:
            device = await client.sign_in_device_code(scopes)
            assert isinstance(device, aio.AsyncDeviceCodeRequired) and device.user_code in device.message
            polling = asyncio.ensure_future(device.wait(timeout=60))
            await until(polled)  # the wait is polling the server
            started = time.monotonic()
            polling.cancel()
            with pytest.raises(asyncio.CancelledError):
                await polling
            assert time.monotonic() - started < 1.0 and nothing_pending(client)
            try:  # cancelled between two polls, the wait ended its flow; during a poll, the flow is kept
                kept = await device.wait(timeout=0.1)
                assert isinstance(kept, aio.AsyncDeviceCodeRequired) and kept.flow == device.flow
            except na.FlowInvalidError:
                pass

            device = await client.sign_in_device_code(scopes)
            assert isinstance(device, aio.AsyncDeviceCodeRequired)
            waiting = asyncio.ensure_future(device.wait(timeout=20))
            emulator.control("POST", "device/approve", {"user_code": device.user_code, "email": ann["email"]})
            signed = await waiting
            assert isinstance(signed, na.SignedIn) and signed.flow_type == "device_code"

            pending = await client.sign_in_interactive(browser="none")
            assert isinstance(pending, aio.AsyncBrowserPending) and pending.authorization_url
            again = await pending.wait(timeout=0.1)
            assert isinstance(again, aio.AsyncBrowserPending) and again.flow == pending.flow
            await pending.cancel()
            with pytest.raises(na.FlowInvalidError):
                await pending.wait(timeout=0.1)

    run(main())


def test_errors_are_the_sync_clients(emulator: Emulator) -> None:
    """The same calls raise the same exception classes, with the same codes, from both clients."""
    cases: List[Tuple[str, Dict[str, Any]]] = [
        ("sign_in", {"username": "nobody@contoso.com"}),
        ("sign_in", {"username": "not-an-email"}),
        ("sign_in", {"username": ""}),
        ("sign_in", {"username": 123}),
        ("sign_in", {"username": ANN, "scopes": "api://x"}),
        ("sign_up", {"username": ANN}),
        ("sign_up", {"username": "x@contoso.com", "password": "weakweak"}),
        ("sign_up", {"username": "x@contoso.com", "attributes": {"postalCode": "x"}}),
        ("reset_password", {"username": "olivia@contoso.com"}),
        ("get_access_token", {"scopes": ["api://x/y"]}),
        ("get_access_token", {"scopes": "api://x"}),
        ("call_api", {"url": "ftp://x/y", "scopes": ["x"]}),
        ("sign_out", {"account": "nobody@contoso.com"}),
    ]

    def sync_errors() -> List[BaseException]:
        found: List[BaseException] = []
        with na.Client(emulator.authority, emulator.client_id) as client:
            for name, kwargs in cases:
                with pytest.raises(na.NativeAuthError) as e:
                    getattr(client, name)(**kwargs)
                found.append(e.value)
        return found

    async def async_errors() -> List[BaseException]:
        found: List[BaseException] = []
        async with AsyncClient(emulator.authority, emulator.client_id) as client:
            for name, kwargs in cases:
                with pytest.raises(na.NativeAuthError) as e:
                    await getattr(client, name)(**kwargs)
                found.append(e.value)
        return found

    expected = sync_errors()
    got = run(async_errors())
    assert [(type(e), getattr(e, "code")) for e in got] == [(type(e), getattr(e, "code")) for e in expected]
    assert {type(e) for e in got} >= {na.UserNotFoundError, na.InvalidUsernameError, na.UserAlreadyExistsError,
                                      na.InvalidPasswordError, na.AttributesInvalidError, na.UserHasNoPasswordError,
                                      na.NoAccountError, na.InvalidArgumentError}


def test_closing(emulator: Emulator) -> None:
    """aclose cancels a call in flight (it raises the library's CancelledError, its done having run), frees the client,
    and every call after it raises ClientClosedError. A client dropped unclosed warns, and leaves the loop."""

    async def main() -> None:
        client = make(emulator)
        emulator.control("POST", "faults", {"path": "/oauth2/v2.0/initiate", "delay_ms": 5000})
        in_flight = asyncio.ensure_future(client.sign_in(ANN, ANN_PW))
        await until(lambda: not emulator.control("GET", "faults")["faults"])
        started = time.monotonic()
        await client.aclose()
        assert time.monotonic() - started < 1.0
        assert client.closed and in_flight.done() and nothing_pending(client)
        with pytest.raises(na.CancelledError):
            await in_flight
        await client.aclose()  # again: nothing happens
        calls: List[Callable[[], Awaitable[Any]]] = [
            lambda: client.get_access_token(), lambda: client.sign_in(ANN, ANN_PW), lambda: client.accounts(),
            lambda: client.info(), lambda: client.call_api(emulator.apis["Notes"]["url"])]
        for call in calls:
            with pytest.raises(na.ClientClosedError):
                await call()
        with pytest.raises(na.ClientClosedError):
            async with client:
                pass

        dropped = make(emulator)
        assert (await dropped.info())["config"]["client_id"] == emulator.client_id
        fd = dropped._fd
        with pytest.warns(ResourceWarning, match="unclosed AsyncClient"):
            del dropped
            gc.collect()
        assert not asyncio.get_running_loop().remove_reader(fd)  # its event fd left the loop with it

    run(main())


def test_call_api_of_both_apis_concurrently(emulator: Emulator) -> None:
    todo, notes = emulator.apis["ToDoList"], emulator.apis["Notes"]

    async def main() -> Tuple[na.ApiResponse, na.ApiResponse, na.ApiResponse, Optional[na.Account], bool]:
        async with make(emulator) as client:
            assert isinstance(await client.sign_in(ANN, ANN_PW, scopes=[todo["scopes"][0]]), na.SignedIn)
            r1, r2 = await asyncio.gather(client.call_api(todo["url"], [todo["scopes"][0]]),
                                          client.call_api(notes["url"], [notes["scopes"][0]]))
            created = await client.call_api(todo["url"], [todo["scopes"][1]], method="POST", body={"title": "Milk"})
            account = await client.account()
            info = await client.info()
            assert info["config"]["client_id"] == emulator.client_id
            signed_out = await client.sign_out()
            assert await client.account() is None and client.last_end_session_url
            return r1, r2, created, account, signed_out

    r1, r2, created, account, signed_out = run(main())
    assert r1.ok and r1.body["user"] == ANN and r2.status == 200 and r2.body["api"] == "Notes"
    assert created.status == 201 and created.body["created"]["title"] == "Milk"
    assert account is not None and account.username == ANN and account.id_token and signed_out


def test_one_event_loop_at_a_time(emulator: Emulator) -> None:
    """A client belongs to the loop that first used it: refused from another while that one is open; taken over
    once it is closed."""
    client = make(emulator)
    first = asyncio.new_event_loop()
    try:
        assert isinstance(first.run_until_complete(client.sign_in(ANN, ANN_PW)), na.SignedIn)

        async def elsewhere() -> None:
            with pytest.raises(RuntimeError, match="another event loop"):
                await client.get_access_token()
            with pytest.raises(RuntimeError, match="another event loop"):
                await client.aclose()

        run(elsewhere())
        assert not client.closed and first.run_until_complete(client.get_access_token()).from_cache
    finally:
        first.close()

    async def later() -> bool:
        token = await client.get_access_token()  # the first loop is closed: this one takes the client over
        await client.aclose()
        return token.from_cache

    assert run(later()) and client.closed


def test_async_states_have_the_sync_states_fields() -> None:
    pairs: List[Tuple[Type[Any], Type[Any]]] = [
        (na.CodeRequired, aio.AsyncCodeRequired), (na.PasswordRequired, aio.AsyncPasswordRequired),
        (na.AttributesRequired, aio.AsyncAttributesRequired), (na.MfaRequired, aio.AsyncMfaRequired),
        (na.RegistrationRequired, aio.AsyncRegistrationRequired), (na.BrowserPending, aio.AsyncBrowserPending),
        (na.DeviceCodeRequired, aio.AsyncDeviceCodeRequired), (na.SignUpCompleted, aio.AsyncSignUpCompleted),
        (na.PasswordResetCompleted, aio.AsyncPasswordResetCompleted)]
    for sync, asynchronous in pairs:
        assert [f.name for f in dataclasses.fields(sync)] == [f.name for f in dataclasses.fields(asynchronous)]
        assert sync.status == asynchronous.status and not issubclass(asynchronous, states.FlowState)
    doc = {"status": "code_required", "flow_type": "sign_in", "flow": "f_1", "sent_to": "o***", "code_length": 8}
    assert isinstance(states._state_from_json(aio._ASYNC_STATES, None, doc), aio.AsyncCodeRequired)


def test_a_library_without_asynchronous_calls_is_refused(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_native, "ASYNC", False)
    with pytest.raises(na.NotSupportedError, match="na_start"):
        AsyncClient(emulator.authority, emulator.client_id)


def test_async_two_apis_example(emulator: Emulator) -> None:
    """bindings/python/examples/async_two_apis.py end to end."""
    example = pathlib.Path(__file__).resolve().parents[1] / "examples" / "async_two_apis.py"
    todo, notes = emulator.apis["ToDoList"], emulator.apis["Notes"]
    env = dict(os.environ, NATIVEAUTH_AUTHORITY=emulator.authority, NATIVEAUTH_CLIENT_ID=emulator.client_id,
               NATIVEAUTH_USERNAME=ANN, NATIVEAUTH_PASSWORD=ANN_PW, API1_URL=todo["url"],
               API1_SCOPE=todo["scopes"][0], API2_URL=notes["url"], API2_SCOPE=notes["scopes"][0])
    r = subprocess.run([sys.executable, str(example)], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "signed in: ann@contoso.com" in r.stdout and r.stdout.count("HTTP 200") == 2
    assert "signed out" in r.stdout
