"""Results of the calls, as immutable values shaped like the C documents.

Every result is a frozen dataclass whose fields carry the names of the members of its C document (see
``include/nativeauth.h`` and ``docs/calls/``): `AccessToken` is ``na_get_access_token``'s result, `Account` an
``"account"``, `ApiResponse` ``na_call_api``'s result, and each `State` subclass one ``"status"`` of the sign-in,
sign-up and password-reset documents (the class attribute ``status`` holds that value). Values are copied out of the
library's strings, which are freed at once: a result never holds the library's memory, and stays valid after the
`nativeauth.Client` is closed.

States that need more input have methods that continue the flow, in the shape of MSAL's state machine:

    state = client.sign_in("olivia@contoso.com")  # PasswordRequired, CodeRequired, MfaRequired, …
    if isinstance(state, CodeRequired):
        state = state.submit_code("12345678")     # the next state, e.g. SignedIn

Secrets (``access_token``, ``id_token``) are left out of ``repr()`` so that they do not end up in logs by accident.
"""
from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import (Any, ClassVar, Dict, Generic, Mapping, NamedTuple, Optional, Protocol, Sequence, Tuple, Type,
                    TypeVar)

from .errors import InternalError, InvalidArgumentError

__all__ = ["AccessToken", "Account", "ApiResponse", "AttributesRequired", "AuthMethod", "BrowserPending",
           "Challenge", "CodeRequired", "DeviceCodeRequired", "FlowState", "MfaRequired", "PasswordRequired",
           "PasswordResetCompleted", "RegistrationRequired", "RequiredAttribute", "SignedIn", "SignUpCompleted",
           "State", "WWWAuthenticate"]

_S = TypeVar("_S", bound="State")


def _int(value: Any, default: int = 0) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def _opt_str(value: Any) -> Optional[str]:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class AccessToken:
    """An access token: ``na_get_access_token``'s result, and the ``"token"`` of a `SignedIn` state.

    ``access_token`` is left out of ``repr()``. ``scopes`` are the scopes the token was granted for (the OIDC scopes
    included); ``expires_on`` is its expiry in Unix seconds; ``from_cache`` says whether it was served from the cache
    without a network call."""

    access_token: str = field(repr=False)
    """The token to send as ``Authorization: Bearer <access_token>`` — or, when ``token_type`` is ``"DPoP"``, as
    ``Authorization: DPoP <access_token>`` with a proof (`nativeauth.Client.dpop_proof`)."""
    scopes: Tuple[str, ...]
    """The scopes the token was granted for."""
    expires_on: int
    """When the token expires, in Unix seconds."""
    from_cache: bool
    """Whether the token came from the cache (no network call)."""
    token_type: str = "Bearer"
    """``"Bearer"``, or ``"DPoP"`` for a token bound to the account's key (a client made with ``dpop=True``)."""

    @property
    def token(self) -> str:
        """Read-only alias of ``access_token``, the field's former name — kept for backward compatibility; new code
        should use ``access_token`` (the name of the C document's member)."""
        return self.access_token

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> AccessToken:
        """The token of a result document (``{"access_token", "token_type", "scopes", "expires_on",
        "from_cache"}``)."""
        return cls(d.get("access_token") or "", tuple(d.get("scopes") or ()), int(d.get("expires_on") or 0),
                   bool(d.get("from_cache", False)), d.get("token_type") or "Bearer")


