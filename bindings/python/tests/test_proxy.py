"""Security review, finding 3: cleartext never passes a proxy. Only localhost, 127.0.0.1 and [::1] count as loopback
(plain http allowed, and no proxy ever); every other host follows the environment's proxy settings untouched —
including a NO_PROXY the user set. Runs the library in a child process whose environment names a recording proxy."""
import json
import os
import socket
import subprocess
import sys
import textwrap
import threading
from typing import List, Optional

import pytest

from emulator_protocol import Emulator

CHILD = textwrap.dedent("""
    import json, sys
    import nativeauth as na
    authority, client_id, user, password, scope = sys.argv[1:6]
    out = {}
    with na.Client(authority, client_id) as c:
        out["signed_in"] = isinstance(c.sign_in(user, password, scopes=[scope]), na.SignedIn)
        try:
            c.call_api("https://api.example.test/x", [scope])
            out["api"] = "answered"
        except na.NativeAuthError as e:
            out["api"] = e.code
    for bad in ("http://127.0.0.2:1/t", "http://127.0.0.08:1/t", "http://[0:0:0:0:0:0:0:1]:1/t"):
        try:
            na.Client(bad, client_id).close()
            out[bad] = "accepted"
        except na.InvalidArgumentError:
            out[bad] = "refused"
    print(json.dumps(out))
""")


class RecordingProxy:
    """Accepts connections, records each request line, answers 502 and closes."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.lines: List[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                data = b""
                try:
                    while b"\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    self.lines.append(data.split(b"\r\n")[0].decode(errors="replace"))
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass

    def close(self) -> None:
        self.sock.close()


@pytest.mark.parametrize("no_proxy", [None, "api.example.test"])
def test_loopback_never_goes_through_a_proxy(emulator: Emulator, no_proxy: Optional[str]) -> None:
    proxy = RecordingProxy()
    try:
        env = dict(os.environ)
        for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
            env[k] = f"http://127.0.0.1:{proxy.port}"
        env.pop("no_proxy", None)
        env.pop("NO_PROXY", None)
        if no_proxy:
            env["NO_PROXY"] = no_proxy
        user = emulator.users["password"]
        scope = emulator.apis["ToDoList"]["scopes"][0]
        run = subprocess.run(  # noqa: S603
            [sys.executable, "-c", CHILD, emulator.authority, emulator.client_id, user["email"], user["password"],
             scope], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        # the loopback emulator was reached directly: sign-in worked and the proxy saw none of it
        assert out["signed_in"] is True
        assert not any("127.0.0.1" in line for line in proxy.lines), proxy.lines
        # other hosts follow the environment: through the proxy, unless the user's NO_PROXY names them
        assert out["api"] in ("network", "tls", "server")
        tunnelled = [line for line in proxy.lines if "api.example.test" in line]
        assert (tunnelled == []) if no_proxy else (len(tunnelled) == 1), proxy.lines
        # other spellings of loopback are not loopback
        for bad in ("http://127.0.0.2:1/t", "http://127.0.0.08:1/t", "http://[0:0:0:0:0:0:0:1]:1/t"):
            assert out[bad] == "refused"
    finally:
        proxy.close()
