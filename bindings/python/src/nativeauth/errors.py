"""Exceptions. Every error the library reports is a `NativeAuthError` whose class follows its stable ``code``.

The codes are those of the C error document ``{"v":1,"error":{"code","message","server"?,…}}`` (``docs/errors.md``);
the document's other members are in ``details`` and, for the common ones, in properties of the class. Classes
inherit a builtin where one fits, so ``except ValueError`` / ``except ConnectionError`` work too. Messages never
contain passwords, codes or tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from .documents import AccountDocument  # typing shapes only: documents imports nothing of the package

# This module is the bottom of the package: states and the client import it, it imports neither (a retryable error's
# ``state`` is set by the client that raises it, so it is typed here without naming the states module).


@dataclass(frozen=True)
class ServerDetails:
    """What the server said, when the error came from a server answer (the error document's ``"server"``)."""

    error: Optional[str] = None
    """The OAuth error, e.g. ``"invalid_grant"``."""
    suberror: Optional[str] = None
    """The suberror, e.g. ``"password_too_weak"``."""
    error_codes: Tuple[int, ...] = ()
    """Entra's AADSTS numbers, e.g. ``(50126,)``."""
    correlation_id: Optional[str] = None
    """The request's client-request-id."""
    trace_id: Optional[str] = None
    """The server's trace id."""
    http_status: Optional[int] = None
    """The HTTP status of the answer."""
    retry_after: Optional[str] = None
    """The Retry-After header of a 429/503, as sent."""

    @classmethod
    def from_json(cls, d: Optional[Mapping[str, Any]]) -> Optional[ServerDetails]:
        """The details of an error document's ``"server"`` member (``None`` without one)."""
        if not d:
            return None
        return cls(d.get("error"), d.get("suberror"), tuple(d.get("error_codes", ())), d.get("correlation_id"),
                   d.get("trace_id"), d.get("http_status"), d.get("retry_after"))


class NativeAuthError(Exception):
    """Base class. ``code`` is the library's stable error code; ``status`` the NA_* return value; ``server`` the
    server's details; ``details`` the error document's other members; ``state`` the flow state to retry on, for
    retryable errors (wrong code, weak password …)."""

    code: str = "internal"
    """The stable error code (``docs/errors.md``)."""

    def __init__(self, message: str, *, code: Optional[str] = None, status: int = -9,
                 server: Optional[ServerDetails] = None, details: Optional[Dict[str, Any]] = None,
                 state: Optional[Any] = None) -> None:
        super().__init__(message)
        self.message: str = message
        """The English sentence (for people; may change)."""
        if code:
            self.code = code
        self.status: int = status
        """The NA_* status the call returned (``-1`` … ``-10``)."""
        self.server: Optional[ServerDetails] = server
        """What the server said, when the error came from a server answer."""
        self.details: Dict[str, Any] = details or {}
        """The error document's other members (``field``, ``flow``, ``reason``, ``login_hint`` …)."""
        self.state: Optional[Any] = state
        """For a retryable error of a flow: the `nativeauth.FlowState` to continue with (e.g. submit another code);
        ``None`` otherwise."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InvalidArgumentError(NativeAuthError, ValueError):
    """A bad argument or request (NA_EINVAL); ``details["field"]`` names the offending member when known."""

    code = "invalid_argument"


class NotSupportedError(InvalidArgumentError):
    """A recognised option this version (or this provider) does not implement."""

    code = "not_supported"


class ClientClosedError(InvalidArgumentError):
    """The client was closed (or its handle is not valid)."""
    code = "invalid_handle"


class InvalidScopeError(InvalidArgumentError):
    """The server refused the scopes."""

    code = "invalid_scope"


class InvalidClientError(InvalidArgumentError):
    """The app registration does not allow native auth (unknown, confidential, or not enabled), or the server
    found the client id not valid (AADSTS90100 naming it)."""

    code = "invalid_client"


class DPoPUnsupportedError(InvalidArgumentError):
    """``dpop=True`` with a provider that does not do DPoP (an Entra authority, a discovery document without ES256 in
    ``dpop_signing_alg_values_supported``, or a bearer token answered to a request with a proof), or `Client.dpop_proof`
    for an account whose tokens are bearer tokens."""

    code = "dpop_unsupported"


class AuthenticationError(NativeAuthError):
    """The user's input was refused (NA_EAUTH)."""


class InvalidUsernameError(AuthenticationError):
    """The username is empty, or the server refused it (AADSTS90100 naming the username)."""

    code = "invalid_username"


class UserNotFoundError(AuthenticationError):
    """No such account (sign-in, password reset)."""

    code = "user_not_found"


class InvalidCredentialsError(AuthenticationError):
    """Wrong password; ``state`` retries the password on the same flow."""

    code = "invalid_credentials"


class InvalidCodeError(AuthenticationError):
    """Wrong or expired one-time code; ``state`` retries on the same flow."""

    code = "invalid_code"


class InvalidPasswordError(AuthenticationError):
    """``reason`` is the server's policy suberror (password_too_weak, …) or "empty"."""
    code = "invalid_password"

    @property
    def reason(self) -> Optional[str]:
        """The server's policy suberror (``password_too_weak``, ``password_too_short`` …) or ``"empty"``."""
        return self.details.get("reason")


class UserAlreadyExistsError(AuthenticationError):
    """A sign-up for an existing account."""

    code = "user_already_exists"


class AttributesInvalidError(AuthenticationError):
    """The server refused sign-up attributes: ``attributes`` names them; the flow stays usable."""

    code = "attributes_invalid"

    @property
    def attributes(self) -> List[str]:
        """The names of the refused attributes."""
        return list(self.details.get("attributes", []))


class UserHasNoPasswordError(AuthenticationError):
    """A password reset for a one-time-passcode account."""

    code = "user_has_no_password"


class InvalidContactError(AuthenticationError):
    """Registration: the contact is not valid."""

    code = "invalid_contact"


class ContactBlockedError(AuthenticationError):
    """Registration: the contact is blocked."""

    code = "contact_blocked"


class AuthMethodBlockedError(AuthenticationError):
    """MFA: the method is blocked."""

    code = "auth_method_blocked"


class InteractionRequiredError(NativeAuthError):
    """The user must act: sign in again (NA_EINTERACTION). ``login_hint`` and ``claims`` (a claims challenge, when
    the server sent one) are what ``Client.sign_in_interactive`` needs to sign the same user in again."""
    code = "interaction_required"

    @property
    def login_hint(self) -> Optional[str]:
        """The account's login hint, for `nativeauth.Client.sign_in_interactive`."""
        return self.details.get("login_hint")

    @property
    def claims(self) -> Optional[str]:
        """The server's claims challenge (a JSON string), to pass as ``claims`` to a new sign-in."""
        return self.details.get("claims")


class BrowserRequiredError(InteractionRequiredError):
    """Native auth cannot complete; use the browser flow. ``redirect_reason`` is the server's reason, when it gave
    one; ``message`` names what would have kept the sign-in in the app when the answer tells (the ``capabilities``
    "mfa_required" / "registration_required", or ``challenge_types``)."""
    code = "browser_required"

    @property
    def redirect_reason(self) -> Optional[str]:
        """Why the server asked for the browser."""
        return self.details.get("redirect_reason")


class RefreshTokenExpiredError(InteractionRequiredError):
    """The refresh token expired: sign in again."""

    code = "refresh_token_expired"


class PasswordChangeRequiredError(InteractionRequiredError):
    """The user must change the password (in the browser)."""

    code = "password_change_required"


class FlowError(NativeAuthError):
    """A flow is expired, finished, busy, or at another step; or a call from a callback would wait for its own
    thread (NA_ESTATE)."""


class FlowExpiredError(FlowError):
    """The flow's continuation token expired: start again."""

    code = "flow_expired"


class FlowInvalidError(FlowError):
    """An unknown, finished or busy flow, or an action it is not waiting for (``details["expected"]``)."""

    code = "flow_invalid"


class CancelledError(FlowError):
    """The flow was cancelled (from another thread) while this call waited on it."""
    code = "cancelled"


class ReentrantCallError(FlowError):
    """A call made from inside a log or browser callback needs something its own thread holds (a token refresh it
    is making); it is answered at once instead of waiting for itself. Like the flow errors, it has the status
    NA_ESTATE: the call may be made again once the callback returned."""

    code = "reentrant_call"


class NoAccountError(NativeAuthError, LookupError):
    """No signed-in account (or none matches ``account``) (NA_ENOTFOUND)."""

    code = "no_account"


class NetworkError(NativeAuthError, ConnectionError):
    """No usable answer: cannot connect, connection broken (NA_ENETWORK)."""

    code = "network"


class RequestTimeoutError(NetworkError, TimeoutError):
    """The connect or request timeout elapsed."""

    code = "timeout"


class TLSError(NetworkError):
    """The TLS handshake or certificate verification failed."""

    code = "tls"


class ServerError(NativeAuthError):
    """The server answered with an error or something unexpected (NA_ESERVER)."""

    code = "server"


class ThrottledError(ServerError):
    """The server asked to wait longer than the client's ``retry_after_max_s``; ``retry_after_s`` says how long."""
    code = "throttled"

    @property
    def retry_after_s(self) -> Optional[int]:
        """How many seconds the server asked to wait."""
        return self.details.get("retry_after_s")


class DeclinedScopesError(ServerError):
    """The server granted fewer scopes than asked (the token for ``granted`` is cached)."""
    code = "declined_scopes"

    @property
    def declined(self) -> List[str]:
        """The scopes the server did not grant."""
        return list(self.details.get("declined", []))

    @property
    def granted(self) -> List[str]:
        """The scopes it granted."""
        return list(self.details.get("granted", []))


class PasswordResetFailedError(ServerError):
    """The server reported that the password reset failed: start it again."""

    code = "password_reset_failed"


class IdTokenInvalidError(ServerError):
    """The ID token failed its checks (audience, issuer, lifetime); nothing was cached."""
    code = "id_token_invalid"


class AccountRequiredError(InvalidArgumentError):
    """Several accounts are signed in and the call named none; ``accounts`` lists them (pass one as ``account=``)."""
    code = "account_required"

    @property
    def accounts(self) -> List[AccountDocument]:
        """The signed-in accounts, as the error document lists them (``username``, ``home_account_id`` …)."""
        return list(self.details.get("accounts", []))


class AccessDeniedError(AuthenticationError):
    """The user (or the server) refused the browser sign-in or the device code."""
    code = "access_denied"


class BrowserUnavailableError(InteractionRequiredError):
    """No browser could be opened. The sign-in has ended: to let the user open an address (on this machine or
    another), start again with ``browser="none"`` and show that state's ``authorization_url``."""
    code = "browser_unavailable"

    @property
    def authorization_url(self) -> Optional[str]:
        """The address the browser was to be given (the sign-in's start page, closed now with the sign-in)."""
        return self.details.get("authorization_url")


class CacheError(NativeAuthError, OSError):
    """The persistent token cache cannot be used or written (NA_ESTORAGE)."""
    code = "cache_unreadable"


class CacheUnreadableError(CacheError):
    """The cache file cannot be read; the client starts empty and keeps changes in memory."""

    code = "cache_unreadable"


class CacheWriteFailedError(CacheError):
    """The cache file could not be written; the change is kept in memory."""
    code = "cache_write_failed"


class CacheInsecureError(CacheError):
    """The cache file or its directory is writable by others or owned by another user."""
    code = "cache_insecure"


class CacheKeyInvalidError(CacheError):
    """The cache file is encrypted with another key, was altered, or its key left the key store; or the cache is
    encrypted and the file in its place is plaintext (not read: ``cache_migrate_plaintext=True`` encrypts it)."""
    code = "cache_key_invalid"


class KeyringUnavailableError(CacheError):
    """``key_store``: neither the Secret Service nor the kernel keyring could hold the cache key; the message says
    what was tried and the ways out (an ``encryption_key``, or a plaintext cache asked for explicitly)."""

    code = "keyring_unavailable"


class LibraryMemoryError(NativeAuthError, MemoryError):
    """The library ran out of memory (NA_ENOMEM)."""

    code = "out_of_memory"


class InternalError(NativeAuthError):
    """A bug in the library (NA_EINTERNAL); please report it."""

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
    "CacheWriteFailedError", "CacheInsecureError", "CacheKeyInvalidError", "ReentrantCallError",
    "KeyringUnavailableError", "DPoPUnsupportedError",
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
    CacheKeyInvalidError, ReentrantCallError, KeyringUnavailableError, DPoPUnsupportedError,
]}


def from_document(status: int, doc: Any, state: Optional[Any] = None) -> NativeAuthError:
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
