"""asyncio: `AsyncClient`, the `nativeauth.Client` whose calls are coroutines, and the states of its flows.

    import asyncio
    import nativeauth as na
    from nativeauth.aio import AsyncClient

    async def main() -> None:
        async with AsyncClient(authority, client_id="00001111-aaaa-2222-bbbb-3333cccc4444") as client:
            state = await client.sign_in("ann@contoso.com", password, scopes=[todo_scope])
            assert isinstance(state, na.SignedIn)
            todo, notes = await asyncio.gather(client.call_api(todo_url, [todo_scope]),
                                               client.call_api(notes_url, [notes_scope]))

    asyncio.run(main())

Every method of `nativeauth.Client` is here, with the same name and parameters, as a coroutine; the properties that
read (``account``, ``accounts``, ``info``) are coroutine methods of the same names (``await client.account()``).
Results are the same classes (`nativeauth.SignedIn`, `nativeauth.AccessToken`, `nativeauth.ApiResponse`, …), errors
the same exceptions (`nativeauth.InvalidCodeError`, …); the states that continue are the ``Async…`` classes here,
with the fields of their namesakes and coroutines for continuations (``await state.submit_code(code)``).

How it runs.  No thread is made per call and nothing runs in an executor: each call is started with ``na_start`` and
runs on the library's own worker threads (at most ``async_workers`` per client, default 4; a browser or device-code
sign-in holds one while it waits), and its completion reaches the event loop through the client's event fd
(``na_client_event_fd``), which the client adds to the loop with ``loop.add_reader``: the completions run in
``na_client_dispatch`` on the loop's thread and resolve the awaiting coroutines. The event loop never blocks on the
library. The ``log_handler`` and ``browser`` callables are called on the library's worker threads, not the loop's (use
``loop.call_soon_threadsafe`` to reach the loop from them); ``browser`` must return without waiting for the sign-in.

Cancelling.  Cancelling the task that awaits a call (``task.cancel()``, ``asyncio.wait_for``, ``asyncio.timeout``)
cancels the library's operation (``na_op_cancel``): its HTTP request is aborted, its wait for a browser redirect, a
device-code approval or another caller's refresh ends. The coroutine still waits for the operation to end — promptly
— before it raises `asyncio.CancelledError`, so nothing of it is left running. A sign-in cancelled so has stored
nothing; one that was past cancelling (its tokens stored) keeps its effect, and the task still raises
`asyncio.CancelledError`. A flow step whose request was aborted keeps its flow (the state may be submitted again); a
cancelled ``wait`` ends the flow (cancelled while one of its polls was on the wire, it keeps it, as an aborted step).
(`nativeauth.CancelledError`, a `nativeauth.FlowError`, is something else: the library's answer to a call whose flow
was cancelled by ``state.cancel()`` or whose client was closed.)

One event loop.  An `AsyncClient` belongs to the event loop it is first used on (entered with ``async with``, or its
first call). Used from another loop while that one is open, it raises `RuntimeError` and does nothing: make one client
per loop. Once its loop is closed, the next loop to use it takes it over (``asyncio.run`` twice in a row works). An
`AsyncClient` is not for threads: use it from its loop's thread only (as every asyncio object).

Closing.  ``aclose()`` (or leaving ``async with``) cancels the calls still running — their coroutines raise
`nativeauth.CancelledError` — waits for them on the loop, removes the event fd from the loop and frees the client.
Calls after it raise `nativeauth.ClientClosedError`. A client dropped unclosed is freed by the garbage collector with
a `ResourceWarning`, on any thread: its event fd leaves its loop first (on the loop's thread while the loop runs), and
it is freed even when its loop never runs again.
"""
from __future__ import annotations

import asyncio
import ctypes
import itertools
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Protocol, Sequence, Tuple, TypeVar, Union

from . import _aio_drop, _calls, _native, errors
from .client import BrowserOpener, _ClientCore
from .documents import ClientInfo
from .states import (AccessToken, Account, ApiResponse, AuthMethod, State, _AttributesRequiredFields,
                     _BrowserPendingFields, _cancel, _CodeRequiredFields, _DeviceCodeRequiredFields, _expect, _Family,
                     _Flow, _MfaRequiredFields, _PasswordRequiredFields, _PasswordResetCompletedFields,
                     _first, _register_method, _RegistrationRequiredFields, _request_challenge, _resend_code, _sign_in,
                     _SignUpCompletedFields, _state_from_json, _submit_attributes, _submit_code, _submit_password,
                     _submit_redirect, _wait)
