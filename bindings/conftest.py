"""Shared fixtures for the bindings' tests (Python package and C examples): the emulator executable on an ephemeral
port, one per test, and its controls (outbox, request log, settings)."""
from __future__ import annotations

import json
import os
import pathlib
import ssl
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


class Emulator:
    def __init__(self, ready: dict):
        self.ready = ready
        self.base = ready["base_url"]
        self.authority = ready["authority"]
        self.client_id = ready["client_id"]
        self.apis = {a["name"]: a for a in ready["apis"]}
        self.users = {u["kind"]: u for u in ready["users"]}

    def control(self, method: str, path: str, body: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        # Every control needs the ready document's control_token.
        req = urllib.request.Request(self.base + "/_emulator/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "X-Emulator-Token": self.ready["control_token"]})
        context = ssl.create_default_context(cafile=self.ready["ca_file"]) if "ca_file" in self.ready else None
        try:
            with urllib.request.urlopen(req, timeout=10, context=context) as r:
                return json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            return json.loads(e.read() or b"{}")

    def last_code(self, email: str) -> str:
        messages = self.control("GET", "outbox?to=" + urllib.parse.quote(email))["messages"]
        assert messages, f"no code sent to {email}"
        return messages[-1]["code"]

    def requests(self, path: str | None = None) -> list:
        return self.control("GET", "requests" + (f"?path={path}" if path else ""))["requests"]


def _start(tls: bool):
    binary = os.environ.get("NATIVEAUTH_EMULATOR") or str(ROOT / ".build" / "debug" / "nativeauth-emulator")
    if not os.path.exists(binary):
        pytest.fail(f"emulator not built: {binary} (make emulator)")
    with tempfile.TemporaryDirectory() as tmp:
        ready = pathlib.Path(tmp) / "ready.json"
        args = [binary, "--quiet", "--port", "0", "--ready-file", str(ready)] + (["--tls", "--tls-dir", tmp] if tls else [])
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # noqa: S603
        try:
            deadline = time.monotonic() + 30
            while not ready.exists():  # readiness, not a fixed delay
                if proc.poll() is not None:
                    pytest.fail("emulator exited: " + proc.stderr.read().decode(errors="replace"))
                assert time.monotonic() < deadline, "emulator did not start"
                time.sleep(0.01)
            yield Emulator(json.loads(ready.read_text()))
        finally:
            proc.terminate()
            proc.wait(timeout=10)


@pytest.fixture
def emulator():
    yield from _start(tls=False)


@pytest.fixture
def tls_emulator():
    yield from _start(tls=True)

