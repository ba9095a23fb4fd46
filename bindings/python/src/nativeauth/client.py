"""The `Client`: one configured libnativeauth client for one app registration, usable from many threads; and
`parse_www_authenticate`, the one call that needs no client."""
from __future__ import annotations

import base64
import logging
import os
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, TypeVar, Union

from . import _calls, _native, errors
from .documents import ClientInfo
from .states import AccessToken, Account, ApiResponse, FlowState, State, WWWAuthenticate, state_from_json

__all__ = ["Client", "LogHandler", "BrowserOpener", "parse_www_authenticate"]

_T = TypeVar("_T")
_LEVELS = {"off": 0, "error": 1, "warning": 2, "info": 3, "verbose": 4}
_PY_LEVELS = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}

LogHandler = Callable[[int, str, Optional[str]], None]
"""``log_handler(level, message, correlation_id)``: ``level`` 1 (error) … 4 (verbose)."""
BrowserOpener = Callable[[str], bool]
"""``browser(url) -> bool``: opens ``url`` and returns whether it could, without waiting for the sign-in."""


class _ClientCore:
    """What `Client` and `nativeauth.aio.AsyncClient` share: the configuration, the handle, the log and browser
    callbacks. Subclasses make the calls (`nativeauth._calls`) blocking or started."""

    def __init__(self, authority: Optional[str] = None, client_id: Optional[str] = None, *,
                 tenant_subdomain: Optional[str] = None, challenge_types: Optional[Sequence[str]] = None,
                 capabilities: Optional[Sequence[str]] = None, redirect_uri: Optional[str] = None,
                 connect_timeout_ms: Optional[int] = None, request_timeout_ms: Optional[int] = None,
                 retry_after_max_s: Optional[int] = None, ca_bundle: Optional[str] = None, log_level: str = "off",
                 log_handler: Optional[LogHandler] = None, authority_type: Optional[str] = None,
                 post_logout_redirect_uri: Optional[str] = None, browser_command: Optional[str] = None,
                 browser: Optional[BrowserOpener] = None,
                 cache_path: Union[str, "os.PathLike[str]", bool, None] = None,
                 cache_encryption_key: Union[bytes, str, None] = None, cache_key_store: Optional[str] = None,
                 cache_key_store_timeout_ms: Optional[int] = None, cache_migrate_plaintext: bool = False,
                 client_capabilities: Optional[Sequence[str]] = None,
                 request_headers: Optional[Mapping[str, str]] = None, async_workers: Optional[int] = None,
                 app_name: Optional[str] = None, app_version: Optional[str] = None,
                 proxy: Optional[str] = None, no_proxy: Optional[str] = None,
                 proxy_ca_bundle: Optional[str] = None, ca_bundle_system: Optional[bool] = None,
                 dpop: bool = False):
        self._handle: Optional[int] = None
        self._lock = threading.Lock()
        self._check_library()
        if client_id is None or not isinstance(client_id, str):
            raise errors.InvalidArgumentError("client_id must be a str", status=-1)
        config: Dict[str, Any] = {"v": 1, "client_id": client_id}
        for key, value in (("authority", authority), ("tenant_subdomain", tenant_subdomain), ("redirect_uri", redirect_uri),
                           ("connect_timeout_ms", connect_timeout_ms), ("request_timeout_ms", request_timeout_ms),
                           ("retry_after_max_s", retry_after_max_s), ("ca_bundle", ca_bundle),
                           ("authority_type", authority_type), ("post_logout_redirect_uri", post_logout_redirect_uri),
                           ("browser_command", browser_command), ("async_workers", async_workers),
                           ("app_name", app_name), ("app_version", app_version), ("proxy", proxy),
                           ("no_proxy", no_proxy), ("proxy_ca_bundle", proxy_ca_bundle),
                           ("ca_bundle_system", ca_bundle_system)):
            if value is not None:
                config[key] = value
        if cache_path is not None and cache_path is not False:
            cache: Dict[str, Any] = {"type": "file"}
            if cache_path is not True:
                cache["path"] = os.fspath(cache_path)
            if cache_encryption_key is not None:
                secret = cache_encryption_key
                cache["encryption_key"] = base64.b64encode(secret).decode() if isinstance(secret, bytes) else secret
            if cache_key_store is not None:
                cache["key_store"] = cache_key_store
            if cache_key_store_timeout_ms is not None:
                cache["key_store_timeout_ms"] = cache_key_store_timeout_ms
            if cache_migrate_plaintext:
                cache["migrate_plaintext_cache"] = True
            config["cache"] = cache
        elif cache_encryption_key is not None or cache_key_store is not None or cache_migrate_plaintext:
            raise errors.InvalidArgumentError(
                "cache_encryption_key, cache_key_store and cache_migrate_plaintext need cache_path", status=-1)
        if challenge_types is not None:
            config["challenge_types"] = list(challenge_types)
        if capabilities is not None:
            config["capabilities"] = list(capabilities)
        if client_capabilities is not None:
            config["client_capabilities"] = list(client_capabilities)
        if request_headers is not None:
            config["request_headers"] = dict(request_headers)
        if dpop:
            config["dpop"] = True
        if log_level not in _LEVELS:
            raise errors.InvalidArgumentError(f"log_level must be one of {', '.join(_LEVELS)}", status=-1)
        try:
            rc, handle, err = _native.client_new(config)
        except ValueError as e:
            raise errors.InvalidArgumentError(str(e), status=-1) from None
        if rc != 0:
            raise errors.from_document(rc, err)
        self._handle = handle
        # get_access_token's memo, by (scopes, force_refresh).
        self._token_requests: _calls.TokenMemos = {}
        self._log_callback: Optional[_native.CallbackPointer] = None
        self._browser_callback: Optional[_native.CallbackPointer] = None
        self.last_end_session_url: Optional[str] = None
        if _LEVELS[log_level] > 0:
            self._install_logger(_LEVELS[log_level], log_handler)
        if browser is not None:
            self._set_browser(browser)
        self._opened()

    def _check_library(self) -> None:
        """Before the client is made: raises when the loaded library cannot serve this kind of client."""

    def _opened(self) -> None:
        """After the client was made (the handle is set)."""

    def _free(self) -> bool:
        """Frees the handle, once: whether this call freed it."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is None:
            return False
        _native.lib.na_client_free(handle)
        return True

    def _install_logger(self, level: int, handler: Optional[LogHandler]) -> None:
        if handler is None:
            logger = logging.getLogger("nativeauth")

            def handler(lvl: int, message: str, correlation_id: Optional[str]) -> None:
                logger.log(_PY_LEVELS.get(lvl, logging.DEBUG), "%s%s", message, f" [{correlation_id}]" if correlation_id else "")

        def trampoline(lvl: int, message: bytes, correlation: Optional[bytes], _user: Any) -> None:
            try:
                handler(lvl, message.decode("utf-8", "replace"), correlation.decode() if correlation else None)
            except Exception:  # a failing handler must not unwind into C
                pass

        self._log_callback = _native.LOG_FN(trampoline)  # keep a reference for the C side
        _native.lib.na_client_set_log_callback(self._handle, level, self._log_callback, None)

    def dpop_proof(self, method: str, url: str, access_token: Optional[str] = None, nonce: Optional[str] = None, *,
                   account: Optional[str] = None) -> str:
        """A DPoP proof (RFC 9449) for a request this program sends itself with a DPoP-bound token
        (``AccessToken.token_type == "DPoP"``)::

            token = client.get_access_token(scopes)
            proof = client.dpop_proof("GET", url, token.access_token)
            requests.get(url, headers={"Authorization": f"DPoP {token.access_token}", "DPoP": proof})

        A new proof for every request. ``access_token`` (the token the request presents) adds its hash, ``ath``:
        give it for a resource. ``nonce``: the server's ``DPoP-Nonce`` (after a ``use_dpop_nonce`` challenge);
        without it, the last one the library saw from that origin. ``account`` as for `Client.get_access_token`.
        The key never leaves the library. Local and fast (tens of microseconds), so `nativeauth.aio.AsyncClient`
        has it as a plain method too. Raises DPoPUnsupportedError for an account whose tokens are bearer tokens."""
        handle = self._handle
        if handle is None:
            raise errors.ClientClosedError("the client is closed", status=-1)
        if not _native.DPOP:
            raise errors.NotSupportedError("the loaded libnativeauth has no na_dpop_proof", code="not_supported",
                                           status=-1)
        call = _calls.dpop_proof(method, url, access_token, nonce, account)
        try:
            rc, doc = _native.call("na_dpop_proof", handle, call.request)
        except ValueError as e:
            raise errors.InvalidArgumentError(str(e), status=-1) from None
        return call.result(rc, doc)

    def _set_browser(self, browser: Optional[BrowserOpener]) -> None:
        """`Client.set_browser`."""
        handle = self._handle
        if handle is None:
            raise errors.ClientClosedError("the client is closed", status=-1)
        if browser is not None and not callable(browser):
            raise errors.InvalidArgumentError("browser must be callable", status=-1)
        thunk: Optional[_native.CallbackPointer] = None
        if browser is not None:
            opener = browser

            def trampoline(url: bytes, _user: Any) -> int:
                try:
                    return 0 if opener(url.decode("utf-8")) else 1
                except Exception:  # a failing opener must not unwind into C
                    return 1

            thunk = _native.BROWSER_FN(trampoline)
        # The previous thunk stays referenced until the C call returned: the library may be running it on another
        # thread until then, and never calls it afterwards.
        previous = self._browser_callback
        rc = _native.lib.na_client_set_browser_callback(handle, thunk if thunk is not None else _native.BROWSER_FN(),
                                                        None)
        if rc == -7:
            raise errors.FlowInvalidError("set_browser was called from inside the browser opener", code="flow_invalid",
                                          status=rc)
        if rc != 0:
            raise errors.InvalidArgumentError("the client is closed or invalid", status=rc)
        self._browser_callback = thunk  # keep a reference for the C side
        del previous


class Client(_ClientCore):
    """A native-authentication client for one app registration.

    >>> with Client(authority="https://contoso.ciamlogin.com/contoso.onmicrosoft.com",
    ...             client_id="00001111-aaaa-2222-bbbb-3333cccc4444") as client:
    ...     state = client.sign_in("ann@contoso.com", "…", scopes=["api://…/ToDoList.Read"])

    Give ``authority`` or ``tenant_subdomain``. Other settings mirror the C configuration (see docs/configuration.md):
    ``challenge_types`` (default password and oob), ``capabilities`` ("mfa_required", "registration_required": MFA
    and strong-auth registration in the app; without them such a sign-in raises BrowserRequiredError — not to be
    confused with ``client_capabilities``),
    ``redirect_uri``, ``connect_timeout_ms``, ``request_timeout_ms``, ``ca_bundle``, ``log_level`` ("off" … "verbose"),
    ``authority_type`` ("ciam", "aad" or "oidc" for any OpenID Connect provider), ``post_logout_redirect_uri``,
    ``browser_command``, and ``browser``: a callable ``browser(url) -> bool`` that opens URLs for the browser flows
    (it must return without waiting for the sign-in; default: ``browser_command``, ``$BROWSER``, ``xdg-open`` on a
    desktop — the Windows browser under WSL, none over SSH or without a display: BrowserUnavailableError says why).
    ``cache_path`` keeps tokens in that file (an absolute path; ``cache_path=True`` means the default,
    ``$XDG_CACHE_HOME/nativeauth/token_cache.json``) in MSAL's unified token cache format, shared with other processes
    and with MSAL for Python; ``cache_encryption_key`` (32 bytes, or their base64) encrypts it with AES-256-GCM, and
    ``cache_key_store`` ("secret_service", "kernel_keyring" or "auto") encrypts it with a key nobody has to manage:
    made on first use and kept in the user's Secret Service (GNOME Keyring, KWallet, …) or persistent kernel keyring
    (``cache_key_store_timeout_ms`` bounds each D-Bus wait, default 2000); not both. No store reachable raises
    KeyringUnavailableError — never a silent plaintext file. An encrypted cache never reads a plaintext file in its
    place (CacheKeyInvalidError, the file left alone) unless ``cache_migrate_plaintext=True`` asks to encrypt it once,
    keeping its sign-ins. Without ``cache_path`` tokens live in memory only.
    ``client_capabilities`` (e.g. ``["cp1"]``: this app answers claims challenges) are sent with every token and
    authorization request as ``claims`` ``{"access_token":{"xms_cc":{"values":[…]}}}``, merged with the request's own
    claims as MSAL does. ``request_headers`` (``{"x-name": "value"}``: a fraud or bot protection vendor's) go with
    every request to the authority (native auth, token), never to APIs or other origins; names start with ``x-``
    (not ``x-ms-``, ``x-client-``, ``x-broker-``, ``x-app-``: MSAL's), values have no control characters.
    ``app_name`` and ``app_version`` (1–128 printable ASCII characters each) are sent to the authority as MSAL's
    ``x-app-name`` and ``x-app-ver`` headers, beside the library's own server telemetry.
    ``proxy`` (``"http://[user:password@]host:port"``, also ``https://``; ``""``: none) wins over the environment's
    ``https_proxy`` / ``all_proxy``; ``no_proxy`` replaces ``NO_PROXY``; ``localhost``, ``127.0.0.1`` and ``[::1]``
    never go through a proxy. ``proxy_ca_bundle`` verifies an https proxy. ``ca_bundle`` alone replaces the system's
    CAs; with ``ca_bundle_system=True`` it adds to them (a TLS-inspecting proxy's CA). The proxy's password never
    appears in errors, logs or `info` (which shows ``proxy`` as ``scheme://host:port``).
    ``dpop=True`` (``authority_type="oidc"`` only) asks for sender-constrained tokens (DPoP, RFC 9449): each sign-in
    makes a P-256 key for its account, kept with the account in the cache (sealed like the refresh token) and never
    exported, and its tokens are bound to it — `AccessToken.token_type` is ``"DPoP"``, `call_api` sends them with
    proofs, and `dpop_proof` makes proofs for requests you send yourself. A provider whose discovery does not offer
    ES256 proofs raises DPoPUnsupportedError at the first call that needs it; never a silent bearer token.
    Log lines go to ``log_handler(level, message, correlation_id)`` or, by default, to the ``nativeauth`` logger of the
    ``logging`` module; they never contain secrets or usernames. ``async_workers`` (1..64, default 4) is for
    `nativeauth.aio.AsyncClient`, which takes the same arguments: how many library threads run its calls at once. A
    ``Client`` runs each call on its caller's thread.

    Calls block (they release the GIL) and may be made from many threads; ``close()`` is idempotent and safe while
    other threads are inside calls.
    """

    last_end_session_url: Optional[str]
    """The provider's end-session URL from the last `sign_out` (``None`` when it had none)."""

    # -- lifecycle -------------------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        return self._handle is None

    def set_browser(self, browser: Optional[BrowserOpener]) -> None:
        """Sets the callable that opens URLs for the browser flows (``None``: the system's opener). It is called on
        the thread running the sign-in (or sign-out) call — the caller's for a `Client`, one of the library's workers
        for an `nativeauth.aio.AsyncClient` — and must return (True when it opened the URL) without waiting
        for the sign-in to finish. The URLs it gets are one-time addresses on the library's loopback listener, which
        send the browser on to the provider (the authorization URL itself only for a custom-scheme redirect URI).

        The opener current when the browser is opened is used (not the one current when the sign-in started), and
        once ``set_browser`` returns the previous opener is never called again: it waits for calls of it already
        running on other threads. Called from inside the opener itself it raises FlowInvalidError (the status
        NA_ESTATE) and changes nothing."""
        self._set_browser(browser)

    def close(self) -> None:
        """Frees the client (tokens are wiped). Idempotent; calls racing it on other threads finish or raise
        ClientClosedError."""
        self._free()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # -- plumbing --------------------------------------------------------------------------------------------------

    def _run(self, call: _calls.Call[_T]) -> _T:
        handle = self._handle
        if handle is None:
            raise errors.ClientClosedError("the client is closed", status=-1)
        try:
            rc, doc = _native.call("na_" + call.name, handle, call.request)
        except ValueError as e:
            raise errors.InvalidArgumentError(str(e), status=-1) from None
        return call.result(rc, doc)

    def _run_raw(self, call: _calls.RawCall[_T]) -> _T:
        handle = self._handle
        if handle is None:
            raise errors.ClientClosedError("the client is closed", status=-1)
        rc, raw = _native.call_raw(call.function, handle, call.request)
        return call.result(rc, raw)

    def _state(self, doc: Mapping[str, Any]) -> State:
        return state_from_json(_Flows(self), doc)

    # -- native authentication -------------------------------------------------------------------------------------

    def sign_in(self, username: str, password: Optional[str] = None, *, scopes: Optional[Sequence[str]] = None,
                claims: Union[Mapping[str, Any], str, None] = None,
                request_headers: Optional[Mapping[str, str]] = None) -> State:
        """Signs in with email + password, or starts an email-code sign-in (no password). Returns ``SignedIn``,
        ``PasswordRequired``, ``CodeRequired``, ``MfaRequired`` or ``RegistrationRequired``. ``request_headers``
        (``x-`` headers, as the client's) go with this flow's requests, beside the client's.

        Raises InvalidCredentialsError (whose ``state`` lets you retry the password), UserNotFoundError,
        BrowserRequiredError, … ."""
        return self._run(_calls.sign_in(self._state, username, password, scopes, claims, request_headers))

    def sign_up(self, username: str, password: Optional[str] = None, *, attributes: Optional[Mapping[str, Any]] = None,
                request_headers: Optional[Mapping[str, str]] = None) -> State:
        """Starts a sign-up; returns ``CodeRequired`` (the email is verified first). ``request_headers`` as for
        `sign_in`."""
        return self._run(_calls.sign_up(self._state, username, password, attributes, request_headers))

    def reset_password(self, username: str, *, request_headers: Optional[Mapping[str, str]] = None) -> State:
        """Starts a password reset; returns ``CodeRequired``. ``request_headers`` as for `sign_in`."""
        return self._run(_calls.reset_password(self._state, username, request_headers))

    def sign_in_interactive(self, scopes: Optional[Sequence[str]] = None, *, login_hint: Optional[str] = None,
                            prompt: Optional[str] = None, domain_hint: Optional[str] = None,
                            claims: Union[Mapping[str, Any], str, None] = None,
                            extra_query_parameters: Optional[Mapping[str, str]] = None,
                            response_mode: Optional[str] = None, browser: str = "system",
                            timeout: Optional[float] = None) -> State:
        """Signs a user in through the browser (authorization code + PKCE, loopback redirect), as MSAL's
        ``acquire_token_interactive``. With ``browser="system"`` (default) a browser is opened and the call returns
        ``SignedIn``; with ``browser="none"`` it returns ``BrowserPending`` with the provider's URL for the app to
        show (or load in its own web view), then ``submit_redirect()`` or ``wait()``. With a loopback redirect URI a
        browser the library opens gets a one-time start page on the library's listener, which sends it on to the
        provider: the provider's URL, with its ``state`` and ``nonce``, never appears on a command line. A second
        fetch of that page stops the sign-in (FlowInvalidError).
        ``prompt`` is "select_account", "login", "consent", "none" or "create"; ``timeout`` (seconds, default 300)
        bounds the whole sign-in. Raises BrowserUnavailableError (the sign-in has ended; start again with
        ``browser="none"`` to show an address), AccessDeniedError, InteractionRequiredError, IdTokenInvalidError,
        RequestTimeoutError, CancelledError, FlowInvalidError."""
        return self._run(_calls.sign_in_interactive(self._state, scopes, login_hint, prompt, domain_hint, claims,
                                                    extra_query_parameters, response_mode, browser, timeout))

    def sign_in_device_code(self, scopes: Optional[Sequence[str]] = None) -> State:
        """Starts a device-code sign-in for machines without a browser: returns ``DeviceCodeRequired`` (show its
        ``message``, then ``wait()``). Raises NotSupportedError when the provider has no device-code endpoint."""
        return self._run(_calls.sign_in_device_code(self._state, scopes))

    def get_access_token(self, scopes: Optional[Sequence[str]] = None, *, force_refresh: bool = False,
                         claims: Union[Mapping[str, Any], str, None] = None,
                         account: Optional[str] = None) -> AccessToken:
        """An access token for ``scopes`` — without any, the sign-in's own scopes: from the cache, or one refresh
        shared by concurrent callers. ``account`` (a home_account_id or a username) picks one of several signed-in
        accounts. ``claims`` (a mapping, or the JSON text ``InteractionRequiredError.claims`` and
        `parse_www_authenticate` give) asks for a token with those claims, never from the cache. Raises
        DeclinedScopesError when the server grants fewer scopes than asked,
        InteractionRequiredError when the user must sign in again (its ``login_hint`` is for
        ``sign_in_interactive``), AccountRequiredError, ThrottledError, … ."""
        # The hot path: the request is encoded once per scope set, and an answer identical to the previous one (a
        # cached token) is not parsed again.
        call = _calls.get_access_token(self._token_requests, scopes, force_refresh, claims, account)
        if isinstance(call, _calls.RawCall):
            return self._run_raw(call)
        return self._run(call)

    def call_api(self, url: str, scopes: Optional[Sequence[str]] = None, *, method: str = "GET",
                 headers: Optional[Mapping[str, str]] = None,
                 body: Union[None, str, Mapping[str, Any], Sequence[Any]] = None, force_refresh: bool = False,
                 account: Optional[str] = None) -> ApiResponse:
        """Calls an API with ``Authorization: Bearer`` (a DPoP-bound token: ``Authorization: DPoP`` and a proof, with
        one resend for the API's nonce challenge) and a token for ``scopes`` (without any: the sign-in's own
        scopes), from the same logic as `get_access_token`. A ``str`` body is sent as is, a mapping or list as JSON.
        An HTTP error status is a response (see `ApiResponse.ok`), not an exception; errors getting the token raise
        as for `get_access_token`. One challenge of the API's 401 is answered and the call retried once: a refreshed
        token for ``invalid_token``, a token with the claims of a claims challenge (``insufficient_claims``:
        Conditional Access, Continuous Access Evaluation — announce ``client_capabilities=["cp1"]``); when that needs
        the user, InteractionRequiredError carries the ``claims`` for `sign_in_interactive`."""
        return self._run(_calls.call_api(url, scopes, method, headers, body, force_refresh, account))

    @property
    def account(self) -> Optional[Account]:
        """The signed-in account with its ``id_token``, or ``None``. Raises `nativeauth.AccountRequiredError` when
        several are signed in: use `accounts`."""
        return self._run(_calls.get_account())

    @property
    def accounts(self) -> List[Account]:
        """Every signed-in account (with its ``id_token``), ordered by username."""
        return self._run(_calls.get_accounts())

    def sign_out(self, account: Optional[str] = None, *, all: bool = False, browser: str = "none") -> bool:
        """Forgets an account's tokens (the only one, ``account``, or with ``all`` every one). With
        ``browser="system"`` the provider's end-session page is opened too (its URL is ``last_end_session_url``):
        the browser gets a one-time address on 127.0.0.1 that sends it there, and the call waits up to 10 seconds for
        the browser to fetch it. Returns whether someone was signed out."""
        signed_out, self.last_end_session_url = self._run(_calls.sign_out(account, all, browser))
        return signed_out

    @property
    def info(self) -> ClientInfo:
        """``na_client_info``'s document: the library ``version`` and the effective ``config`` (see
        `nativeauth.documents.ClientConfig`)."""
        return self._run(_calls.client_info())



class _Flows:
    """`nativeauth.states.FlowClient` for a `Client`: what its flow states hold and call to continue (the client's
    own plumbing stays private to this module)."""

    __slots__ = ("_client",)

    def __init__(self, client: Client) -> None:
        self._client = client

    def submit_flow(self, state: FlowState, request: Dict[str, Any]) -> State:
        client = self._client
        return client._run(_calls.flow_submit(client._state, state, request))


def parse_www_authenticate(header: str) -> WWWAuthenticate:
    """Parses a ``WWW-Authenticate`` header (``na_parse_www_authenticate``; no client, no I/O): for code that calls
    APIs itself and must act on a claims challenge (Conditional Access, Continuous Access Evaluation)::

        response = requests.get(url, headers={"Authorization": f"Bearer {token.access_token}"})
        if response.status_code == 401:
            challenge = nativeauth.parse_www_authenticate(response.headers.get("WWW-Authenticate", ""))
            if challenge.claims:
                token = client.get_access_token(scopes, claims=challenge.claims)

    ``header`` is the field's value (several fields joined with ``", "``). The result holds every challenge — its
    scheme as sent, its parameters (names in lower case, values unquoted; a name sent twice keeps its first value),
    its token68, its claims decoded from base64 or base64url as MSAL.NET and the Azure SDK decode them — and
    ``claims``, the claims challenge: that of the first ``Bearer`` challenge whose ``error`` is
    ``insufficient_claims``. Claims that are not a JSON object are left out (the raw value stays in ``params``).

    Raises `nativeauth.InvalidArgumentError` when ``header`` is not a str, holds a NUL character or a lone surrogate,
    is larger than 64 KiB in UTF-8, or is not the header's grammar (the message names the offset, never the text)."""
    if not isinstance(header, str):
        raise errors.InvalidArgumentError(f"header must be a str, not {type(header).__name__}", status=-1)
    if "\0" in header:  # C would read the header only up to it
        raise errors.InvalidArgumentError("header contains a NUL character", status=-1)
    try:
        data = header.encode("utf-8")
    except UnicodeEncodeError:
        raise errors.InvalidArgumentError("header cannot be encoded as UTF-8 (a lone surrogate)", status=-1) from None
    rc, doc = _native.parse_www_authenticate(data)
    if rc != 0:
        raise errors.from_document(rc, doc)
    return WWWAuthenticate.from_json(doc)