from .states import _C as _C  # noqa: F401 — the states' generated __init__ names it: their signature resolves here

__all__ = ["AsyncClient", "AsyncFlowClient", "AsyncFlowState", "AsyncCodeRequired", "AsyncPasswordRequired",
           "AsyncAttributesRequired", "AsyncMfaRequired", "AsyncRegistrationRequired", "AsyncBrowserPending",
           "AsyncDeviceCodeRequired", "AsyncSignUpCompleted", "AsyncPasswordResetCompleted"]

_T = TypeVar("_T")
_Result = Tuple[int, bytes]


# -- completions --------------------------------------------------------------------------------------------------
# One done function serves every operation of every client: the ctypes thunk below lives as long as the module, so it
# outlives every operation. Each started operation is an entry of _PENDING, keyed by the user_data given to na_start,
# until its done ran (exactly once, the header promises): the future its coroutine awaits, and its loop's thread.

class _Pending:
    __slots__ = ("future", "thread")

    def __init__(self, future: asyncio.Future[_Result], thread: int) -> None:
        self.future = future
        self.thread = thread


_PENDING: Dict[int, _Pending] = {}
_KEYS = itertools.count(1)


def _resolve(future: asyncio.Future[_Result], rc: int, raw: bytes) -> None:
    if not future.done():
        future.set_result((rc, raw))


def _done(rc: int, result: Optional[bytes], user_data: Optional[int]) -> None:
    """na_done_fn. Runs inside na_client_dispatch on the loop's thread — or inside na_client_free, on the thread
    freeing the client: from another thread the future is resolved through its loop."""
    try:
        pending = _PENDING.pop(user_data or 0, None)
        if pending is None:
            return
        raw = result or b""
        if threading.get_ident() == pending.thread:
            _resolve(pending.future, rc, raw)
        else:
            pending.future.get_loop().call_soon_threadsafe(_resolve, pending.future, rc, raw)
    except Exception:  # nothing unwinds into C; a loop closed meanwhile has nobody waiting any more
        pass


_DONE = _native.DONE_FN(_done)


def _dispatch(handle: int) -> None:
    """The event fd's reader: runs the completions waiting (never blocks)."""
    _native.lib.na_client_dispatch(handle)


async def _completion(future: asyncio.Future[_Result], op: Optional[int]) -> _Result:
    """Waits for an operation's done. Cancelled, it cancels the operation, still waits for its done (cancelled again
    meanwhile, it goes on waiting: the library ends a cancelled operation promptly), then raises CancelledError."""
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        _native.lib.na_op_cancel(op)
        while not future.done():
            try:
                await asyncio.shield(future)
            except asyncio.CancelledError:
                pass
        raise


# -- the client ---------------------------------------------------------------------------------------------------