@dataclass(frozen=True)
class Account:
    """A signed-in account (``na_get_account``'s ``"account"``).

    ``home_account_id`` is ``<uid>.<utid>`` (for a generic OpenID Connect provider ``<sub>.<issuer hash>``);
    ``claims`` are the ID token's claims. ``id_token`` (the raw ID token, left out of ``repr()``) is there when
    the account was read with `nativeauth.Client.account` or `nativeauth.Client.accounts`; it is ``None`` in a
    `SignedIn` state."""

    username: str
    """``preferred_username``, else ``email``, else ``sub``."""
    home_account_id: str
    """The account's stable identifier: pass it (or ``username``) as ``account=`` to pick one of several."""
    tenant_id: str
    """The tenant (``utid``)."""
    environment: str
    """The authority's host, e.g. ``contoso.ciamlogin.com``."""
    claims: Dict[str, Any] = field(default_factory=dict, compare=False)
    """The ID token's claims."""
    id_token: Optional[str] = field(default=None, repr=False)
    """The raw ID token, when it was asked for."""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Account:
        """An account of a result document."""
        return cls(str(d.get("username") or ""), str(d.get("home_account_id") or ""), str(d.get("tenant_id") or ""),
                   str(d.get("environment") or ""), dict(d.get("claims") or {}), _opt_str(d.get("id_token")))


@dataclass(frozen=True)
class AuthMethod:
    """A strong-authentication method of `MfaRequired` or `RegistrationRequired` (``{"id", "channel",
    "login_hint", "challenge_type"}``)."""

    id: str
    """The method's identifier, for ``request_challenge`` / ``register_method``."""
    channel: Optional[str] = None
    """Where a code goes, e.g. ``"email"``."""
    login_hint: Optional[str] = None
    """The masked address, e.g. ``"m***p@fa**c.com"``."""
    challenge_type: Optional[str] = None
    """The challenge type, e.g. ``"oob"``."""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> AuthMethod:
        """A method of a ``"methods"`` list."""
        return cls(str(d.get("id") or ""), _opt_str(d.get("channel")), _opt_str(d.get("login_hint")),
                   _opt_str(d.get("challenge_type")))


@dataclass(frozen=True)
class RequiredAttribute:
    """A sign-up attribute the server asks for (``{"name", "type", "required", "regex"?}``)."""

    name: str
    """The attribute's name, e.g. ``"displayName"``."""
    type: str = "string"
    """Its type as the server names it."""
    required: bool = True
    """Whether it must be given."""
    regex: Optional[str] = None
    """A pattern the value must match, when the server sent one."""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RequiredAttribute:
        """An attribute of a ``"required_attributes"`` list."""
        return cls(str(d.get("name") or ""), str(d.get("type") or "string"), bool(d.get("required", True)),
                   _opt_str(d.get("regex")))


@dataclass(frozen=True)
class ApiResponse:
    """What an API answered (``na_call_api``'s result ``{"status", "headers", "body" | "body_base64",
    "body_too_deep"?}``). An HTTP error status is a response, not an exception: check ``ok`` or ``status``.

    ``body`` is the parsed JSON when the API sent JSON, the text otherwise, and ``None`` when the body is not UTF-8
    (then ``body_base64`` holds it). `content` gives the body as bytes in every case."""

    status: int
    """The HTTP status."""
    headers: Dict[str, str]
    """The response headers, names in lower case (repeated headers joined with ``", "``)."""
    body: Any = None
    """Parsed JSON, text, or ``None`` for a binary body."""
    body_base64: Optional[str] = None
    """A body that is not UTF-8, in base64."""
    body_too_deep: bool = False
    """A JSON body nested deeper than 64 levels: returned as text in ``body``, unparsed."""

    @property
    def ok(self) -> bool:
        """Whether ``status`` is 2xx."""
        return 200 <= self.status < 300

    @property
    def content(self) -> bytes:
        """The body as bytes: ``body_base64`` decoded, text as UTF-8, or parsed JSON serialised again (compact)."""
        if self.body_base64 is not None:
            return base64.b64decode(self.body_base64)
        if self.body is None:
            return b""
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ApiResponse:
        """``na_call_api``'s result document."""
        headers = {str(k): str(v) for k, v in (d.get("headers") or {}).items()}
        return cls(_int(d.get("status")), headers, d.get("body"), _opt_str(d.get("body_base64")),
                   bool(d.get("body_too_deep", False)))


