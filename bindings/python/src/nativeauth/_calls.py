"""The calls of a client, each in one place: the request document it sends and what its result document becomes (a
value, a state, or the exception to raise). `nativeauth.Client` makes them blocking (``na_<name>``) and
`nativeauth.aio.AsyncClient` starts them (``na_start``); neither builds a request or reads a result itself.

A `Call` is one operation ready to go: ``name`` (as ``na_start`` names it; the blocking function is ``na_<name>``),
``request`` (the document, ``"v"`` included) and ``result(status, parsed document)``, which returns the value or
raises. `RawCall` is the same for ``get_access_token``'s hot path: an encoded request and the result's bytes, so that
an answer identical to the previous one (a cached token) is neither encoded nor parsed again.

Arguments are checked here, before anything is sent: a wrong type raises `nativeauth.InvalidArgumentError`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, List, Mapping, Optional, Sequence, Tuple, TypeVar, Union, cast

from . import _native, errors
from .documents import ClientInfo
from .states import AccessToken, Account, ApiResponse, State

_T = TypeVar("_T")

StateMaker = Callable[[Mapping[str, Any]], State]
"""Makes the state of a flow result document for one client (its family of states, holding that client)."""


@dataclass(frozen=True)
class Call(Generic[_T]):
    """An operation: its name, its request document, and what becomes of its result."""

    name: str
    request: Dict[str, Any]
    result: Callable[[int, Any], _T]


class RawCall(Generic[_T]):
    """An operation whose request is already encoded and whose result is read from its bytes: ``name``, ``request``,
    ``result(status, result bytes)``, and ``function``, the blocking export (``na_<name>``) looked up once. A class
    with slots rather than a dataclass: `TokenMemo` is one, made once per scope set and reused by every call for it,
    so the hot path makes no object."""

    __slots__ = ("name", "request", "function")

    def __init__(self, name: str, request: bytes) -> None:
        self.name = name
        self.request = request
        self.function: Any = getattr(_native.lib, "na_" + name)

    def result(self, rc: int, raw: bytes) -> _T:
        raise NotImplementedError


def _call(name: str, request: Dict[str, Any], parse: Callable[[Dict[str, Any]], _T]) -> Call[_T]:
    """A call whose errors raise as they are and whose result document is read by ``parse``."""

    def result(rc: int, doc: Any) -> _T:
        if rc != 0:
            raise errors.from_document(rc, doc)
        return parse(doc)

    return Call(name, {"v": 1, **request}, result)


# -- native authentication ----------------------------------------------------------------------------------------

def sign_in(states: StateMaker, username: str, password: Optional[str], scopes: Optional[Sequence[str]],
            claims: Union[Mapping[str, Any], str, None], request_headers: Optional[Mapping[str, str]]) -> Call[State]:
    """``na_sign_in``. A refused password's error carries the `PasswordRequired` state that retries it."""
    req: Dict[str, Any] = {"username": _str("username", username)}
    if password is not None:
        req["password"] = _str("password", password)
    if scopes is not None:
        req["scopes"] = _scopes(scopes)
    if claims is not None:
        req["claims"] = _claims(claims)
    if request_headers is not None:
        req["request_headers"] = dict(request_headers)

    def result(rc: int, doc: Any) -> State:
        if rc != 0:
            e = errors.from_document(rc, doc)
            flow = e.details.get("flow")
            if flow and e.state is None:
                e.state = states({"status": "password_required", "flow_type": "sign_in", "flow": flow})
            raise e
        return states(doc)

    return Call("sign_in", {"v": 1, **req}, result)


def sign_up(states: StateMaker, username: str, password: Optional[str], attributes: Optional[Mapping[str, Any]],
            request_headers: Optional[Mapping[str, str]]) -> Call[State]:
    """``na_sign_up``."""
    req: Dict[str, Any] = {"username": _str("username", username)}
    if password is not None:
        req["password"] = _str("password", password)
    if attributes is not None:
        if not isinstance(attributes, Mapping):
            raise errors.InvalidArgumentError("attributes must be a mapping", status=-1)
        req["attributes"] = dict(attributes)
    if request_headers is not None:
        req["request_headers"] = dict(request_headers)
    return _call("sign_up", req, states)


def reset_password(states: StateMaker, username: str, request_headers: Optional[Mapping[str, str]]) -> Call[State]:
    """``na_reset_password``."""
    req: Dict[str, Any] = {"username": _str("username", username)}
    if request_headers is not None:
        req["request_headers"] = dict(request_headers)
    return _call("reset_password", req, states)


def flow_submit(states: StateMaker, state: Any, request: Dict[str, Any]) -> Call[State]:
    """``na_flow_submit`` for ``state`` (a flow state of either kind; ``request`` holds its ``"flow"``). A retryable
    error (one that names the same flow) carries ``state`` as ``error.state``: the same state continues."""

    def result(rc: int, doc: Any) -> State:
        if rc != 0:
            e = errors.from_document(rc, doc)
            if e.details.get("flow") == state.flow:
                e.state = state
            raise e
        return states(doc)

    return Call("flow_submit", {"v": 1, **request}, result)


# -- browser and device code --------------------------------------------------------------------------------------

def sign_in_interactive(states: StateMaker, scopes: Optional[Sequence[str]], login_hint: Optional[str],
                        prompt: Optional[str], domain_hint: Optional[str],
                        claims: Union[Mapping[str, Any], str, None],
                        extra_query_parameters: Optional[Mapping[str, str]],
                        response_mode: Optional[str], browser: str, timeout: Optional[float]) -> Call[State]:
    """``na_sign_in_interactive``."""
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
    return _call("sign_in_interactive", req, states)