class AsyncClient(_ClientCore):
    """A native-authentication client for one app registration, for asyncio: the calls of `nativeauth.Client` as
    coroutines (see the module's documentation for how they run, cancelling, the event loop and closing).

    >>> async with AsyncClient(authority="https://contoso.ciamlogin.com/contoso.onmicrosoft.com",
    ...                        client_id="00001111-aaaa-2222-bbbb-3333cccc4444") as client:
    ...     state = await client.sign_in("ann@contoso.com", "…", scopes=["api://…/ToDoList.Read"])

    It takes the arguments of `nativeauth.Client`; ``async_workers`` (1..64, default 4) is the most library threads
    that run its calls at once (more wait their turn, in order). Making it raises `nativeauth.NotSupportedError` when
    the loaded library has no asynchronous calls (``na_start``: libnativeauth 0.1 built before them)."""

    last_end_session_url: Optional[str]
    """The provider's end-session URL from the last `sign_out` (``None`` when it had none)."""

    _fd = -1
    _loop: Optional[asyncio.AbstractEventLoop] = None
    _thread = 0

    def _check_library(self) -> None:
        if not _native.ASYNC:
            raise errors.NotSupportedError("this libnativeauth has no asynchronous calls (na_start): nativeauth.aio "
                                           "needs a library that exports " + ", ".join(_native.ASYNC_FUNCTIONS),
                                           status=-1)

    def _opened(self) -> None:
        # The operations not finished yet: their key in _PENDING → their na_op.
        self._ops: Dict[int, Optional[int]] = {}
        fd = ctypes.c_int(-1)
        rc = _native.lib.na_client_event_fd(self._handle, ctypes.byref(fd))
        if rc != 0:
            self._free()
            raise errors.InternalError("the library gave no event fd for the client", status=rc)
        self._fd = fd.value

    # -- lifecycle -------------------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether `aclose` was called."""
        return self._handle is None

    def set_browser(self, browser: Optional[BrowserOpener]) -> None:
        """As `nativeauth.Client.set_browser` (not a coroutine: it returns at once). The opener is called on one of
        the library's worker threads, never on the event loop's, and must return without waiting for the sign-in."""
        self._set_browser(browser)

    async def __aenter__(self) -> AsyncClient:
        self._bind()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Closes the client: cancels the calls still running (they raise `nativeauth.CancelledError`, or finish if
        they were past cancelling), waits for them without blocking the loop, removes the event fd from the loop and
        frees the client (tokens are wiped). Freeing waits for a token refresh a cancelled call had already sent
        (the library finishes it in the background and stores its tokens): that can hold the loop for up to the
        request timeout. Idempotent. Raises RuntimeError, closing nothing, from another event
        loop than the client's while that one is open."""
        if self._handle is None:
            return
        loop = asyncio.get_running_loop()
        bound = self._loop
        if bound is not None and bound is not loop and not bound.is_closed():
            raise RuntimeError(self._other_loop())
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is None:
            return
        try:
            if bound is loop:
                waiting = [_PENDING[key].future for key in self._ops if key in _PENDING]
                for op in list(self._ops.values()):
                    _native.lib.na_op_cancel(op)
                if waiting:
                    await asyncio.wait(waiting)
        finally:
            if bound is loop:
                loop.remove_reader(self._fd)
            # Every done not run yet runs in here, on this thread (nothing is left when the wait above finished).
            _native.lib.na_client_free(handle)

    def __del__(self) -> None:
        handle = self._handle
        if handle is None:
            return
        self._handle = None
        try:
            warnings.warn(f"unclosed {type(self).__name__}: use 'async with' or 'await client.aclose()'",
                          ResourceWarning, source=self)
        except Exception:  # warnings made errors: the client is freed all the same
            pass
        try:
            # Its event fd leaves the loop first — on the loop's thread when the loop runs on another (_aio_drop).
            _aio_drop.drop(self._loop, self._thread, self._fd, handle)
        except Exception:  # interpreter shutdown: nothing more can be done
            pass

    def _other_loop(self) -> str:
        return ("this AsyncClient belongs to another event loop (the one it was first used on, still open): use it "
                "there, or make one AsyncClient per event loop")

    def _bind(self) -> asyncio.AbstractEventLoop:
        """The running loop, which the client belongs to: the first to use it, or the next once that one closed."""
        loop = asyncio.get_running_loop()
        handle = self._handle
        if handle is None:
            raise errors.ClientClosedError("the client is closed", status=-1)
        if loop is self._loop:
            return loop
        bound = self._loop
        if bound is not None and not bound.is_closed():
            raise RuntimeError(self._other_loop())
        loop.add_reader(self._fd, _dispatch, handle)
        self._loop, self._thread = loop, threading.get_ident()
        return loop

    # -- plumbing --------------------------------------------------------------------------------------------------

    async def _start(self, name: str, request: bytes) -> _Result:
        """Starts operation ``name`` and waits for its done: (status, the result document's bytes)."""
        loop = self._bind()
        handle = self._handle
        key = next(_KEYS)
        future: asyncio.Future[_Result] = loop.create_future()
        _PENDING[key] = _Pending(future, self._thread)
        op = ctypes.c_void_p()
        rc = _native.lib.na_start(handle, name.encode(), request, _DONE, key, ctypes.byref(op))
        if rc != 0:  # done will never run
            del _PENDING[key]
            if rc == -8:
                raise errors.LibraryMemoryError("out of memory", status=rc)
            raise errors.ClientClosedError("the client is closed", status=rc)
        self._ops[key] = op.value
        try:
            return await _completion(future, op.value)
        finally:
            del self._ops[key]
            _native.lib.na_op_free(op.value)

    async def _run(self, call: _calls.Call[_T]) -> _T:
        if self._handle is None:
            raise errors.ClientClosedError("the client is closed", status=-1)
        try:
            request = _native.encode(call.request)
        except ValueError as e:
            raise errors.InvalidArgumentError(str(e), status=-1) from None
        rc, raw = await self._start(call.name, request)
        return call.result(*_native.parse(rc, raw.decode("utf-8", errors="replace")))

    async def _run_raw(self, call: _calls.RawCall[_T]) -> _T:
        return call.result(*await self._start(call.name, call.request))

    def _state(self, doc: Mapping[str, Any]) -> State:
        flows: AsyncFlowClient = _AsyncFlows(self)
        return _state_from_json(_ASYNC_STATES, flows, doc)

    # -- native authentication -------------------------------------------------------------------------------------

    async def sign_in(self, username: str, password: Optional[str] = None, *, scopes: Optional[Sequence[str]] = None,
                      claims: Union[Mapping[str, Any], str, None] = None,
                      request_headers: Optional[Mapping[str, str]] = None) -> State:
        """`nativeauth.Client.sign_in`: `nativeauth.SignedIn`, `AsyncPasswordRequired`, `AsyncCodeRequired`,
        `AsyncMfaRequired` or `AsyncRegistrationRequired`. A refused password's `nativeauth.InvalidCredentialsError`
        carries the `AsyncPasswordRequired` that retries it as ``state``."""
        return await self._run(_calls.sign_in(self._state, username, password, scopes, claims, request_headers))

    async def sign_up(self, username: str, password: Optional[str] = None, *,
                      attributes: Optional[Mapping[str, Any]] = None,
                      request_headers: Optional[Mapping[str, str]] = None) -> State:
        """`nativeauth.Client.sign_up`: `AsyncCodeRequired`."""
        return await self._run(_calls.sign_up(self._state, username, password, attributes, request_headers))

    async def reset_password(self, username: str, *, request_headers: Optional[Mapping[str, str]] = None) -> State:
        """`nativeauth.Client.reset_password`: `AsyncCodeRequired`."""
        return await self._run(_calls.reset_password(self._state, username, request_headers))

    # -- browser and device code -----------------------------------------------------------------------------------

    async def sign_in_interactive(self, scopes: Optional[Sequence[str]] = None, *, login_hint: Optional[str] = None,
                                  prompt: Optional[str] = None, domain_hint: Optional[str] = None,
                                  claims: Union[Mapping[str, Any], str, None] = None,
                                  extra_query_parameters: Optional[Mapping[str, str]] = None,
                                  response_mode: Optional[str] = None, browser: str = "system",
                                  timeout: Optional[float] = None) -> State:
        """`nativeauth.Client.sign_in_interactive`: `nativeauth.SignedIn`, or with ``browser="none"``
        `AsyncBrowserPending`. While it waits for the browser, one of the client's workers waits with it (not the
        loop); cancelling the task ends the wait and the sign-in."""
        return await self._run(_calls.sign_in_interactive(self._state, scopes, login_hint, prompt, domain_hint, claims,
                                                          extra_query_parameters, response_mode, browser, timeout))

    async def sign_in_device_code(self, scopes: Optional[Sequence[str]] = None) -> State:
        """`nativeauth.Client.sign_in_device_code`: `AsyncDeviceCodeRequired` (show its ``message``, then
        ``await state.wait()``)."""
        return await self._run(_calls.sign_in_device_code(self._state, scopes))

    # -- tokens, APIs, account -------------------------------------------------------------------------------------

    async def get_access_token(self, scopes: Optional[Sequence[str]] = None, *, force_refresh: bool = False,
                               claims: Union[Mapping[str, Any], str, None] = None,
                               account: Optional[str] = None) -> AccessToken:
        """`nativeauth.Client.get_access_token`: from the cache, or one refresh shared by concurrent callers (tasks,
        threads, and other clients and processes on the same cache file)."""
        call = _calls.get_access_token(self._token_requests, scopes, force_refresh, claims, account)
        if isinstance(call, _calls.RawCall):
            return await self._run_raw(call)
        return await self._run(call)

    async def call_api(self, url: str, scopes: Optional[Sequence[str]] = None, *, method: str = "GET",
                       headers: Optional[Mapping[str, str]] = None,
                       body: Union[None, str, Mapping[str, Any], Sequence[Any]] = None, force_refresh: bool = False,
                       account: Optional[str] = None) -> ApiResponse:
        """`nativeauth.Client.call_api`. A call cancelled after its request reached the API may have had its effect
        there."""
        return await self._run(_calls.call_api(url, scopes, method, headers, body, force_refresh, account))

    async def account(self) -> Optional[Account]:
        """`nativeauth.Client.account` (a coroutine method here): the signed-in account with its ``id_token``, or
        ``None``. Raises `nativeauth.AccountRequiredError` when several are signed in: use `accounts`."""
        return await self._run(_calls.get_account())

    async def accounts(self) -> List[Account]:
        """`nativeauth.Client.accounts` (a coroutine method here): every signed-in account, ordered by username."""
        return await self._run(_calls.get_accounts())

    async def sign_out(self, account: Optional[str] = None, *, all: bool = False, browser: str = "none") -> bool:
        """`nativeauth.Client.sign_out`: whether someone was signed out (the end-session URL is in
        ``last_end_session_url``)."""
        signed_out, self.last_end_session_url = await self._run(_calls.sign_out(account, all, browser))
        return signed_out

    async def info(self) -> ClientInfo:
        """`nativeauth.Client.info` (a coroutine method here): the library ``version`` and the effective
        ``config``."""
        return await self._run(_calls.client_info())


