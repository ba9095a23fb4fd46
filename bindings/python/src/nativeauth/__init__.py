"""NativeAuth for Python: Microsoft Entra External ID native authentication over ``libnativeauth.so``.

Sign users in with your own UI (email + password, or an emailed code), sign them up, reset passwords, get access
tokens for several APIs from one sign-in, call those APIs, and sign out — or sign in through the browser or with a
device code. A thin, typed layer (ctypes, standard library only) over the C library's JSON documents:

    import nativeauth as na

    authority = "https://contoso.ciamlogin.com/contoso.onmicrosoft.com"
    with na.Client(authority, client_id="00001111-aaaa-2222-bbbb-3333cccc4444") as client:
        state = client.sign_in("ann@contoso.com", password, scopes=["api://…/ToDoList.Read"])
        assert isinstance(state, na.SignedIn)
        todos = client.call_api("https://api.contoso.com/todolist").body
        notes = client.get_access_token(["api://…/Notes.Read"])
        print(notes.access_token[:10], notes.expires_on)
        client.sign_out()

- `Client` (`nativeauth.client`): the configured client; every call of the C ABI is a method — but
  `parse_www_authenticate`, which needs no client: a ``WWW-Authenticate`` header's challenges and claims challenge.
- `nativeauth.states`: the results — `AccessToken`, `Account`, `ApiResponse` and the `State` subclasses of the
  flows (`SignedIn`, `CodeRequired`, `PasswordRequired`, …) — frozen dataclasses whose fields carry the names of the
  C documents' members.
- `nativeauth.documents`: ``TypedDict`` shapes of the documents that stay mappings (`Client.info`).
- `nativeauth.errors`: the exceptions, one class per stable error code, rooted at `NativeAuthError`.
- `nativeauth.aio`: asyncio — `nativeauth.aio.AsyncClient`, the same calls as coroutines on one event loop
  (``async with AsyncClient(…) as client: state = await client.sign_in(…)``; ``await asyncio.gather(…)`` of many),
  with its ``Async…`` flow states; no thread per call, cancelling a task cancels the library's operation.

The C reference — each call's request and result documents, the configuration, the error codes — is in the
repository's ``docs/`` (``docs/calls/*.md``, ``docs/configuration.md``, ``docs/errors.md``) and
``include/nativeauth.h``. This reference is generated from the docstrings with ``make docs``
(``build/docs/python/index.html``).
"""
from ._native import version as _library_version
from ._version import __version__ as __version__
from . import documents, errors, states
from .client import BrowserOpener, Client, LogHandler, parse_www_authenticate
from .errors import *  # noqa: F401,F403 — the exception hierarchy (errors.__all__) is public
from .states import (AccessToken, Account, ApiResponse, AttributesRequired, AuthMethod, BrowserPending, Challenge,
                     CodeRequired, DeviceCodeRequired, FlowState, MfaRequired, PasswordRequired,
                     PasswordResetCompleted, RegistrationRequired, RequiredAttribute, SignedIn, SignUpCompleted,
                     State, WWWAuthenticate)

library_version: str = _library_version()
"""The version of the loaded ``libnativeauth.so`` (``na_version()``); ``__version__`` is this package's."""

__all__ = ["Client", "AccessToken", "Account", "ApiResponse", "AttributesRequired", "AuthMethod", "BrowserOpener",
           "BrowserPending", "Challenge", "CodeRequired", "DeviceCodeRequired", "FlowState", "LogHandler",
           "MfaRequired", "PasswordRequired", "PasswordResetCompleted", "RegistrationRequired", "RequiredAttribute",
           "SignedIn", "SignUpCompleted", "State", "WWWAuthenticate", "library_version", "parse_www_authenticate"]
__all__ += errors.__all__