def sign_in_device_code(states: StateMaker, scopes: Optional[Sequence[str]]) -> Call[State]:
    """``na_sign_in_device_code``."""
    req: Dict[str, Any] = {}
    if scopes is not None:
        req["scopes"] = _scopes(scopes)
    return _call("sign_in_device_code", req, states)


# -- tokens, APIs, account ----------------------------------------------------------------------------------------

class TokenMemo(RawCall[AccessToken]):
    """get_access_token's memo for one scope set, and the call itself: the encoded request, and the last answer's
    bytes with the AccessToken made of them (one tuple, replaced whole: a thread never sees the bytes of one answer
    with the token of another)."""

    __slots__ = ("last",)

    def __init__(self, request: bytes) -> None:
        super().__init__("get_access_token", request)
        self.last: Optional[Tuple[bytes, AccessToken]] = None

    def result(self, rc: int, raw: bytes) -> AccessToken:
        """The token of an answer: the previous one's when the bytes are the same (a cached token), else parsed."""
        last = self.last
        if rc == 0 and last is not None and raw == last[0]:
            return last[1]
        rc, doc = _native.parse(rc, raw.decode("utf-8", errors="replace"))
        if rc != 0:
            raise errors.from_document(rc, doc)
        token = AccessToken.from_json(doc)
        self.last = (raw, token)
        return token


TokenMemos = Dict[Tuple[Tuple[str, ...], bool], TokenMemo]
"""A client's memos, by (scopes, force_refresh)."""


def get_access_token(memos: TokenMemos, scopes: Optional[Sequence[str]], force_refresh: bool,
                     claims: Union[Mapping[str, Any], str, None],
                     account: Optional[str]) -> Union[Call[AccessToken], RawCall[AccessToken]]:
    """``na_get_access_token``: with ``claims`` or ``account`` a plain call; otherwise the scope set's `TokenMemo`
    (made on its first use), whose result is parsed only when it differs from the previous answer."""
    if scopes is None:
        scopes = []
    if claims is not None or account is not None:
        req: Dict[str, Any] = {"scopes": _scopes(scopes), "force_refresh": bool(force_refresh)}
        if claims is not None:
            req["claims"] = _claims(claims)
        if account is not None:
            req["account"] = _str("account", account)
        return _call("get_access_token", req, AccessToken.from_json)
    key: Optional[Tuple[Tuple[str, ...], bool]] = None
    memo: Optional[TokenMemo] = None
    if isinstance(scopes, (list, tuple)):
        key = (tuple(scopes), force_refresh)
        try:
            memo = memos.get(key)
        except TypeError:  # an unhashable element: no memo; _scopes() below refuses it
            key = None
    if memo is None:
        request = {"v": 1, "scopes": _scopes(scopes), "force_refresh": bool(force_refresh)}
        try:
            memo = TokenMemo(_native.encode(request))
        except ValueError as e:
            raise errors.InvalidArgumentError(str(e), status=-1) from None
        if key is not None:
            if len(memos) >= 256:
                memos.clear()
            memos[key] = memo
    return memo


def call_api(url: str, scopes: Optional[Sequence[str]], method: str, headers: Optional[Mapping[str, str]],
             body: Union[None, str, Mapping[str, Any], Sequence[Any]], force_refresh: bool,
             account: Optional[str]) -> Call[ApiResponse]:
    """``na_call_api``."""
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
    return _call("call_api", req, ApiResponse.from_json)


def get_account() -> Call[Optional[Account]]:
    """``na_get_account`` with the ID token: the account, or ``None`` when nobody is signed in."""

    def result(rc: int, doc: Any) -> Optional[Account]:
        if rc != 0:
            e = errors.from_document(rc, doc)
            if isinstance(e, errors.NoAccountError):
                return None
            raise e
        return Account.from_json(doc["account"])

    return Call("get_account", {"v": 1, "include_id_token": True}, result)


def get_accounts() -> Call[List[Account]]:
    """``na_get_accounts`` with the ID tokens."""
    return _call("get_accounts", {"include_id_token": True},
                 lambda doc: [Account.from_json(a) for a in doc.get("accounts", ())])


def sign_out(account: Optional[str], all: bool, browser: str) -> Call[Tuple[bool, Optional[str]]]:
    """``na_sign_out``: whether someone was signed out, and the end-session URL (``None`` without one)."""
    req: Dict[str, Any] = {"all": bool(all), "browser": _str("browser", browser)}
    if account is not None:
        req["account"] = _str("account", account)

    def parse(doc: Dict[str, Any]) -> Tuple[bool, Optional[str]]:
        url = doc.get("end_session_url")
        return bool(doc.get("was_signed_in")), url if isinstance(url, str) else None

    return _call("sign_out", req, parse)


def dpop_proof(method: str, url: str, access_token: Optional[str], nonce: Optional[str],
               account: Optional[str]) -> Call[str]:
    """``na_dpop_proof``: the proof (a compact JWS)."""
    req: Dict[str, Any] = {"method": _str("method", method), "url": _str("url", url)}
    if access_token is not None:
        req["access_token"] = _str("access_token", access_token)
    if nonce is not None:
        req["nonce"] = _str("nonce", nonce)
    if account is not None:
        req["account"] = _str("account", account)

    def parse(doc: Dict[str, Any]) -> str:
        proof = doc.get("proof")
        if not isinstance(proof, str):
            raise errors.InternalError("the library answered no proof", code="internal", status=-9)
        return proof

    return _call("dpop_proof", req, parse)


def client_info() -> Call[ClientInfo]:
    """``na_client_info``."""
    return _call("client_info", {}, lambda doc: cast(ClientInfo, doc))


# -- argument checks ----------------------------------------------------------------------------------------------

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