# -- the states that continue -------------------------------------------------------------------------------------

class AsyncFlowClient(Protocol):
    """What an `AsyncFlowState` holds to continue its flow: `nativeauth.states.FlowClient` with a coroutine (internal
    to the package; `AsyncClient` gives each of its states an implementation). States call nothing else of it."""

    async def submit_flow(self, state: AsyncFlowState, request: Dict[str, Any]) -> State:
        """Sends ``request`` (``{"flow", "action", …}``) to ``na_flow_submit`` and returns the next state, which holds
        the same kind of implementation. A retryable error it raises carries ``state`` as ``error.state``."""
        ...


class _AsyncFlows:
    """`AsyncFlowClient` for an `AsyncClient`: what its flow states hold and await to continue."""

    __slots__ = ("_client",)

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def submit_flow(self, state: AsyncFlowState, request: Dict[str, Any]) -> State:
        client = self._client
        return await client._run(_calls.flow_submit(client._state, state, request))


@dataclass(frozen=True)
class AsyncFlowState(_Flow[AsyncFlowClient]):
    """`nativeauth.FlowState` for an `AsyncClient`: a state that continues, with coroutines. ``flow`` is the opaque
    handle of the flow in the library; a retryable error carries this state as ``error.state``."""

    async def _submit(self, request: Dict[str, Any]) -> State:
        return await self._client.submit_flow(self, {"flow": self.flow, **request})

    async def cancel(self) -> None:
        """Forgets the flow; a coroutine waiting on it (``wait()``) raises `nativeauth.CancelledError`. (Cancelling
        the waiting task ends the wait, and the flow, too.)"""
        await self._submit(_cancel())


