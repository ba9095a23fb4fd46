"""The results are shaped like the C documents (every member a field of the same name), copied out of the library's
strings (each freed), and the compatibility aliases, the context manager and the version hold."""
import ctypes
import dataclasses
import pathlib
import re
from typing import Any, Callable, Dict, List, Optional, Set, Type

import pytest

import nativeauth as na
from emulator_protocol import Emulator
from nativeauth import _native

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"
ROOT = pathlib.Path(__file__).resolve().parents[3]


def field_names(cls: Type[Any]) -> Set[str]:
    return {f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")}


def raw(client: na.Client, name: str, request: Dict[str, Any]) -> Dict[str, Any]:
    """The C document itself, beside what the package makes of it."""
    rc, doc = _native.call(name, client._handle, {"v": 1, **request})
    assert rc == 0, doc
    assert isinstance(doc, dict)
    return doc


def test_results_carry_the_documents_member_names(emulator: Emulator, client: na.Client) -> None:
    todo = emulator.apis["ToDoList"]
    state = client.sign_in(ANN, ANN_PW, scopes=[todo["scopes"][0]])
    assert isinstance(state, na.SignedIn) and state.status == "signed_in"

    token_doc = raw(client, "na_get_access_token", {"scopes": [todo["scopes"][0]]})
    assert set(token_doc) - {"v"} == field_names(na.AccessToken)
    token = client.get_access_token([todo["scopes"][0]])
    for name in field_names(na.AccessToken):
        assert getattr(token, name) == (tuple(token_doc[name]) if name == "scopes" else token_doc[name]), name

    account_doc = raw(client, "na_get_account", {"include_id_token": True})["account"]
    assert set(account_doc) == field_names(na.Account)
    account = client.account
    assert account is not None and dataclasses.asdict(account) == account_doc

    api_doc = raw(client, "na_call_api", {"url": todo["url"], "scopes": [todo["scopes"][0]]})
    assert set(api_doc) - {"v"} <= field_names(na.ApiResponse)
    response = client.call_api(todo["url"], [todo["scopes"][0]])
    assert (response.status, response.headers["content-type"], response.body) == \
        (api_doc["status"], api_doc["headers"]["content-type"], api_doc["body"])
    assert response.body_base64 is None and not response.body_too_deep
    assert response.content.startswith(b"{")

    info = client.info
    assert info["v"] == 1 and info["version"] == na.library_version
    assert info["config"]["client_id"] == emulator.client_id and info["config"]["cache"] == {"type": "memory"}


def test_flow_states_carry_the_documents_member_names(emulator: Emulator, client: na.Client) -> None:
    seen: List[Dict[str, Any]] = []
    original = _native.call

    def recording(name: str, handle: Any, document: Dict[str, Any]) -> Any:
        rc, doc = original(name, handle, document)
        seen.append(doc)
        return rc, doc

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_native, "call", recording)
        code = client.sign_in("olivia@contoso.com")
        mfa = client.sign_in("mike@contoso.com", "Mfa-Passw0rd!")
        signed_up = client.sign_up("typed@contoso.com", "Str0ng-Passw0rd!")
    assert isinstance(code, na.CodeRequired) and isinstance(mfa, na.MfaRequired)
    assert isinstance(signed_up, na.CodeRequired) and len(seen) == 3
    for state, doc in zip((code, mfa, signed_up), seen):
        assert doc["status"] == state.status
        members = set(doc) - {"v", "status"}
        assert members <= field_names(type(state)), members - field_names(type(state))
        for name in members - {"methods", "flow"}:
            assert getattr(state, name) == doc[name], name
        assert state.flow == doc["flow"]
    assert [dataclasses.asdict(m) for m in mfa.methods] == [
        {k: m.get(k) for k in ("id", "channel", "login_hint", "challenge_type")} for m in seen[1]["methods"]]


