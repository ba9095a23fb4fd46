"""The app's own request headers (issue 22, `request_headers`: fraud and bot protection vendors), through the Python
package against the emulator: sent with every native-auth and token request to the authority, never with API calls;
names MSAL reserves, and headers that could split a request, are refused."""
from __future__ import annotations

import urllib.parse
from typing import Any, Dict

import pytest

import nativeauth
from emulator_protocol import Emulator
from nativeauth import Client, SignedIn

HEADERS = {"x-fraud-session": "a1b2c3", "X-Device-Risk": "low\tscore=3"}


def test_request_headers_go_to_the_authority_only(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    emulator.control("DELETE", "requests")
    with Client(emulator.authority, emulator.client_id, request_headers=HEADERS) as client:
        assert client.info["config"]["request_headers"] == HEADERS
        assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=todo["scopes"]), SignedIn)
        assert not client.get_access_token(todo["scopes"], force_refresh=True).from_cache
        assert client.call_api(todo["url"], todo["scopes"]).status == 200
    api_path = urllib.parse.urlsplit(todo["url"]).path
    log = [r for r in emulator.requests() if not r["path"].startswith("/_emulator")]
    identity = [r for r in log if r["path"] != api_path]
    assert {r["path"].rsplit("/", 1)[-1] for r in identity} >= {"initiate", "challenge", "token"}
    for r in identity:
        assert r["headers"].get("x-fraud-session") == "a1b2c3", r["path"]
        assert r["headers"].get("x-device-risk") == "low\tscore=3", r["path"]
    api_calls = [r for r in log if r["path"] == api_path]
    assert api_calls and all(not any(k in r["headers"] for k in ("x-fraud-session", "x-device-risk"))
                             for r in api_calls)


@pytest.mark.parametrize("headers", [
    {"x-ms-trace": "1"}, {"X-Client-Sku": "1"}, {"x-broker-id": "1"}, {"x-app-name": "1"},  # MSAL's prefixes
    {"fraud": "1"}, {"x-": "1"}, {"x-a b": "1"}, {"x-a:b": "1"}, {"x-é": "1"},  # not x-, not a token
    {"x-a": "1\r\nInjected: yes"}, {"x-a": "1\n"}, {"x-a": "a\u0000b"}, {"x-a": "v" * 1025},  # values
    {"x-a": 1}, {"x-a": "1", "X-A": "2"}, {f"x-h{i}": "1" for i in range(17)},
])
def test_invalid_request_headers_are_invalid_argument(emulator: Emulator, headers: Dict[str, Any]) -> None:
    with pytest.raises(nativeauth.InvalidArgumentError) as e:
        Client(emulator.authority, emulator.client_id, request_headers=headers)
    assert "request_headers" in str(e.value)


def test_a_flows_own_request_headers_go_with_its_steps_only(emulator: Emulator) -> None:
    otp = emulator.users["otp"]
    ann = emulator.users["password"]
    with Client(emulator.authority, emulator.client_id, request_headers={"x-tenant-risk": "client"}) as client:
        emulator.control("DELETE", "requests")
        state = client.sign_in(otp["email"], request_headers={"x-fraud-session": "flow-1", "X-Tenant-Risk": "flow"})
        assert isinstance(state, nativeauth.CodeRequired)
        code = emulator.last_code(otp["email"])
        assert isinstance(state.submit_code(code), SignedIn)  # a later step of the same flow
        steps = [r for r in emulator.requests() if not r["path"].startswith("/_emulator")]
        assert len(steps) >= 3
        for r in steps:
            assert r["headers"].get("x-fraud-session") == "flow-1", r["path"]
            assert r["headers"].get("x-tenant-risk") == "flow", r["path"]  # the flow's replaces the client's
        # Another flow without its own: only the client's.
        emulator.control("DELETE", "requests")
        assert isinstance(client.sign_in(ann["email"], ann["password"]), SignedIn)
        for r in [r for r in emulator.requests() if not r["path"].startswith("/_emulator")]:
            assert "x-fraud-session" not in r["headers"] and r["headers"].get("x-tenant-risk") == "client"
        # Sign-up and password reset take them too; bad ones are refused before any request.
        emulator.control("DELETE", "requests")
        assert isinstance(client.reset_password(ann["email"], request_headers={"x-fraud-session": "reset"}),
                          nativeauth.CodeRequired)
        reset = emulator.requests("/resetpassword/v1.0/start")
        assert reset and all(r["headers"].get("x-fraud-session") == "reset" for r in reset)
        assert isinstance(client.sign_up("new.header@contoso.com", request_headers={"x-fraud-session": "up"}),
                          nativeauth.CodeRequired)
        up = emulator.requests("/signup/v1.0/start")
        assert up and all(r["headers"].get("x-fraud-session") == "up" for r in up)
        with pytest.raises(nativeauth.InvalidArgumentError):
            client.sign_in(ann["email"], request_headers={"x-ms-anything": "1"})
