"""Client capabilities and claims (issue 22) through the Python package against the emulator: `client_capabilities`
reach the service as `claims` on every grant — native token, refresh, authorization request and code, device code —
merged with a request's own claims as MSAL for Python merges them."""
from __future__ import annotations

import json
import urllib.parse
from typing import Any, Dict, List

import pytest

import nativeauth
from emulator_protocol import Emulator
from nativeauth import Client, DeviceCodeRequired, SignedIn
from test_browser_flows import PageBrowser

CP1: Dict[str, Any] = {"access_token": {"xms_cc": {"values": ["cp1", "cp2"]}}}


def token_claims(emulator: Emulator, grant_type: str) -> List[Any]:
    """The `claims` each token request of this grant sent (None where it sent none), oldest first."""
    return [json.loads(r["fields"]["claims"]) if "claims" in r["fields"] else None
            for r in emulator.requests("/oauth2/v2.0/token") if r["fields"].get("grant_type") == grant_type]


def test_capabilities_go_with_native_and_refresh_grants_merged_with_the_requests_claims(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]["scopes"]
    emulator.control("DELETE", "requests")
    with Client(emulator.authority, emulator.client_id, client_capabilities=["cp1", "cp2", "cp1"]) as client:
        assert client.info["config"]["client_capabilities"] == ["cp1", "cp2"]
        assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=todo), SignedIn)
        assert token_claims(emulator, "password") == [CP1]

        assert not client.get_access_token(todo, force_refresh=True).from_cache
        assert token_claims(emulator, "refresh_token") == [CP1]
        # A request's own claims: the capabilities are merged in (an xms_cc of the request's is replaced).
        asked = {"access_token": {"acrs": {"essential": True, "value": "c1"}, "xms_cc": {"values": ["x"]}},
                 "id_token": {"auth_time": {"essential": True}}}
        assert not client.get_access_token(todo, claims=asked).from_cache  # a claims request skips the cache
        assert token_claims(emulator, "refresh_token")[-1] == {
            "access_token": {"acrs": {"essential": True, "value": "c1"}, "xms_cc": {"values": ["cp1", "cp2"]}},
            "id_token": {"auth_time": {"essential": True}}}

    # Without capabilities nothing is added.
    emulator.control("DELETE", "requests")
    with Client(emulator.authority, emulator.client_id) as plain:
        assert plain.info["config"]["client_capabilities"] == []
        assert isinstance(plain.sign_in(ann["email"], ann["password"], scopes=todo), SignedIn)
        assert token_claims(emulator, "password") == [None]


def test_capabilities_go_with_the_browser_and_device_code_grants(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]["scopes"]
    emulator.control("DELETE", "requests")
    browser = PageBrowser(ann["email"], ann["password"])
    with Client(emulator.authority, emulator.client_id, browser=browser, client_capabilities=["cp1", "cp2"]) as client:
        assert isinstance(client.sign_in_interactive(todo), SignedIn)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(browser.authorization_urls[0]).query)
        assert json.loads(query["claims"][0]) == CP1
        assert token_claims(emulator, "authorization_code") == [CP1]

        state = client.sign_in_device_code(todo)
        assert isinstance(state, DeviceCodeRequired)
        emulator.control("POST", "device/approve", {"user_code": state.user_code, "email": ann["email"]})
        assert isinstance(state.wait(timeout=20), SignedIn)
        polls = token_claims(emulator, "urn:ietf:params:oauth:grant-type:device_code")
        assert polls and all(c == CP1 for c in polls)
        device = [r for r in emulator.requests("devicecode") if r["method"] == "POST"]
        assert device and json.loads(device[-1]["fields"]["claims"]) == CP1


@pytest.mark.parametrize("capabilities", [["cp 1"], [""], ["x" * 65], ["c\u00e9"], [f"c{i}" for i in range(17)], [1]])
def test_invalid_client_capabilities_are_invalid_argument(emulator: Emulator, capabilities: List[Any]) -> None:
    with pytest.raises(nativeauth.InvalidArgumentError) as e:
        Client(emulator.authority, emulator.client_id, client_capabilities=capabilities)
    assert "client_capabilities" in str(e.value)