def test_code_required_fields_from_the_document() -> None:
    from nativeauth.states import state_from_json
    doc = {"v": 1, "status": "code_required", "flow_type": "sign_in", "flow": "f_1", "sent_to": "o***a@co**o.com",
           "channel": "email", "code_length": 8, "resend_interval": 30}
    state = state_from_json(None, doc)  # type: ignore[arg-type]  # no continuation is called
    assert isinstance(state, na.CodeRequired)
    assert (state.sent_to, state.channel, state.code_length, state.resend_interval) == ("o***a@co**o.com", "email", 8, 30)
    del doc["resend_interval"]
    later = state_from_json(None, doc)  # type: ignore[arg-type]
    assert isinstance(later, na.CodeRequired) and later.resend_interval is None


def test_api_response_body_members() -> None:
    binary = na.ApiResponse.from_json({"v": 1, "status": 200, "headers": {"content-type": "image/png"},
                                       "body_base64": "iVBORw0KGgo="})
    assert binary.body is None and binary.body_base64 == "iVBORw0KGgo=" and binary.content == b"\x89PNG\r\n\x1a\n"
    deep = na.ApiResponse.from_json({"v": 1, "status": 200, "headers": {}, "body": "[[[]]]", "body_too_deep": True})
    assert deep.body == "[[[]]]" and deep.body_too_deep and deep.content == b"[[[]]]"
    parsed = na.ApiResponse.from_json({"v": 1, "status": 404, "headers": {}, "body": {"error": "nope"}})
    assert not parsed.ok and parsed.body == {"error": "nope"} and parsed.content == b'{"error":"nope"}'


def test_token_alias_and_secrets_out_of_repr(client: na.Client) -> None:
    state = client.sign_in(ANN, ANN_PW)
    assert isinstance(state, na.SignedIn)
    token = state.token
    assert token.token == token.access_token and token.access_token.startswith("eyJ")  # the backward-compatible name
    with pytest.raises(dataclasses.FrozenInstanceError):
        token.access_token = "x"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        token.token = "x"  # type: ignore[misc]  # a read-only alias
    assert token.access_token not in repr(token) and token.access_token not in repr(state)
    account = client.account
    assert account is not None and account.id_token and account.id_token not in repr(account)


def test_every_result_string_is_copied_and_freed(emulator: Emulator, monkeypatch: pytest.MonkeyPatch) -> None:
    freed: List[Optional[int]] = []
    real_free: Callable[[Any], None] = _native.lib.na_string_free

    def counting_free(ptr: Any) -> None:
        freed.append(ptr.value if isinstance(ptr, ctypes.c_void_p) else ptr)
        real_free(ptr)

    monkeypatch.setattr(_native.lib, "na_string_free", counting_free)
    monkeypatch.setattr(_native, "_free", counting_free)
    todo = emulator.apis["ToDoList"]
    client = na.Client(emulator.authority, emulator.client_id)
    state = client.sign_in(ANN, ANN_PW, scopes=[todo["scopes"][0]])
    token = client.get_access_token([todo["scopes"][0]])
    again = client.get_access_token([todo["scopes"][0]])  # the cached answer: a memo hit, still freed
    response = client.call_api(todo["url"], [todo["scopes"][0]])
    account = client.account
    assert len(freed) == 5 and all(freed)
    client.close()
    # The results are Python values: valid after the library's strings (and the client) are gone.
    assert isinstance(state, na.SignedIn) and state.token.access_token == token.access_token == again.access_token
    assert type(token.access_token) is str and response.ok and account is not None and account.username == ANN


def test_client_is_a_context_manager_with_idempotent_close(emulator: Emulator) -> None:
    with na.Client(emulator.authority, emulator.client_id) as client:
        assert not client.closed
    assert client.closed
    client.close()  # again: nothing happens
    with pytest.raises(na.ClientClosedError):
        client.get_access_token()
    with pytest.raises(RuntimeError):
        with na.Client(emulator.authority, emulator.client_id) as failing:
            raise RuntimeError("the block failed")
    assert failing.closed


def test_one_version_everywhere() -> None:
    header = (ROOT / "include" / "nativeauth.h").read_text()
    match = re.search(r'#define NA_VERSION_STRING "([^"]+)"', header)
    assert match
    assert na.__version__ == match.group(1) == na.library_version
    pyproject = (ROOT / "bindings" / "python" / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject and "\nversion =" not in pyproject.split("[tool.")[0]
