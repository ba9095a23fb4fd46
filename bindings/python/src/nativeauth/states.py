"""Results of the native-auth calls, as values. States that need more input have methods that continue the flow,
in the shape of MSAL's state machine: ``state = client.sign_in(...)``; ``state = state.submit_code("12345678")``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

if TYPE_CHECKING:
    from .client import Client


@dataclass(frozen=True)
class AccessToken:
    """An access token. ``token`` is hidden from ``repr`` so it does not end up in logs by accident."""

    token: str = field(repr=False)
    scopes: tuple
    expires_on: int
    from_cache: bool
    token_type: str = "Bearer"

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "AccessToken":
        return cls(d["access_token"], tuple(d.get("scopes", ())), int(d.get("expires_on", 0)), bool(d.get("from_cache", False)),
                   d.get("token_type", "Bearer"))


@dataclass(frozen=True)
class Account:
    """The signed-in account. ``home_account_id`` is ``<uid>.<utid>``; ``claims`` are the ID token's claims."""

    username: str
    home_account_id: str
    tenant_id: str
    environment: str
    claims: dict = field(default_factory=dict, compare=False)
    id_token: Optional[str] = field(default=None, repr=False)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Account":
        return cls(d.get("username", ""), d.get("home_account_id", ""), d.get("tenant_id", ""), d.get("environment", ""),
                   dict(d.get("claims") or {}), d.get("id_token"))


@dataclass(frozen=True)
class AuthMethod:
    """A strong-authentication method (MFA or registration)."""

    id: str
    channel: Optional[str] = None
    login_hint: Optional[str] = None
    challenge_type: Optional[str] = None


@dataclass(frozen=True)
class RequiredAttribute:
    name: str
    type: str = "string"
    required: bool = True
    regex: Optional[str] = None


@dataclass(frozen=True)
class ApiResponse:
    """What an API answered: ``body`` is parsed JSON when the API sent JSON, text otherwise."""

    status: int
    headers: dict
    body: Any

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


@dataclass(frozen=True)
class State:
    """A result of a sign-in, sign-up or password reset. ``flow_type`` is "sign_in", "sign_up", "reset_password",
    "interactive" or "device_code"."""

    flow_type: str


@dataclass(frozen=True)
class SignedIn(State):
    account: Account
    token: AccessToken


@dataclass(frozen=True)
class FlowState(State):
    """A state that continues: it names library-held flow state (the server's continuation token never leaves the
    library). Each continuation returns the next state; retryable errors carry this state as ``error.state``."""

    flow: str = field(repr=False)
    _client: "Client" = field(repr=False, compare=False)

    def _submit(self, **request: Any) -> State:
        return self._client._submit(self, {"flow": self.flow, **request})

    def cancel(self) -> None:
        """Forgets the flow."""
        self._client._submit(self, {"flow": self.flow, "action": "cancel"})


@dataclass(frozen=True)
class CodeRequired(FlowState):
    """A one-time code was sent (``sent_to`` is masked)."""

    sent_to: str = ""
    channel: str = "email"
    code_length: int = 0

    def submit_code(self, code: str) -> State:
        return self._submit(action="submit_code", code=_text("code", code))

    def resend_code(self) -> "CodeRequired":
        return _expect(self._submit(action="resend_code"), CodeRequired)


@dataclass(frozen=True)
class PasswordRequired(FlowState):
    """A password is needed: the sign-in password, the sign-up password, or the new password of a reset."""

    def submit_password(self, password: str) -> State:
        return self._submit(action="submit_password", password=_text("password", password))


@dataclass(frozen=True)
class AttributesRequired(FlowState):
    required_attributes: tuple = ()

    def submit_attributes(self, attributes: Mapping[str, Any]) -> State:
        if not isinstance(attributes, Mapping):
            from .errors import InvalidArgumentError
            raise InvalidArgumentError("attributes must be a mapping of names to values", code="invalid_argument", status=-1)
        return self._submit(action="submit_attributes", attributes=dict(attributes))


@dataclass(frozen=True)
class MfaRequired(FlowState):
    """A second factor is needed. ``request_challenge`` sends a code to a method (the first by default)."""

    methods: tuple = ()

    def request_challenge(self, method: Optional[AuthMethod] = None) -> CodeRequired:
        req: dict = {"action": "request_challenge"}
        if method is not None:
            req["method_id"] = method.id
        return _expect(self._submit(**req), CodeRequired)


@dataclass(frozen=True)
class RegistrationRequired(FlowState):
    """A strong-authentication method must be registered: ``register_method(contact)`` sends a code to it (or signs
    the user in straight away when the contact needs no verification)."""

    methods: tuple = ()

    def register_method(self, contact: str, method: Optional[AuthMethod] = None) -> State:
        req: dict = {"action": "register_method", "contact": _text("contact", contact)}
        if method is not None:
            req["method_id"] = method.id
        return self._submit(**req)