@dataclass(frozen=True)
class Challenge:
    """One challenge of a ``WWW-Authenticate`` header: an element of `WWWAuthenticate.challenges`
    (``{"scheme", "params", "token68"?, "claims"?}``)."""

    scheme: str
    """The auth-scheme as sent, e.g. ``"Bearer"``; schemes are case-insensitive: compare with `is_scheme`."""
    params: Dict[str, str] = field(default_factory=dict)
    """The auth-params: names in lower case, values unquoted (``\\``-escapes removed); a name sent twice in one
    challenge keeps its first value."""
    token68: Optional[str] = None
    """The other form of a challenge (``Negotiate abc==``), as sent; ``None`` for the parameter form."""
    claims: Optional[str] = None
    """The ``claims`` parameter decoded to JSON text (from base64 or base64url, or sent as text), when it is a JSON
    object; ``None`` otherwise (its raw value stays in ``params``)."""

    def is_scheme(self, name: str) -> bool:
        """Whether the scheme is ``name``, in any case."""
        return self.scheme.lower() == name.lower()

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Challenge:
        """A challenge of ``na_parse_www_authenticate``'s ``"challenges"``."""
        params = {str(k): str(v) for k, v in (d.get("params") or {}).items()}
        return cls(str(d.get("scheme") or ""), params, _opt_str(d.get("token68")), _opt_str(d.get("claims")))


@dataclass(frozen=True)
class WWWAuthenticate:
    """A parsed ``WWW-Authenticate`` header: `nativeauth.parse_www_authenticate`'s result (the document
    ``{"challenges", "claims"?}`` of ``na_parse_www_authenticate``).

    ``claims`` is the claims challenge — the claims of the first ``Bearer`` challenge whose ``error`` is
    ``insufficient_claims`` (in any case) that has claims — as JSON text, ``None`` when the header has none; get a
    token that satisfies it with ``client.get_access_token(scopes, claims=json.loads(result.claims))`` (or
    `nativeauth.Client.sign_in_interactive` when that raises InteractionRequiredError)."""

    challenges: Tuple[Challenge, ...] = ()
    """The challenges, in the header's order."""
    claims: Optional[str] = None
    """The claims challenge, as JSON text."""

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> WWWAuthenticate:
        """``na_parse_www_authenticate``'s result document."""
        return cls(tuple(Challenge.from_json(c) for c in d.get("challenges") or ()), _opt_str(d.get("claims")))


@dataclass(frozen=True)
class State:
    """A result of a sign-in, sign-up or password reset: one of the subclasses, by the document's ``"status"``.

    ``flow_type`` is ``"sign_in"``, ``"sign_up"``, ``"reset_password"``, ``"interactive"`` or
    ``"device_code"``."""

    status: ClassVar[str] = "cancelled"
    """The document's ``"status"`` this class stands for (the base class itself only for a cancelled flow)."""

    flow_type: str
    """Which flow produced this state."""


@dataclass(frozen=True)
class SignedIn(State):
    """The user is signed in (``"signed_in"``): the ``account`` and the first ``token``."""

    status: ClassVar[str] = "signed_in"

    account: Account
    """Who signed in (without ``id_token``; `nativeauth.Client.account` has it)."""
    token: AccessToken
    """The access token for the sign-in's scopes."""


class FlowClient(Protocol):
    """What a `FlowState` holds to continue its flow: the one interface between the states and `nativeauth.Client`
    (internal to the package; the client gives each of its states an implementation, and this module does not import
    the client). States call nothing else of it."""

    def submit_flow(self, state: FlowState, request: Dict[str, Any]) -> State:
        """Sends ``request`` (``{"flow", "action", …}``) to ``na_flow_submit`` and returns the next state, which holds
        the same kind of implementation. A retryable error it raises carries ``state`` as ``error.state``."""
        ...


# The flow states are made of two parts: the fields of each state (the private ``_…Fields`` classes below, shared) and
# the continuations, which are methods here and coroutines in `nativeauth.aio` (its ``Async…`` states combine the same
# fields with its ``AsyncFlowState``). ``_C`` is the client the continuations call: a FlowClient here.

_C = TypeVar("_C")


