"""The `Client`: one configured libnativeauth client for one app registration, usable from many threads; and
`parse_www_authenticate`, the one call that needs no client."""
from __future__ import annotations

import base64
import ctypes
import logging
import os
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

from . import _native, errors
from .documents import ClientInfo
from .states import (AccessToken, Account, ApiResponse, FlowState, PasswordRequired, State, WWWAuthenticate,
                     state_from_json)

__all__ = ["Client", "LogHandler", "BrowserOpener", "parse_www_authenticate"]

_GET_ACCESS_TOKEN = _native.lib.na_get_access_token
_LEVELS = {"off": 0, "error": 1, "warning": 2, "info": 3, "verbose": 4}
_PY_LEVELS = {1: logging.ERROR, 2: logging.WARNING, 3: logging.INFO, 4: logging.DEBUG}

LogHandler = Callable[[int, str, Optional[str]], None]
"""``log_handler(level, message, correlation_id)``: ``level`` 1 (error) … 4 (verbose)."""
BrowserOpener = Callable[[str], bool]
"""``browser(url) -> bool``: opens ``url`` and returns whether it could, without waiting for the sign-in."""


class _TokenMemo:
    """get_access_token's memo for one scope set: the encoded request, the last answer's bytes, its AccessToken."""

    __slots__ = ("request", "raw", "token")

    def __init__(self, request: bytes) -> None:
        self.request = request
        self.raw: Optional[bytes] = None
        self.token: Optional[AccessToken] = None