@dataclass(frozen=True)
class AsyncCodeRequired(AsyncFlowState, _CodeRequiredFields[AsyncFlowClient]):
    """`nativeauth.CodeRequired`: a one-time code was sent to ``sent_to`` (masked) over ``channel``; it has
    ``code_length`` digits; ``resend_interval`` seconds before `resend_code`, when the server said."""

    async def submit_code(self, code: str) -> State:
        """Submits the code: the next state. Raises `nativeauth.InvalidCodeError` (whose ``state`` is this one) for
        a wrong code."""
        return await self._submit(_submit_code(code))

    async def resend_code(self) -> AsyncCodeRequired:
        """Sends a new code (the previous one stops working)."""
        return _expect(await self._submit(_resend_code()), AsyncCodeRequired)


@dataclass(frozen=True)
class AsyncPasswordRequired(AsyncFlowState, _PasswordRequiredFields[AsyncFlowClient]):
    """`nativeauth.PasswordRequired`: the sign-in password, the sign-up password, or the new password of a reset."""

    async def submit_password(self, password: str) -> State:
        """Submits the password: the next state. Raises `nativeauth.InvalidCredentialsError` or
        `nativeauth.InvalidPasswordError`, whose ``state`` is this one."""
        return await self._submit(_submit_password(password))