@dataclass(frozen=True)
class _Flow(State, Generic[_C]):
    """What every state that continues holds."""

    flow: str = field(repr=False)
    """The opaque handle of the flow in the library (``"f_…"``)."""
    _client: _C = field(repr=False, compare=False)
    """How the state continues its flow: a `FlowClient` (an `nativeauth.aio.AsyncFlowClient` for the asyncio
    states)."""


@dataclass(frozen=True)
class _CodeRequiredFields(_Flow[_C]):
    status: ClassVar[str] = "code_required"

    sent_to: str = ""
    """The masked address the code went to, e.g. ``"o***a@co**o.com"``."""
    channel: str = "email"
    """How the code was sent."""
    code_length: int = 0
    """How many characters the code has."""
    resend_interval: Optional[int] = None
    """Seconds before a new code may be asked for, when the server said."""


@dataclass(frozen=True)
class _PasswordRequiredFields(_Flow[_C]):
    status: ClassVar[str] = "password_required"


@dataclass(frozen=True)
class _AttributesRequiredFields(_Flow[_C]):
    status: ClassVar[str] = "attributes_required"

    required_attributes: Tuple[RequiredAttribute, ...] = ()
    """The attributes the server asks for."""


@dataclass(frozen=True)
class _MfaRequiredFields(_Flow[_C]):
    status: ClassVar[str] = "mfa_required"

    methods: Tuple[AuthMethod, ...] = ()
    """The user's strong-authentication methods."""


@dataclass(frozen=True)
class _RegistrationRequiredFields(_Flow[_C]):
    status: ClassVar[str] = "registration_required"

    methods: Tuple[AuthMethod, ...] = ()
    """The methods that may be registered."""


@dataclass(frozen=True)
class _BrowserPendingFields(_Flow[_C]):
    status: ClassVar[str] = "browser_pending"

    authorization_url: str = ""
    """The provider's authorization URL: show it to the user (who may open it on another device and paste the
    redirect back) or load it in the app's own web view. It holds the sign-in's ``state`` and ``nonce``: never pass
    it to a browser on a command line, which every local user can read (``browser="system"`` avoids that)."""
    redirect_uri: str = ""
    """Where the browser will be sent back to."""
    expires_in: int = 0
    """Seconds until the sign-in expires."""


@dataclass(frozen=True)
class _DeviceCodeRequiredFields(_Flow[_C]):
    status: ClassVar[str] = "device_code_required"

    user_code: str = ""
    """The code the user enters."""
    verification_uri: str = ""
    """Where the user enters it."""
    verification_uri_complete: Optional[str] = None
    """A URI with the code in it, when the server sent one."""
    expires_in: int = 0
    """Seconds until the code expires."""
    interval: int = 5
    """Seconds between polls."""
    message: str = ""
    """What to tell the user."""


@dataclass(frozen=True)
class _SignUpCompletedFields(_Flow[_C]):
    status: ClassVar[str] = "sign_up_completed"


@dataclass(frozen=True)
class _PasswordResetCompletedFields(_Flow[_C]):
    status: ClassVar[str] = "password_reset_completed"


@dataclass(frozen=True)
class FlowState(_Flow[FlowClient]):
    """A state that continues: it names library-held flow state (``flow``, an opaque handle ``"f_…"``: the server's
    continuation token never leaves the library). Each continuation returns the next state; a retryable error carries
    this state as ``error.state``."""

    def _submit(self, request: Dict[str, Any]) -> State:
        return self._client.submit_flow(self, {"flow": self.flow, **request})

    def cancel(self) -> None:
        """Forgets the flow. May be called from another thread while a call waits on it (which then raises
        `nativeauth.CancelledError`)."""
        self._submit(_cancel())


@dataclass(frozen=True)
class CodeRequired(FlowState, _CodeRequiredFields[FlowClient]):
    """A one-time code was sent (``"code_required"``): to ``sent_to`` (masked) over ``channel``; it has
    ``code_length`` digits. ``resend_interval`` is how many seconds to wait before `resend_code`, when the server
    said."""

    def submit_code(self, code: str) -> State:
        """Submits the code: the next state (`SignedIn`, `PasswordRequired`, …). Raises
        `nativeauth.InvalidCodeError` (whose ``state`` is this one) for a wrong code."""
        return self._submit(_submit_code(code))

    def resend_code(self) -> CodeRequired:
        """Sends a new code (the previous one stops working)."""
        return _expect(self._submit(_resend_code()), CodeRequired)


