"""NativeAuth for Python: Microsoft Entra External ID native authentication over libnativeauth.so.

    from nativeauth import Client, SignedIn, CodeRequired

    with Client(authority="https://contoso.ciamlogin.com/contoso.onmicrosoft.com", client_id="…") as client:
        state = client.sign_in("ann@contoso.com", password, scopes=["api://…/ToDoList.Read"])
        assert isinstance(state, SignedIn)
        todos = client.call_api("https://api.contoso.com/todolist", ["api://…/ToDoList.Read"]).body
        notes_token = client.get_access_token(["api://…/Notes.Read"])
        client.sign_out()
"""
from ._native import version as _version
from .client import Client
from . import errors
from .errors import *  # noqa: F401,F403 — the exception hierarchy (errors.__all__) is public
from .states import (AccessToken, Account, ApiResponse, AttributesRequired, AuthMethod, BrowserPending,
                     CodeRequired, DeviceCodeRequired, FlowState,
                     MfaRequired, PasswordRequired, PasswordResetCompleted, RegistrationRequired, RequiredAttribute,
                     SignedIn, SignUpCompleted, State)

__version__ = "0.1.0"
library_version = _version()

__all__ = errors.__all__ + ["Client", "AccessToken", "Account", "ApiResponse", "AttributesRequired",
           "AuthMethod", "CodeRequired", "FlowState", "MfaRequired", "PasswordRequired", "PasswordResetCompleted",
           "RegistrationRequired", "RequiredAttribute", "SignedIn", "SignUpCompleted", "State", "library_version",
           "BrowserPending", "DeviceCodeRequired"]
