"""Who is at the other end of the session bus (issue 28, defect 2). Another local user who holds the bus address the
victim still has in DBUS_SESSION_BUS_ADDRESS — an abstract socket name anyone may bind, or a socket path re-created
after the real bus ended — runs a fake Secret Service there (fake_secret_bus.py, started as uid 65534 with setpriv):
the cache key must never be sent to it. The library checks the bus's owner (SO_PEERCRED) before sending a byte, and
the Secret Service's owner (GetConnectionUnixUser) before handing it a key; `auto` then goes on to the kernel
keyring."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from typing import Any, Dict, Iterator, List, Optional

import pytest

from emulator_protocol import Emulator
from keyring_session import have_keyring_tools
from test_keyring import assert_encrypted, kernel_unlink, run_worker

NOBODY = 65534
FAKE_BUS = pathlib.Path(__file__).with_name("fake_secret_bus.py")

pytestmark = pytest.mark.skipif(not have_keyring_tools() or shutil.which("setpriv") is None,
                                reason="dbus-daemon, gnome-keyring, secret-tool, keyctl, setpriv")


def python_for(uid: int) -> Optional[str]:
    """A Python interpreter that `uid` may run (this one may live in a home directory only its owner can enter)."""
    for candidate in (sys.executable, "/usr/bin/python3", "/usr/local/bin/python3"):
        probe = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", candidate, "-c",
                                "pass"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return candidate
    return None


class FakeBus:
    """fake_secret_bus.py listening at `address`, as `uid` (via setpriv when it is not our own); its events."""

    def __init__(self, kind: str, name: str, uid: int, service_uid: Optional[int] = None) -> None:
        self.address = f"unix:{kind}={name}"
        source = FAKE_BUS.read_text()  # (given on the command line: the other user may not read our tree)
        argv = ["-c", source, kind, name] + ([str(service_uid)] if service_uid is not None else [])
        if uid == os.geteuid():
            command = [sys.executable, *argv]
        else:
            python = python_for(uid)
            if python is None:
                pytest.skip(f"no Python interpreter that uid {uid} may run")
            command = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", python, *argv]
        self.events: List[Dict[str, Any]] = []
        self._changed = threading.Condition()
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        threading.Thread(target=self._read, daemon=True).start()
        with self._changed:
            if not self._changed.wait_for(lambda: self.proc.poll() is not None or any(
                    e["event"] == "listening" for e in self.events), timeout=60):
                raise RuntimeError("the fake bus did not start")
        if not any(e["event"] == "listening" for e in self.events):
            raise RuntimeError("the fake bus exited before it listened")
        assert self.events[0]["uid"] == uid

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self._changed:
                self.events.append(json.loads(line))
                self._changed.notify_all()

    def kinds(self) -> List[str]:
        with self._changed:
            return [e["event"] for e in self.events]

    def calls(self) -> List[str]:
        with self._changed:
            return [e["member"] for e in self.events if e["event"] == "call"]

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture(params=["abstract", "path"])
def other_users_bus(request: pytest.FixtureRequest) -> Iterator[FakeBus]:
    """A bus run by uid 65534: in the abstract namespace, or a socket file in a directory of that user's."""
    if os.geteuid() != 0:
        pytest.skip("playing another local user needs root (setpriv)")
    if request.param == "abstract":
        bus = FakeBus("abstract", f"/tmp/dbus-{uuid.uuid4().hex}", NOBODY)
        try:
            yield bus
        finally:
            bus.close()
        return
    directory = tempfile.mkdtemp(prefix="na-other-user-")
    try:
        os.chown(directory, NOBODY, NOBODY)
        os.chmod(directory, 0o755)
        bus = FakeBus("path", f"{directory}/bus", NOBODY)
        try:
            yield bus
        finally:
            bus.close()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def bus_env(address: str) -> Dict[str, str]:
    return dict({k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"},
                DBUS_SESSION_BUS_ADDRESS=address)


def test_a_bus_run_by_another_user_is_never_sent_the_key_and_auto_uses_the_kernel_keyring(
        emulator: Emulator, other_users_bus: FakeBus, tmp_path: pathlib.Path) -> None:
    bus = other_users_bus
    cache = tmp_path / "cache.bin"
    env = bus_env(bus.address)
    refused = run_worker(emulator, cache, "secret_service", ["sign_in"], env=env)
    assert refused["ok"] is False and refused["code"] == "keyring_unavailable", refused
    assert f"uid {NOBODY}" in refused["message"] and "another user" in refused["message"], refused["message"]
    assert bus.address.split("=", 1)[1] in refused["message"]  # which bus
    assert not cache.exists()
    # The connection was made (that is how its owner is learnt) and nothing was sent on it: not the SASL
    # credentials byte, not a call, not the key.
    assert "connected" in bus.kinds()
    assert "bytes" not in bus.kinds() and bus.calls() == []

    try:
        auto = run_worker(emulator, cache, "auto", ["sign_in"], env=env)
        assert auto["ok"] and auto["steps"][0]["ok"], auto
        assert auto["info"]["key_store"] == "kernel_keyring"
        assert_encrypted(cache, auto["steps"][0]["token"])
        assert "bytes" not in bus.kinds() and bus.calls() == []
    finally:
        kernel_unlink(cache)


def test_a_secret_service_run_by_another_user_is_never_sent_the_key(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    # A bus run by this user (or root) on which another user owns org.freedesktop.secrets: a bus configured to let
    # other users in, or the system bus named by mistake.
    bus = FakeBus("abstract", f"/tmp/dbus-{uuid.uuid4().hex}", os.geteuid(), service_uid=NOBODY)
    cache = tmp_path / "cache.bin"
    try:
        refused = run_worker(emulator, cache, "secret_service", ["sign_in"], env=bus_env(bus.address))
        assert refused["ok"] is False and refused["code"] == "keyring_unavailable", refused
        assert "org.freedesktop.secrets" in refused["message"] and f"uid {NOBODY}" in refused["message"]
        # It was asked who owns the service, and given nothing: no item was created, no secret asked for.
        assert "GetConnectionUnixUser" in bus.calls()
        assert not {"CreateItem", "GetSecrets", "SearchItems"} & set(bus.calls()), bus.calls()
        assert not cache.exists()
    finally:
        bus.close()
