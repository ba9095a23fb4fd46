"""Exceptions. Every error the library reports is a ``NativeAuthError`` whose class follows its stable ``code``.

Classes inherit a builtin where one fits, so ``except ValueError`` / ``except ConnectionError`` work too. Messages
never contain passwords, codes or tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class ServerDetails:
    """What the server said, when the error came from a server answer."""

    error: Optional[str] = None
    suberror: Optional[str] = None
    error_codes: tuple = ()
    correlation_id: Optional[str] = None
    trace_id: Optional[str] = None
    http_status: Optional[int] = None
    retry_after: Optional[str] = None

    @classmethod
    def from_json(cls, d: Optional[dict]) -> Optional["ServerDetails"]:
        if not d:
            return None
        return cls(d.get("error"), d.get("suberror"), tuple(d.get("error_codes", ())), d.get("correlation_id"),
                   d.get("trace_id"), d.get("http_status"), d.get("retry_after"))


class NativeAuthError(Exception):
    """Base class. ``code`` is the library's stable error code; ``status`` the NA_* return value; ``server`` the
    server's details; ``state`` the flow state to retry on, for retryable errors (wrong code, weak password …)."""

    code = "internal"

    def __init__(self, message: str, *, code: Optional[str] = None, status: int = -9,
                 server: Optional[ServerDetails] = None, details: Optional[dict] = None, state: Any = None):
        super().__init__(message)
        self.message = message
        if code:
            self.code = code
        self.status = status
        self.server = server
        self.details = details or {}
        self.state = state

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InvalidArgumentError(NativeAuthError, ValueError):
    code = "invalid_argument"


class NotSupportedError(InvalidArgumentError):
    code = "not_supported"


class ClientClosedError(InvalidArgumentError):
    """The client was closed (or its handle is not valid)."""
    code = "invalid_handle"


class InvalidScopeError(InvalidArgumentError):
    code = "invalid_scope"


class InvalidClientError(InvalidArgumentError):
    code = "invalid_client"


class AuthenticationError(NativeAuthError):
    """The user's input was refused (NA_EAUTH)."""


class InvalidUsernameError(AuthenticationError):
    code = "invalid_username"


class UserNotFoundError(AuthenticationError):
    code = "user_not_found"


class InvalidCredentialsError(AuthenticationError):
    code = "invalid_credentials"


class InvalidCodeError(AuthenticationError):
    code = "invalid_code"


class InvalidPasswordError(AuthenticationError):
    """``reason`` is the server's policy suberror (password_too_weak, …) or "empty"."""
    code = "invalid_password"

    @property
    def reason(self) -> Optional[str]:
        return self.details.get("reason")


class UserAlreadyExistsError(AuthenticationError):
    code = "user_already_exists"


class AttributesInvalidError(AuthenticationError):
    code = "attributes_invalid"

    @property
    def attributes(self) -> list:
        return list(self.details.get("attributes", []))


class UserHasNoPasswordError(AuthenticationError):
    code = "user_has_no_password"


class InvalidContactError(AuthenticationError):
    code = "invalid_contact"


class ContactBlockedError(AuthenticationError):
    code = "contact_blocked"


class AuthMethodBlockedError(AuthenticationError):
    code = "auth_method_blocked"


class InteractionRequiredError(NativeAuthError):
    """The user must act: sign in again (NA_EINTERACTION). ``login_hint`` and ``claims`` (a claims challenge, when
    the server sent one) are what ``Client.sign_in_interactive`` needs to sign the same user in again."""
    code = "interaction_required"

    @property
    def login_hint(self) -> Optional[str]:
        return self.details.get("login_hint")

    @property
    def claims(self) -> Optional[str]:
        return self.details.get("claims")


class BrowserRequiredError(InteractionRequiredError):
    """Native auth cannot complete; use the browser flow. ``redirect_reason`` says why."""
    code = "browser_required"

    @property
    def redirect_reason(self) -> Optional[str]:
        return self.details.get("redirect_reason")


class RefreshTokenExpiredError(InteractionRequiredError):
    code = "refresh_token_expired"


class PasswordChangeRequiredError(InteractionRequiredError):
    code = "password_change_required"


class FlowError(NativeAuthError):
    """A flow is expired, finished, busy, or at another step (NA_ESTATE)."""


class FlowExpiredError(FlowError):
    code = "flow_expired"


class FlowInvalidError(FlowError):
    code = "flow_invalid"


class CancelledError(FlowError):
    """The flow was cancelled (from another thread) while this call waited on it."""
    code = "cancelled"


class NoAccountError(NativeAuthError, LookupError):
    code = "no_account"


class NetworkError(NativeAuthError, ConnectionError):
    code = "network"


class RequestTimeoutError(NetworkError, TimeoutError):
    code = "timeout"


class TLSError(NetworkError):
    code = "tls"


class ServerError(NativeAuthError):
    code = "server"


class ThrottledError(ServerError):
    """The server asked to wait longer than the client's ``retry_after_max_s``; ``retry_after_s`` says how long."""
    code = "throttled"

    @property
    def retry_after_s(self) -> Optional[int]:
        return self.details.get("retry_after_s")