@dataclass(frozen=True)
class PasswordRequired(FlowState, _PasswordRequiredFields[FlowClient]):
    """A password is needed (``"password_required"``): the sign-in password, the sign-up password, or the new
    password of a reset."""

    def submit_password(self, password: str) -> State:
        """Submits the password: the next state. Raises `nativeauth.InvalidCredentialsError` or
        `nativeauth.InvalidPasswordError` (with ``reason``), whose ``state`` is this one."""
        return self._submit(_submit_password(password))


@dataclass(frozen=True)
class AttributesRequired(FlowState, _AttributesRequiredFields[FlowClient]):
    """A sign-up needs attributes (``"attributes_required"``): ``required_attributes`` lists them."""

    def submit_attributes(self, attributes: Mapping[str, Any]) -> State:
        """Submits attribute values by name: the next state (`SignUpCompleted`, …). Raises
        `nativeauth.AttributesInvalidError` naming the refused ones."""
        return self._submit(_submit_attributes(attributes))


@dataclass(frozen=True)
class MfaRequired(FlowState, _MfaRequiredFields[FlowClient]):
    """A second factor is needed (``"mfa_required"``): `request_challenge` sends a code to one of ``methods`` (the
    user's strong-authentication methods)."""

    def request_challenge(self, method: Optional[AuthMethod] = None) -> CodeRequired:
        """Sends a code to ``method`` (default: the first of ``methods``, named explicitly: the C call without a
        method leaves the choice to the server)."""
        return _expect(self._submit(_request_challenge(method or _first(self.methods))), CodeRequired)


@dataclass(frozen=True)
class RegistrationRequired(FlowState, _RegistrationRequiredFields[FlowClient]):
    """A strong-authentication method must be registered (``"registration_required"``): `register_method` sends a
    code to a contact (or signs the user in straight away when the contact needs no verification); ``methods`` are
    the methods that may be registered."""

    def register_method(self, contact: str, method: Optional[AuthMethod] = None) -> State:
        """Registers ``contact`` (an email address) for ``method`` (default: the first): `CodeRequired`, or
        `SignedIn`. Raises `nativeauth.InvalidContactError`."""
        return self._submit(_register_method(contact, method))


@dataclass(frozen=True)
class BrowserPending(FlowState, _BrowserPendingFields[FlowClient]):
    """A browser sign-in waits for its redirect (``"browser_pending"``, from ``browser="none"``): show
    ``authorization_url`` to the user, then `wait` for the redirect (to ``redirect_uri``) on the loopback listener,
    or `submit_redirect` with a redirect your app captured itself; the sign-in expires in ``expires_in`` seconds.
    ``cancel()`` may be called from another thread while `wait` blocks.

    `submit_redirect` needs no listener: the redirect (``http://localhost:<port>/?code=…&state=…`` with a
    loopback redirect URI) may have been captured without being loaded, or pasted by a user who signed in on
    another device. It must carry this sign-in's ``state`` (else `nativeauth.ServerError`, and the sign-in ends);
    its code is redeemed with the PKCE verifier, which never leaves the library."""

    def wait(self, timeout: Optional[float] = None) -> State:
        """Waits up to ``timeout`` seconds (default: 300) for the redirect: `SignedIn`, or this state again."""
        return self._submit(_wait(timeout))

    def submit_redirect(self, redirect_url: str) -> State:
        """Completes the sign-in with the redirect URL as the app received it (or its user pasted it): `SignedIn`.
        Raises `nativeauth.InvalidArgumentError` (not this sign-in's redirect URI; the state stays usable),
        `nativeauth.ServerError` (another ``state``; the sign-in ends)."""
        return self._submit(_submit_redirect(redirect_url))


