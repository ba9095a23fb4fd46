"""A header the app gives na_call_api replaces the library's own of the same name (its User-Agent), rather than going
on the wire beside it: RFC 9110 §5.3 allows a field line twice only for a list-valued field, and User-Agent is not
one (a server may read either, or refuse the request). Through the Python package, against a local API that records
every header line it receives."""
from __future__ import annotations

import http.server
import threading
from typing import Any, Dict, Iterator, List

import pytest

from emulator_protocol import Emulator
from nativeauth import Client, SignedIn


class RecordingAPI(http.server.BaseHTTPRequestHandler):
    received: List[Dict[str, List[str]]] = []

    def do_GET(self) -> None:
        lines: Dict[str, List[str]] = {}
        for name, value in self.headers.items():
            lines.setdefault(name.lower(), []).append(value)
        type(self).received.append(lines)
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def api() -> Iterator[tuple[str, List[Dict[str, List[str]]]]]:
    """The recording API's origin (http on 127.0.0.1: bearer tokens go there) and what it received."""
    received: List[Dict[str, List[str]]] = []

    class Recorder(RecordingAPI):
        pass

    Recorder.received = received
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()


def signed_in(emulator: Emulator) -> Client:
    """A client signed in with the password user for the ToDoList API (use it in a `with`)."""
    ann = emulator.users["password"]
    client = Client(emulator.authority, emulator.client_id)
    assert isinstance(client.sign_in(ann["email"], ann["password"], scopes=emulator.apis["ToDoList"]["scopes"]),
                      SignedIn)
    return client


@pytest.mark.parametrize("given", ["myapp/1.0", "User-Agent", ""])
def test_an_apps_user_agent_replaces_the_librarys(emulator: Emulator, api: tuple[str, List[Dict[str, List[str]]]],
                                                  given: str) -> None:
    origin, received = api
    todo = emulator.apis["ToDoList"]
    with signed_in(emulator) as client:
        name = "user-agent" if given == "User-Agent" else "User-Agent"  # any ASCII case names the same field
        value = "myapp/2.0" if given == "User-Agent" else given
        response = client.call_api(origin + "/h", todo["scopes"], headers={name: value, "X-Other": "o"})
        assert response.status == 200
    assert len(received) == 1
    assert received[0].get("user-agent") == [value]
    assert received[0].get("x-other") == ["o"]


@pytest.mark.parametrize("name", ["Authorization: Bearer SECRETTOKEN-1234", "X-Key SECRETTOKEN-1234", "SECRETTOKEN\u00e9"])
def test_a_name_that_is_not_a_token_is_not_quoted_back(emulator: Emulator, api: tuple[str, List[Dict[str, List[str]]]],
                                                        name: str) -> None:
    """An app that passes a whole header line as a name (with a secret in it) is told what is wrong, never shown it."""
    from nativeauth import NativeAuthError

    origin, received = api
    todo = emulator.apis["ToDoList"]
    with signed_in(emulator) as client:
        with pytest.raises(NativeAuthError) as caught:
            client.call_api(origin + "/h", todo["scopes"], headers={name: "v"})
    assert caught.value.code == "invalid_argument"
    assert "SECRETTOKEN" not in str(caught.value) and "SECRETTOKEN" not in repr(caught.value)
    assert "SECRETTOKEN" not in str(caught.value.details)
    assert received == []