class DeclinedScopesError(ServerError):
    """The server granted fewer scopes than asked (the token for ``granted`` is cached)."""
    code = "declined_scopes"

    @property
    def declined(self) -> list:
        return list(self.details.get("declined", []))

    @property
    def granted(self) -> list:
        return list(self.details.get("granted", []))


class PasswordResetFailedError(ServerError):
    code = "password_reset_failed"


class IdTokenInvalidError(ServerError):
    """The ID token failed its checks (audience, issuer, lifetime); nothing was cached."""
    code = "id_token_invalid"


class AccountRequiredError(InvalidArgumentError):
    """Several accounts are signed in and the call named none; ``accounts`` lists them (pass one as ``account=``)."""
    code = "account_required"

    @property
    def accounts(self) -> list:
        return list(self.details.get("accounts", []))


class AccessDeniedError(AuthenticationError):
    """The user (or the server) refused the browser sign-in or the device code."""
    code = "access_denied"


class BrowserUnavailableError(InteractionRequiredError):
    """No browser could be opened; show ``authorization_url`` to the user."""
    code = "browser_unavailable"

    @property
    def authorization_url(self) -> Optional[str]:
        return self.details.get("authorization_url")


class CacheError(NativeAuthError, OSError):
    """The persistent token cache cannot be used or written (NA_ESTORAGE)."""
    code = "cache_unreadable"


class CacheUnreadableError(CacheError):
    code = "cache_unreadable"


class CacheWriteFailedError(CacheError):
    """The cache file could not be written; the change is kept in memory."""
    code = "cache_write_failed"


class CacheInsecureError(CacheError):
    """The cache file or its directory is writable by others or owned by another user."""
    code = "cache_insecure"


class CacheKeyInvalidError(CacheError):
    """The cache file is encrypted with another key, or was altered."""
    code = "cache_key_invalid"


class LibraryMemoryError(NativeAuthError, MemoryError):
    code = "out_of_memory"


class InternalError(NativeAuthError):
    code = "internal"


__all__ = [
    "ServerDetails", "NativeAuthError", "InvalidArgumentError", "NotSupportedError", "ClientClosedError", "InvalidScopeError",
    "InvalidClientError", "AuthenticationError", "InvalidUsernameError", "UserNotFoundError", "InvalidCredentialsError",
    "InvalidCodeError", "InvalidPasswordError", "UserAlreadyExistsError", "AttributesInvalidError", "UserHasNoPasswordError",
    "InvalidContactError", "ContactBlockedError", "AuthMethodBlockedError", "InteractionRequiredError", "BrowserRequiredError",
    "RefreshTokenExpiredError", "PasswordChangeRequiredError", "FlowError", "FlowExpiredError", "FlowInvalidError",
    "NoAccountError", "NetworkError", "RequestTimeoutError", "TLSError", "ServerError", "LibraryMemoryError", "InternalError",
    "ThrottledError", "DeclinedScopesError", "PasswordResetFailedError", "CancelledError", "IdTokenInvalidError",
    "AccountRequiredError", "AccessDeniedError", "BrowserUnavailableError", "CacheError", "CacheUnreadableError",
    "CacheWriteFailedError", "CacheInsecureError", "CacheKeyInvalidError",
]

_BY_CODE = {cls.code: cls for cls in [
    InvalidArgumentError, NotSupportedError, ClientClosedError, InvalidScopeError, InvalidClientError,
    InvalidUsernameError, UserNotFoundError, InvalidCredentialsError, InvalidCodeError, InvalidPasswordError,
    UserAlreadyExistsError, AttributesInvalidError, UserHasNoPasswordError, InvalidContactError, ContactBlockedError,
    AuthMethodBlockedError, InteractionRequiredError, BrowserRequiredError, RefreshTokenExpiredError,
    PasswordChangeRequiredError, FlowExpiredError, FlowInvalidError, NoAccountError, NetworkError,
    RequestTimeoutError, TLSError, ServerError, LibraryMemoryError, InternalError, ThrottledError,
    DeclinedScopesError, PasswordResetFailedError, CancelledError, IdTokenInvalidError, AccountRequiredError,
    AccessDeniedError, BrowserUnavailableError, CacheUnreadableError, CacheWriteFailedError, CacheInsecureError,
    CacheKeyInvalidError,
]}


def from_document(status: int, doc: Any, state: Any = None) -> NativeAuthError:
    """Builds the exception for an error document ``{"v":1,"error":{…}}``."""
    err = (doc or {}).get("error") or {}
    code = err.get("code") or "internal"
    cls = _BY_CODE.get(code)
    if cls is None:  # a code newer than this package: fall back on the status family
        cls = {-1: InvalidArgumentError, -2: AuthenticationError, -3: NoAccountError, -4: InteractionRequiredError,
               -5: NetworkError, -6: ServerError, -7: FlowError, -8: LibraryMemoryError,
               -10: CacheError}.get(status, NativeAuthError)
    details = {k: v for k, v in err.items() if k not in ("code", "message", "server")}
    return cls(err.get("message") or "unknown error", code=code, status=status,
               server=ServerDetails.from_json(err.get("server")), details=details, state=state)