@dataclass(frozen=True)
class AsyncAttributesRequired(AsyncFlowState, _AttributesRequiredFields[AsyncFlowClient]):
    """`nativeauth.AttributesRequired`: a sign-up needs the ``required_attributes``."""

    async def submit_attributes(self, attributes: Mapping[str, Any]) -> State:
        """Submits attribute values by name: the next state. Raises `nativeauth.AttributesInvalidError`."""
        return await self._submit(_submit_attributes(attributes))


@dataclass(frozen=True)
class AsyncMfaRequired(AsyncFlowState, _MfaRequiredFields[AsyncFlowClient]):
    """`nativeauth.MfaRequired`: a second factor is needed; `request_challenge` sends a code to one of ``methods``."""

    async def request_challenge(self, method: Optional[AuthMethod] = None) -> AsyncCodeRequired:
        """Sends a code to ``method`` (default: the first of ``methods``)."""
        return _expect(await self._submit(_request_challenge(method or _first(self.methods))), AsyncCodeRequired)


@dataclass(frozen=True)
class AsyncRegistrationRequired(AsyncFlowState, _RegistrationRequiredFields[AsyncFlowClient]):
    """`nativeauth.RegistrationRequired`: a strong-authentication method (one of ``methods``) must be registered."""

    async def register_method(self, contact: str, method: Optional[AuthMethod] = None) -> State:
        """Registers ``contact`` for ``method`` (default: the first): `AsyncCodeRequired`, or
        `nativeauth.SignedIn`. Raises `nativeauth.InvalidContactError`."""
        return await self._submit(_register_method(contact, method))


@dataclass(frozen=True)
class AsyncBrowserPending(AsyncFlowState, _BrowserPendingFields[AsyncFlowClient]):
    """`nativeauth.BrowserPending`: show ``authorization_url`` (the provider's), then `wait` for the redirect to
    ``redirect_uri``, or `submit_redirect` one the app captured itself or its user pasted."""

    async def wait(self, timeout: Optional[float] = None) -> State:
        """Waits up to ``timeout`` seconds (default: 300) for the redirect: `nativeauth.SignedIn`, or this state
        again. Cancelling the task ends the wait and the sign-in."""
        return await self._submit(_wait(timeout))

    async def submit_redirect(self, redirect_url: str) -> State:
        """Completes the sign-in with the redirect URL as the app received it: `nativeauth.SignedIn`."""
        return await self._submit(_submit_redirect(redirect_url))


@dataclass(frozen=True)
class AsyncDeviceCodeRequired(AsyncFlowState, _DeviceCodeRequiredFields[AsyncFlowClient]):
    """`nativeauth.DeviceCodeRequired`: show ``message`` (or ``verification_uri`` and ``user_code``), then
    `wait`."""

    async def wait(self, timeout: Optional[float] = None) -> State:
        """Polls until the user approves (`nativeauth.SignedIn`), or ``timeout`` seconds pass (default: 900; this
        state again). Raises `nativeauth.AccessDeniedError`, `nativeauth.FlowExpiredError`. Cancelling the task ends
        the wait and the sign-in."""
        return await self._submit(_wait(timeout))


@dataclass(frozen=True)
class AsyncSignUpCompleted(AsyncFlowState, _SignUpCompletedFields[AsyncFlowClient]):
    """`nativeauth.SignUpCompleted`: `sign_in` signs the new user in without a password (with an empty ``flow``:
    call `AsyncClient.sign_in`)."""

    async def sign_in(self, scopes: Optional[Sequence[str]] = None,
                      claims: Optional[Mapping[str, Any]] = None) -> State:
        """Signs the new user in: `nativeauth.SignedIn`."""
        return await self._submit(_sign_in(scopes, claims))


@dataclass(frozen=True)
class AsyncPasswordResetCompleted(AsyncFlowState, _PasswordResetCompletedFields[AsyncFlowClient]):
    """`nativeauth.PasswordResetCompleted`: `sign_in` signs the user in with the new password."""

    async def sign_in(self, scopes: Optional[Sequence[str]] = None,
                      claims: Optional[Mapping[str, Any]] = None) -> State:
        """Signs the user in: `nativeauth.SignedIn`."""
        return await self._submit(_sign_in(scopes, claims))


_ASYNC_STATES = _Family(AsyncCodeRequired, AsyncPasswordRequired, AsyncAttributesRequired, AsyncMfaRequired,
                        AsyncRegistrationRequired, AsyncSignUpCompleted, AsyncPasswordResetCompleted,
                        AsyncBrowserPending, AsyncDeviceCodeRequired)
