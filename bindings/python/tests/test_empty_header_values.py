"""An empty header value the app gives reaches the server as an empty header, through the Python package against the
emulator: na_call_api's ``headers`` and the configuration's and a flow's ``request_headers``. libcurl reads a line
``Name:`` (also followed by blanks only) as "remove this header", so the library sends libcurl's ``Name;`` form,
which goes out as ``Name:``. And what no header value may hold (RFC 9110 §5.5): a control character but tab — in what
the app gives, and in what the library builds from a server's answer or a cache file (an access token)."""
from __future__ import annotations

import json
import pathlib
import urllib.parse

import pytest
from emulator_protocol import Emulator
from nativeauth import Client, InvalidArgumentError, NativeAuthError, SignedIn


def test_empty_header_values_are_sent_as_empty_headers(emulator: Emulator) -> None:
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    with Client(emulator.authority, emulator.client_id, request_headers={"x-fraud-session": ""}) as client:
        emulator.control("DELETE", "requests")
        signed = client.sign_in(ann["email"], ann["password"], scopes=todo["scopes"],
                                request_headers={"x-flow-risk": ""})
        assert isinstance(signed, SignedIn)
        identity = [r for r in emulator.requests() if not r["path"].startswith("/_emulator")]
        assert identity
        for r in identity:
            assert r["headers"].get("x-fraud-session") == "", r["path"]
            assert r["headers"].get("x-flow-risk") == "", r["path"]
        emulator.control("DELETE", "requests")
        response = client.call_api(todo["url"], todo["scopes"],
                                   headers={"X-Empty": "", "X-Blank": " \t ", "X-Full": "v", "Accept": ""})
        assert response.status == 200
    api_path = urllib.parse.urlsplit(todo["url"]).path
    calls = [r for r in emulator.requests() if r["path"] == api_path]
    assert len(calls) == 1
    sent = calls[0]["headers"]
    assert sent.get("x-empty") == "" and sent.get("x-blank") == "" and sent.get("x-full") == "v"


def test_header_values_with_control_characters_are_refused_and_tab_and_utf8_are_sent(emulator: Emulator) -> None:
    """na_call_api's header values follow RFC 9110 §5.5 as the configuration's request_headers do: a tab inside and
    UTF-8 go to the API as given; DEL, ESC or VT (which libcurl would send) are refused before any request."""
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    with Client(emulator.authority, emulator.client_id) as client:
        assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=todo["scopes"]), SignedIn)
        emulator.control("DELETE", "requests")
        for bad in ("a\x7fb", "\x1b[31mred", "a\x0bb", "a\x01"):
            with pytest.raises(InvalidArgumentError) as refused:
                client.call_api(todo["url"], todo["scopes"], headers={"X-Bad": bad})
            assert refused.value.details.get("field") == "headers.X-Bad"
        assert not [r for r in emulator.requests() if not r["path"].startswith("/_emulator")]
        response = client.call_api(todo["url"], todo["scopes"], headers={"X-Tab": "a\tb", "X-Utf8": "Zoë ✓"})
        assert response.status == 200
    api_path = urllib.parse.urlsplit(todo["url"]).path
    sent = [r for r in emulator.requests() if r["path"] == api_path][-1]["headers"]
    assert sent.get("x-tab") == "a\tb" and sent.get("x-utf8") == "Zoë ✓"


def test_an_access_token_with_control_characters_is_refused_and_never_sent(emulator: Emulator) -> None:
    """A hostile token endpoint's access token with control characters (ESC, DEL) is refused where it arrives: it
    would go out as ``Authorization: Bearer <token>``, an invalid header (RFC 9110 §5.5) that libcurl sends as it is.
    The error does not quote it, and the token the cache held is still the one the API gets."""
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    hostile = "eyJhostile\x1b[2J\x7fsecretpart"
    with Client(emulator.authority, emulator.client_id) as client:
        assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=todo["scopes"]), SignedIn)
        emulator.control("POST", "faults", {
            "path": "/oauth2/v2.0/token", "status": 200,
            "body": {"access_token": hostile, "token_type": "Bearer", "expires_in": 3600},
        })
        with pytest.raises(NativeAuthError) as refused:
            client.get_access_token(todo["scopes"], force_refresh=True)
        assert refused.value.code == "server"
        assert "secretpart" not in str(refused.value) and "hostile" not in str(refused.value)
        emulator.control("DELETE", "requests")
        assert client.call_api(todo["url"], todo["scopes"]).status == 200
    api_path = urllib.parse.urlsplit(todo["url"]).path
    assert [r["status"] for r in emulator.requests() if r["path"] == api_path] == [200]


def test_a_cached_access_token_with_control_characters_never_reaches_the_api(emulator: Emulator,
                                                                             tmp_path: pathlib.Path) -> None:
    """The transport's last check holds every header the library sends to what na_call_api's ``headers`` must be (no
    control character but tab): an access token with ESC in a cache file (edited, or written by another program)
    is refused before any request, not sent as ``Authorization: Bearer <ESC>…``; the error does not quote it."""
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    path = tmp_path / "cache.json"
    with Client(emulator.authority, emulator.client_id, cache_path=path) as first:
        assert isinstance(first.sign_in(ann["email"], ann["password"], scopes=todo["scopes"]), SignedIn)
    doc = json.loads(path.read_text())
    assert doc["AccessToken"]
    for entry in doc["AccessToken"].values():
        entry["secret"] = "eyJtampered\x1b[2Jsecretpart"
    path.write_text(json.dumps(doc))
    with Client(emulator.authority, emulator.client_id, cache_path=path) as second:
        emulator.control("DELETE", "requests")
        with pytest.raises(NativeAuthError) as refused:
            second.call_api(todo["url"], todo["scopes"])
        assert "secretpart" not in str(refused.value) and "tampered" not in str(refused.value)
    api_path = urllib.parse.urlsplit(todo["url"]).path
    assert not [r for r in emulator.requests() if r["path"] == api_path]


def test_a_header_named_twice_in_any_case_is_refused(emulator: Emulator) -> None:
    """Header names compare in any case (RFC 9110 §5.1): ``{"X-A": …, "x-a": …}`` would go out as two fields (two
    User-Agents), which a field that is not a list may not be. It is refused before any request."""
    ann = emulator.users["password"]
    todo = emulator.apis["ToDoList"]
    with Client(emulator.authority, emulator.client_id) as client:
        assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=todo["scopes"]), SignedIn)
        emulator.control("DELETE", "requests")
        for twice in ({"X-A": "1", "x-a": "2"}, {"user-agent": "u1", "User-Agent": "u2"}):
            with pytest.raises(InvalidArgumentError) as refused:
                client.call_api(todo["url"], todo["scopes"], headers=twice)
            assert refused.value.details.get("field", "").lower() in {"headers.x-a", "headers.user-agent"}
        assert not [r for r in emulator.requests() if not r["path"].startswith("/_emulator")]
        assert client.call_api(todo["url"], todo["scopes"], headers={"X-A": "1", "X-B": "2"}).status == 200