@dataclass(frozen=True)
class DeviceCodeRequired(FlowState, _DeviceCodeRequiredFields[FlowClient]):
    """A device-code sign-in (``"device_code_required"``): show ``message`` (or ``verification_uri`` and
    ``user_code``), then `wait` (the code expires in ``expires_in`` seconds; the server is polled every ``interval``
    seconds)."""

    def wait(self, timeout: Optional[float] = None) -> State:
        """Polls until the user approves (`SignedIn`), or ``timeout`` seconds pass (default: 900; this state
        again). Raises `nativeauth.AccessDeniedError`, `nativeauth.FlowExpiredError`,
        `nativeauth.CancelledError`."""
        return self._submit(_wait(timeout))


@dataclass(frozen=True)
class SignUpCompleted(FlowState, _SignUpCompletedFields[FlowClient]):
    """The account was created (``"sign_up_completed"``): `sign_in` signs the new user in without a password. (With
    an empty ``flow`` the server allowed no automatic sign-in: call `nativeauth.Client.sign_in`.)"""

    def sign_in(self, scopes: Optional[Sequence[str]] = None, claims: Optional[Mapping[str, Any]] = None) -> State:
        """Signs the new user in: `SignedIn`."""
        return self._submit(_sign_in(scopes, claims))


@dataclass(frozen=True)
class PasswordResetCompleted(FlowState, _PasswordResetCompletedFields[FlowClient]):
    """The password was reset (``"password_reset_completed"``): `sign_in` signs the user in with it."""

    def sign_in(self, scopes: Optional[Sequence[str]] = None, claims: Optional[Mapping[str, Any]] = None) -> State:
        """Signs the user in: `SignedIn`."""
        return self._submit(_sign_in(scopes, claims))


def _expect(state: State, cls: Type[_S]) -> _S:
    if not isinstance(state, cls):
        raise InternalError(f"expected {cls.__name__}, the library answered {type(state).__name__}", code="internal",
                            status=-9)
    return state


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidArgumentError(f"{name} must be a str, not {type(value).__name__}", code="invalid_argument",
                                   status=-1)
    return value


# -- the request of each step of a flow (``na_flow_submit`` without "flow"), for the states here and in aio -----------

def _cancel() -> Dict[str, Any]:
    return {"action": "cancel"}


def _submit_code(code: str) -> Dict[str, Any]:
    return {"action": "submit_code", "code": _text("code", code)}


def _resend_code() -> Dict[str, Any]:
    return {"action": "resend_code"}


def _submit_password(password: str) -> Dict[str, Any]:
    return {"action": "submit_password", "password": _text("password", password)}


def _submit_attributes(attributes: Mapping[str, Any]) -> Dict[str, Any]:
    if not isinstance(attributes, Mapping):
        raise InvalidArgumentError("attributes must be a mapping of names to values", code="invalid_argument",
                                   status=-1)
    return {"action": "submit_attributes", "attributes": dict(attributes)}


def _request_challenge(method: Optional[AuthMethod]) -> Dict[str, Any]:
    req: Dict[str, Any] = {"action": "request_challenge"}
    if method is not None:
        req["method_id"] = method.id
    return req


def _first(methods: Sequence[AuthMethod]) -> Optional[AuthMethod]:
    return methods[0] if methods else None


def _register_method(contact: str, method: Optional[AuthMethod]) -> Dict[str, Any]:
    req: Dict[str, Any] = {"action": "register_method", "contact": _text("contact", contact)}
    if method is not None:
        req["method_id"] = method.id
    return req


def _submit_redirect(redirect_url: str) -> Dict[str, Any]:
    return {"action": "submit_redirect", "redirect_url": _text("redirect_url", redirect_url)}


def _wait(timeout: Optional[float]) -> Dict[str, Any]:
    req: Dict[str, Any] = {"action": "wait"}
    if timeout is not None:
        if not isinstance(timeout, (int, float)) or timeout < 0:
            raise InvalidArgumentError("timeout must be a non-negative number of seconds", code="invalid_argument",
                                       status=-1)
        req["timeout_ms"] = int(min(timeout, 3600) * 1000)
    return req


