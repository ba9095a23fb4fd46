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


def api_statuses(emulator: Emulator, api: Dict[str, Any]) -> List[int]:
    path = urllib.parse.urlsplit(api["url"]).path
    return [r["status"] for r in emulator.requests(path)]


@pytest.mark.parametrize("encoding", ["base64", "base64url", "json"])
def test_a_claims_challenge_is_answered_with_one_token_request_and_one_retry(emulator: Emulator, encoding: str) -> None:
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    with Client(emulator.authority, emulator.client_id, client_capabilities=["cp1", "cp2"]) as client:
        assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=todo["scopes"]), SignedIn)
        assert client.call_api(todo["url"], todo["scopes"]).status == 200
        # A Continuous Access Evaluation event: the tokens that exist now are challenged.
        event = emulator.control("POST", "api_challenges", {"api": "ToDoList", "encoding": encoding})
        assert event["tokens"] >= 1
        emulator.control("DELETE", "requests")
        response = client.call_api(todo["url"], todo["scopes"])
        assert response.status == 200 and response.ok
        assert api_statuses(emulator, todo) == [401, 200]
        # One token request, with the challenge's claims and the capabilities, not from the cache.
        expected = json.loads(event["claims"])
        expected["access_token"]["xms_cc"] = {"values": ["cp1", "cp2"]}
        assert token_claims(emulator, "refresh_token") == [expected]
        # The new token is cached as usual: the next call needs no token request.
        assert client.call_api(todo["url"], todo["scopes"]).status == 200
        assert len(token_claims(emulator, "refresh_token")) == 1


def test_a_second_challenge_is_the_apis_answer_never_a_loop(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    with Client(emulator.authority, emulator.client_id, client_capabilities=["cp1"]) as client:
        assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=todo["scopes"]), SignedIn)
        emulator.control("POST", "api_challenges", {"api": "ToDoList", "always": True})
        emulator.control("DELETE", "requests")
        response = client.call_api(todo["url"], todo["scopes"])
        assert response.status == 401 and not response.ok
        assert "insufficient_claims" in response.headers.get("www-authenticate", "")
        assert api_statuses(emulator, todo) == [401, 401]
        assert len(token_claims(emulator, "refresh_token")) == 1


def test_a_challenge_that_needs_interaction_is_answered_by_an_interactive_sign_in_with_its_claims(
        emulator: Emulator) -> None:
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    browser = PageBrowser(ann["email"], ann["password"])
    with Client(emulator.authority, emulator.client_id, browser=browser, client_capabilities=["cp1"]) as client:
        assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=todo["scopes"]), SignedIn)
        event = emulator.control("POST", "api_challenges", {"api": "ToDoList"})
        # The token endpoint wants the user (MFA, a policy): the refresh with the claims is refused.
        emulator.control("POST", "token_errors", {"error": "interaction_required", "grant_type": "refresh_token",
                                                  "count": 1, "error_codes": [50076]})
        with pytest.raises(nativeauth.InteractionRequiredError) as e:
            client.call_api(todo["url"], todo["scopes"])
        assert e.value.claims is not None and json.loads(e.value.claims) == json.loads(event["claims"])
        signed = client.sign_in_interactive(todo["scopes"], claims=e.value.claims,  # the JSON text, as it came
                                            login_hint=e.value.login_hint)
        assert isinstance(signed, SignedIn)
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(browser.authorization_urls[-1]).query)
        sent = json.loads(query["claims"][0])
        assert sent["access_token"]["nbf"] == json.loads(event["claims"])["access_token"]["nbf"]
        assert client.call_api(todo["url"], todo["scopes"]).status == 200