class Client:
    """A native-authentication client for one app registration.

    >>> with Client(authority="https://contoso.ciamlogin.com/contoso.onmicrosoft.com",
    ...             client_id="00001111-aaaa-2222-bbbb-3333cccc4444") as client:
    ...     state = client.sign_in("ann@contoso.com", "…", scopes=["api://…/ToDoList.Read"])

    Give ``authority`` or ``tenant_subdomain``. Other settings mirror the C configuration (see docs/configuration.md):
    ``challenge_types`` (default password and oob), ``capabilities`` ("mfa_required", "registration_required"),
    ``redirect_uri``, ``connect_timeout_ms``, ``request_timeout_ms``, ``ca_bundle``, ``log_level`` ("off" … "verbose"),
    ``authority_type`` ("ciam", "aad" or "oidc" for any OpenID Connect provider), ``post_logout_redirect_uri``,
    ``browser_command``, and ``browser``: a callable ``browser(url) -> bool`` that opens URLs for the browser flows
    (it must return without waiting for the sign-in; default: ``browser_command``, ``$BROWSER``, ``xdg-open``).
    ``cache_path`` keeps tokens in that file (an absolute path; ``cache_path=True`` means the default,
    ``$XDG_CACHE_HOME/nativeauth/token_cache.json``) in MSAL's unified token cache format, shared with other processes
    and with MSAL for Python; ``cache_encryption_key`` (32 bytes, or their base64) encrypts it with AES-256-GCM, and
    ``cache_key_store`` ("secret_service", "kernel_keyring" or "auto") encrypts it with a key nobody has to manage:
    made on first use and kept in the user's Secret Service (GNOME Keyring, KWallet, …) or persistent kernel keyring
    (``cache_key_store_timeout_ms`` bounds each D-Bus wait, default 2000); not both. No store reachable raises
    KeyringUnavailableError — never a silent plaintext file. Without ``cache_path`` tokens live in memory only.
    ``client_capabilities`` (e.g. ``["cp1"]``: this app answers claims challenges) are sent with every token and
    authorization request as ``claims`` ``{"access_token":{"xms_cc":{"values":[…]}}}``, merged with the request's own
    claims as MSAL does. ``request_headers`` (``{"x-name": "value"}``: a fraud or bot protection vendor's) go with
    every request to the authority (native auth, token), never to APIs or other origins; names start with ``x-``
    (not ``x-ms-``, ``x-client-``, ``x-broker-``, ``x-app-``: MSAL's), values have no control characters.
    Log lines go to ``log_handler(level, message, correlation_id)`` or, by default, to the ``nativeauth`` logger of the
    ``logging`` module; they never contain secrets or usernames.

    Calls block (they release the GIL) and may be made from many threads; ``close()`` is idempotent and safe while
    other threads are inside calls.
    """

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
                 cache_key_store_timeout_ms: Optional[int] = None,
                 client_capabilities: Optional[Sequence[str]] = None,
                 request_headers: Optional[Mapping[str, str]] = None):
        if client_id is None or not isinstance(client_id, str):
            raise errors.InvalidArgumentError("client_id must be a str", status=-1)
        config: Dict[str, Any] = {"v": 1, "client_id": client_id}
        for key, value in (("authority", authority), ("tenant_subdomain", tenant_subdomain), ("redirect_uri", redirect_uri),
                           ("connect_timeout_ms", connect_timeout_ms), ("request_timeout_ms", request_timeout_ms),
                           ("retry_after_max_s", retry_after_max_s), ("ca_bundle", ca_bundle),
                           ("authority_type", authority_type), ("post_logout_redirect_uri", post_logout_redirect_uri),
                           ("browser_command", browser_command)):
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
            config["cache"] = cache
        elif cache_encryption_key is not None or cache_key_store is not None:
            raise errors.InvalidArgumentError("cache_encryption_key and cache_key_store need cache_path", status=-1)
        if challenge_types is not None:
            config["challenge_types"] = list(challenge_types)
        if capabilities is not None:
            config["capabilities"] = list(capabilities)
        if client_capabilities is not None:
            config["client_capabilities"] = list(client_capabilities)
        if request_headers is not None:
            config["request_headers"] = dict(request_headers)
        if log_level not in _LEVELS:
            raise errors.InvalidArgumentError(f"log_level must be one of {', '.join(_LEVELS)}", status=-1)
        try:
            rc, handle, err = _native.client_new(config)
        except ValueError as e:
            raise errors.InvalidArgumentError(str(e), status=-1) from None
        if rc != 0:
            raise errors.from_document(rc, err)
        self._handle: Optional[int] = handle
        self._lock = threading.Lock()
        # get_access_token's memo, by (scopes, force_refresh).
        self._token_requests: Dict[Tuple[Tuple[str, ...], bool], _TokenMemo] = {}
        self._log_callback: Optional[_native.CallbackPointer] = None
        self._browser_callback: Optional[_native.CallbackPointer] = None
        self.last_end_session_url: Optional[str] = None
        """The provider's end-session URL from the last `sign_out` (``None`` when it had none)."""
        if _LEVELS[log_level] > 0:
            self._install_logger(_LEVELS[log_level], log_handler)
        if browser is not None:
            self.set_browser(browser)

    # -- lifecycle -------------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Frees the client (tokens are wiped). Idempotent; calls racing it on other threads finish or raise
        ClientClosedError."""
        with self._lock:
            handle, self._handle = self._handle, None
        if handle is not None:
            _native.lib.na_client_free(handle)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    @property
    def closed(self) -> bool:
        """Whether `close` was called."""
        return self._handle is None

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

    def set_browser(self, browser: Optional[BrowserOpener]) -> None:
        """Sets the callable that opens URLs for the browser flows (``None``: the system's opener). It is called on
        the thread of the sign-in (or sign-out) call and must return (True when it opened the URL) without waiting
        for the sign-in to finish. The URLs it gets are one-time addresses on the library's loopback listener, which
        send the browser on to the provider (the authorization URL itself only for a custom-scheme redirect URI).

        The opener current when the browser is opened is used (not the one current when the sign-in started), and
        once ``set_browser`` returns the previous opener is never called again: it waits for calls of it already
        running on other threads. Called from inside the opener itself it raises FlowInvalidError (the status
        NA_ESTATE) and changes nothing."""
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

    # -- plumbing --------------------------------------------------------------------------------------------------

    def _call(self, name: str, request: Dict[str, Any], state: Optional[State] = None) -> Dict[str, Any]:
        handle = self._handle
        if handle is None:
            raise errors.ClientClosedError("the client is closed", status=-1)
        try:
            rc, doc = _native.call(name, handle, {"v": 1, **request})
        except ValueError as e:
            raise errors.InvalidArgumentError(str(e), status=-1) from None
        if rc != 0:
            raise errors.from_document(rc, doc, state=state)
        return cast(Dict[str, Any], doc)

    def _state(self, doc: Mapping[str, Any]) -> State:
        return state_from_json(self, doc)

    def _submit_flow(self, state: FlowState, request: Dict[str, Any]) -> State:
        # nativeauth.states.FlowClient: what a FlowState calls to continue its flow.
        try:
            return self._state(self._call("na_flow_submit", request))
        except errors.NativeAuthError as e:
            if e.details.get("flow") == state.flow:
                e.state = state  # retryable: the same state continues
            raise

    def _retry_state(self, e: errors.NativeAuthError) -> None:
        flow = e.details.get("flow")
        if flow and e.state is None:
            e.state = PasswordRequired("sign_in", flow, self)

    # -- native authentication -------------------------------------------------------------------------------------

    def sign_in(self, username: str, password: Optional[str] = None, *, scopes: Optional[Sequence[str]] = None,
                claims: Union[Mapping[str, Any], str, None] = None,
                request_headers: Optional[Mapping[str, str]] = None) -> State:
        """Signs in with email + password, or starts an email-code sign-in (no password). Returns ``SignedIn``,
        ``PasswordRequired``, ``CodeRequired``, ``MfaRequired`` or ``RegistrationRequired``. ``request_headers``
        (``x-`` headers, as the client's) go with this flow's requests, beside the client's.

        Raises InvalidCredentialsError (whose ``state`` lets you retry the password), UserNotFoundError,
        BrowserRequiredError, … ."""
        req: Dict[str, Any] = {"username": _str("username", username)}
        if password is not None:
            req["password"] = _str("password", password)
        if scopes is not None:
            req["scopes"] = _scopes(scopes)
        if claims is not None:
            req["claims"] = _claims(claims)
        if request_headers is not None:
            req["request_headers"] = dict(request_headers)
        try:
            return self._state(self._call("na_sign_in", req))
        except errors.NativeAuthError as e:
            self._retry_state(e)
            raise

    def sign_up(self, username: str, password: Optional[str] = None, *, attributes: Optional[Mapping[str, Any]] = None,
                request_headers: Optional[Mapping[str, str]] = None) -> State:
        """Starts a sign-up; returns ``CodeRequired`` (the email is verified first). ``request_headers`` as for
        `sign_in`."""
        req: Dict[str, Any] = {"username": _str("username", username)}
        if password is not None:
            req["password"] = _str("password", password)
        if attributes is not None:
            if not isinstance(attributes, Mapping):
                raise errors.InvalidArgumentError("attributes must be a mapping", status=-1)
            req["attributes"] = dict(attributes)
        if request_headers is not None:
            req["request_headers"] = dict(request_headers)
        return self._state(self._call("na_sign_up", req))

    def reset_password(self, username: str, *, request_headers: Optional[Mapping[str, str]] = None) -> State:
        """Starts a password reset; returns ``CodeRequired``. ``request_headers`` as for `sign_in`."""
        req: Dict[str, Any] = {"username": _str("username", username)}
        if request_headers is not None:
            req["request_headers"] = dict(request_headers)
        return self._state(self._call("na_reset_password", req))

    # -- browser and device code -----------------------------------------------------------------------------------

    def sign_in_interactive(self, scopes: Optional[Sequence[str]] = None, *, login_hint: Optional[str] = None,
                            prompt: Optional[str] = None, domain_hint: Optional[str] = None,
                            claims: Union[Mapping[str, Any], str, None] = None,
                            extra_query_parameters: Optional[Mapping[str, str]] = None,
                            response_mode: Optional[str] = None, browser: str = "system",
                            timeout: Optional[float] = None) -> State:
        """Signs a user in through the browser (authorization code + PKCE, loopback redirect), as MSAL's
        ``acquire_token_interactive``. With ``browser="system"`` (default) a browser is opened and the call returns
        ``SignedIn``; with ``browser="none"`` it returns ``BrowserPending`` for the app to present and ``wait()`` on.
        With a loopback redirect URI the browser (and ``authorization_url``) gets a one-time start page on the
        library's listener, which sends it on to the provider: the provider's URL, with its ``state`` and ``nonce``,
        never appears on a command line. A second fetch of that page stops the sign-in (FlowInvalidError).
        ``prompt`` is "select_account", "login", "consent", "none" or "create"; ``timeout`` (seconds, default 300)
        bounds the whole sign-in. Raises BrowserUnavailableError (the sign-in has ended; start again with
        ``browser="none"`` to show an address), AccessDeniedError, InteractionRequiredError, IdTokenInvalidError,
        RequestTimeoutError, CancelledError, FlowInvalidError."""
        req: Dict[str, Any] = {"browser": _str("browser", browser)}
        if scopes is not None:
            req["scopes"] = _scopes(scopes)
        for key, value in (("login_hint", login_hint), ("prompt", prompt), ("domain_hint", domain_hint),
                           ("response_mode", response_mode)):
            if value is not None:
                req[key] = _str(key, value)
        if claims is not None:
            req["claims"] = _claims(claims)
        if extra_query_parameters is not None:
            req["extra_query_parameters"] = dict(extra_query_parameters)
        if timeout is not None:
            req["timeout_ms"] = int(timeout * 1000)
        return self._state(self._call("na_sign_in_interactive", req))

    def sign_in_device_code(self, scopes: Optional[Sequence[str]] = None) -> State:
        """Starts a device-code sign-in for machines without a browser: returns ``DeviceCodeRequired`` (show its
        ``message``, then ``wait()``). Raises NotSupportedError when the provider has no device-code endpoint."""
        req: Dict[str, Any] = {}
        if scopes is not None:
            req["scopes"] = _scopes(scopes)
        return self._state(self._call("na_sign_in_device_code", req))

    # -- tokens, APIs, account -------------------------------------------------------------------------------------

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
        if scopes is None:
            scopes = []
        if claims is not None or account is not None:
            req: Dict[str, Any] = {"scopes": _scopes(scopes), "force_refresh": bool(force_refresh)}
            if claims is not None:
                req["claims"] = _claims(claims)
            if account is not None:
                req["account"] = _str("account", account)
            return AccessToken.from_json(self._call("na_get_access_token", req))
        # The hot path: the request is encoded once per scope set, and an answer identical to the previous one (a
        # cached token) is not parsed again.
        key: Optional[Tuple[Tuple[str, ...], bool]] = None
        memo: Optional[_TokenMemo] = None
        if isinstance(scopes, (list, tuple)):
            key = (tuple(scopes), force_refresh)
            try:
                memo = self._token_requests.get(key)
            except TypeError:  # an unhashable element: no memo; _scopes() below refuses it
                key = None
        if memo is None:
            request = {"v": 1, "scopes": _scopes(scopes), "force_refresh": bool(force_refresh)}
            try:
                memo = _TokenMemo(_native.encode(request))
            except ValueError as e:
                raise errors.InvalidArgumentError(str(e), status=-1) from None
            if key is not None:
                if len(self._token_requests) >= 256:
                    self._token_requests.clear()
                self._token_requests[key] = memo
        handle = self._handle
        if handle is None:
            raise errors.ClientClosedError("the client is closed", status=-1)
        rc, raw = _native.call_raw(_GET_ACCESS_TOKEN, handle, memo.request)
        cached = memo.token
        if rc == 0 and cached is not None and raw == memo.raw:
            return cached
        rc, doc = _native.parse(rc, raw.decode("utf-8", errors="replace"))
        if rc != 0:
            raise errors.from_document(rc, doc)
        token = AccessToken.from_json(doc)
        memo.raw, memo.token = raw, token
        return token

    def call_api(self, url: str, scopes: Optional[Sequence[str]] = None, *, method: str = "GET",
                 headers: Optional[Mapping[str, str]] = None,
                 body: Union[None, str, Mapping[str, Any], Sequence[Any]] = None, force_refresh: bool = False,
                 account: Optional[str] = None) -> ApiResponse:
        """Calls an API with ``Authorization: Bearer`` and a token for ``scopes`` (without any: the sign-in's own
        scopes), from the same logic as `get_access_token`. A ``str`` body is sent as is, a mapping or list as JSON.
        An HTTP error status is a response (see `ApiResponse.ok`), not an exception; errors getting the token raise
        as for `get_access_token`. One challenge of the API's 401 is answered and the call retried once: a refreshed
        token for ``invalid_token``, a token with the claims of a claims challenge (``insufficient_claims``:
        Conditional Access, Continuous Access Evaluation — announce ``client_capabilities=["cp1"]``); when that needs
        the user, InteractionRequiredError carries the ``claims`` for `sign_in_interactive`."""
        req: Dict[str, Any] = {"url": _str("url", url), "method": _str("method", method),
                               "force_refresh": bool(force_refresh)}
        if scopes is not None:
            req["scopes"] = _scopes(scopes)
        if account is not None:
            req["account"] = _str("account", account)
        if headers is not None:
            req["headers"] = dict(headers)
        if body is not None:
            req["body"] = body
        return ApiResponse.from_json(self._call("na_call_api", req))

    @property
    def account(self) -> Optional[Account]:
        """The signed-in account with its ``id_token``, or ``None``. Raises `nativeauth.AccountRequiredError` when
        several are signed in: use `accounts`."""
        try:
            return Account.from_json(self._call("na_get_account", {"include_id_token": True})["account"])
        except errors.NoAccountError:
            return None

    @property
    def accounts(self) -> List[Account]:
        """Every signed-in account (with its ``id_token``), ordered by username."""
        doc = self._call("na_get_accounts", {"include_id_token": True})
        return [Account.from_json(a) for a in doc.get("accounts", ())]

    def sign_out(self, account: Optional[str] = None, *, all: bool = False, browser: str = "none") -> bool:
        """Forgets an account's tokens (the only one, ``account``, or with ``all`` every one). With
        ``browser="system"`` the provider's end-session page is opened too (its URL is ``last_end_session_url``):
        the browser gets a one-time address on 127.0.0.1 that sends it there, and the call waits up to 10 seconds for
        the browser to fetch it. Returns whether someone was signed out."""
        req: Dict[str, Any] = {"all": bool(all), "browser": _str("browser", browser)}
        if account is not None:
            req["account"] = _str("account", account)
        doc = self._call("na_sign_out", req)
        url = doc.get("end_session_url")
        self.last_end_session_url = url if isinstance(url, str) else None
        return bool(doc.get("was_signed_in"))

    @property
    def info(self) -> ClientInfo:
        """``na_client_info``'s document: the library ``version`` and the effective ``config`` (see
        `nativeauth.documents.ClientConfig`)."""
        return cast(ClientInfo, self._call("na_client_info", {}))


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


def _str(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise errors.InvalidArgumentError(f"{name} must be a str, not {type(value).__name__}", status=-1)
    return value



def _claims(claims: Union[Mapping[str, Any], str]) -> Any:
    """A ``claims`` argument: a mapping, or the JSON text of an object as ``InteractionRequiredError.claims`` and
    `parse_www_authenticate` give it (the library checks it is an object)."""
    if isinstance(claims, str):
        return claims
    if not isinstance(claims, Mapping):
        raise errors.InvalidArgumentError("claims must be a mapping or the JSON text of an object", status=-1)
    return dict(claims)

def _scopes(scopes: Any) -> List[str]:
    try:
        items = None if isinstance(scopes, (str, bytes)) else list(scopes)
    except TypeError:
        items = None
    if items is None or not all(isinstance(s, str) for s in items):
        raise errors.InvalidArgumentError("scopes must be a sequence of str", status=-1)
    return items