def _sign_in(scopes: Optional[Sequence[str]], claims: Optional[Mapping[str, Any]]) -> Dict[str, Any]:
    req: Dict[str, Any] = {"action": "sign_in"}
    if scopes is not None:
        req["scopes"] = list(scopes)
    if claims is not None:
        req["claims"] = dict(claims)
    return req


# -- result documents to states ------------------------------------------------------------------------------------

class _Family(NamedTuple):
    """The classes the states of one kind of client are made of: by ``"status"``, each class of a family takes the
    same fields (the ``_…Fields`` it is made of). `state_from_json` makes these; `nativeauth.aio` its own."""

    code_required: Type[_CodeRequiredFields[Any]]
    password_required: Type[_PasswordRequiredFields[Any]]
    attributes_required: Type[_AttributesRequiredFields[Any]]
    mfa_required: Type[_MfaRequiredFields[Any]]
    registration_required: Type[_RegistrationRequiredFields[Any]]
    sign_up_completed: Type[_SignUpCompletedFields[Any]]
    password_reset_completed: Type[_PasswordResetCompletedFields[Any]]
    browser_pending: Type[_BrowserPendingFields[Any]]
    device_code_required: Type[_DeviceCodeRequiredFields[Any]]


_STATES = _Family(CodeRequired, PasswordRequired, AttributesRequired, MfaRequired, RegistrationRequired,
                  SignUpCompleted, PasswordResetCompleted, BrowserPending, DeviceCodeRequired)


def state_from_json(client: FlowClient, d: Mapping[str, Any]) -> State:
    """The `State` of a flow result document (internal: states that continue hold ``client``)."""
    return _state_from_json(_STATES, client, d)


def _state_from_json(family: _Family, client: Any, d: Mapping[str, Any]) -> State:
    """The state of a flow result document, of the classes of ``family``, holding ``client`` when it continues: the
    one reading of the flow documents, for `nativeauth.Client` and `nativeauth.aio.AsyncClient` alike."""
    status = d.get("status")
    flow_type = str(d.get("flow_type") or "")
    flow = str(d.get("flow") or "")
    if status == "signed_in":
        return SignedIn(flow_type, Account.from_json(d.get("account") or {}), AccessToken.from_json(d.get("token") or {}))
    if status == "code_required":
        interval = d.get("resend_interval")
        return family.code_required(flow_type, flow, client, str(d.get("sent_to") or ""),
                                    str(d.get("channel") or "email"), _int(d.get("code_length")),
                                    None if interval is None else _int(interval))
    if status == "password_required":
        return family.password_required(flow_type, flow, client)
    if status == "attributes_required":
        attrs = tuple(RequiredAttribute.from_json(a) for a in d.get("required_attributes") or ())
        return family.attributes_required(flow_type, flow, client, attrs)
    if status in ("mfa_required", "registration_required"):
        methods = tuple(AuthMethod.from_json(m) for m in d.get("methods") or ())
        if status == "mfa_required":
            return family.mfa_required(flow_type, flow, client, methods)
        return family.registration_required(flow_type, flow, client, methods)
    if status == "sign_up_completed":
        return family.sign_up_completed(flow_type, flow, client)
    if status == "password_reset_completed":
        return family.password_reset_completed(flow_type, flow, client)
    if status == "browser_pending":
        return family.browser_pending(flow_type, flow, client, str(d.get("authorization_url") or ""),
                                      str(d.get("redirect_uri") or ""), _int(d.get("expires_in")))
    if status == "device_code_required":
        return family.device_code_required(flow_type, flow, client, str(d.get("user_code") or ""),
                                           str(d.get("verification_uri") or ""),
                                           _opt_str(d.get("verification_uri_complete")), _int(d.get("expires_in")),
                                           _int(d.get("interval"), 5), str(d.get("message") or ""))
    if status == "cancelled":
        return State(flow_type)
    raise InternalError(f"unknown state {status!r}", code="internal", status=-9)