@dataclass(frozen=True)
class BrowserPending(FlowState):
    """A browser sign-in waits for its redirect (``browser="none"``): show ``authorization_url`` to the user, then
    ``wait()`` for the redirect on the loopback listener, or ``submit_redirect(url)`` with a redirect your app
    captured itself. ``cancel()`` may be called from another thread while ``wait()`` blocks."""

    authorization_url: str = ""
    redirect_uri: str = ""
    expires_in: int = 0

    def wait(self, timeout: Optional[float] = None) -> State:
        """Waits up to ``timeout`` seconds (default: 300) for the redirect: ``SignedIn``, or this state again."""
        return self._submit(**_wait_args(timeout))

    def submit_redirect(self, redirect_url: str) -> State:
        return self._submit(action="submit_redirect", redirect_url=_text("redirect_url", redirect_url))


@dataclass(frozen=True)
class DeviceCodeRequired(FlowState):
    """A device-code sign-in: show ``message`` (or ``verification_uri`` and ``user_code``), then ``wait()``."""

    user_code: str = ""
    verification_uri: str = ""
    verification_uri_complete: Optional[str] = None
    expires_in: int = 0
    interval: int = 5
    message: str = ""

    def wait(self, timeout: Optional[float] = None) -> State:
        """Polls until the user approves (``SignedIn``), or ``timeout`` seconds pass (default: 900; this state
        again). Raises AccessDeniedError, FlowExpiredError, CancelledError."""
        return self._submit(**_wait_args(timeout))


@dataclass(frozen=True)
class SignUpCompleted(FlowState):
    def sign_in(self, scopes: Optional[Sequence[str]] = None, claims: Optional[Mapping[str, Any]] = None) -> State:
        return self._submit(**_sign_in_args(scopes, claims))


@dataclass(frozen=True)
class PasswordResetCompleted(FlowState):
    def sign_in(self, scopes: Optional[Sequence[str]] = None, claims: Optional[Mapping[str, Any]] = None) -> State:
        return self._submit(**_sign_in_args(scopes, claims))


def _expect(state: State, cls: type) -> Any:
    if not isinstance(state, cls):
        from .errors import InternalError
        raise InternalError(f"expected {cls.__name__}, the library answered {type(state).__name__}", code="internal", status=-9)
    return state


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        from .errors import InvalidArgumentError
        raise InvalidArgumentError(f"{name} must be a str, not {type(value).__name__}", code="invalid_argument", status=-1)
    return value


def _wait_args(timeout: Optional[float]) -> dict:
    req: dict = {"action": "wait"}
    if timeout is not None:
        if not isinstance(timeout, (int, float)) or timeout < 0:
            from .errors import InvalidArgumentError
            raise InvalidArgumentError("timeout must be a non-negative number of seconds", code="invalid_argument",
                                       status=-1)
        req["timeout_ms"] = int(min(timeout, 3600) * 1000)
    return req


def _sign_in_args(scopes: Optional[Sequence[str]], claims: Optional[Mapping[str, Any]]) -> dict:
    req: dict = {"action": "sign_in"}
    if scopes is not None:
        req["scopes"] = list(scopes)
    if claims is not None:
        req["claims"] = dict(claims)
    return req


def state_from_json(client: "Client", d: Mapping[str, Any]) -> State:
    status = d.get("status")
    flow_type = d.get("flow_type", "")
    flow = d.get("flow", "")
    if status == "signed_in":
        return SignedIn(flow_type, Account.from_json(d.get("account") or {}), AccessToken.from_json(d.get("token") or {}))
    if status == "code_required":
        return CodeRequired(flow_type, flow, client, d.get("sent_to", ""), d.get("channel", "email"), int(d.get("code_length", 0)))
    if status == "password_required":
        return PasswordRequired(flow_type, flow, client)
    if status == "attributes_required":
        attrs = tuple(RequiredAttribute(a.get("name", ""), a.get("type", "string"), bool(a.get("required", True)), a.get("regex"))
                      for a in d.get("required_attributes", ()))
        return AttributesRequired(flow_type, flow, client, attrs)
    if status in ("mfa_required", "registration_required"):
        methods = tuple(AuthMethod(m.get("id", ""), m.get("channel"), m.get("login_hint"), m.get("challenge_type"))
                        for m in d.get("methods", ()))
        cls = MfaRequired if status == "mfa_required" else RegistrationRequired
        return cls(flow_type, flow, client, methods)
    if status == "sign_up_completed":
        return SignUpCompleted(flow_type, flow, client)
    if status == "password_reset_completed":
        return PasswordResetCompleted(flow_type, flow, client)
    if status == "browser_pending":
        return BrowserPending(flow_type, flow, client, d.get("authorization_url", ""), d.get("redirect_uri", ""),
                              int(d.get("expires_in", 0)))
    if status == "device_code_required":
        return DeviceCodeRequired(flow_type, flow, client, d.get("user_code", ""), d.get("verification_uri", ""),
                                  d.get("verification_uri_complete"), int(d.get("expires_in", 0)),
                                  int(d.get("interval", 5)), d.get("message", ""))
    if status == "cancelled":
        return State(flow_type)
    from .errors import InternalError
    raise InternalError(f"unknown state {status!r}", code="internal", status=-9)
