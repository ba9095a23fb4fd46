"""The command line's keyring-protected cache (issue 20): `nativeauth login` keeps tokens encrypted with a key in the
Secret Service (a real GNOME Keyring on a private bus) or the kernel keyring, `nativeauth status` says so, and with
neither store both fail with exit code 7 saying what to do. "Neither store" is no D-Bus session and the kernel
keyring's system calls refused by a seccomp filter (no_keyring.c, as Docker's default profile refuses them)."""
from __future__ import annotations

import base64
import json
import os
import pathlib
import shutil
import socket
import subprocess
import threading
import time
from typing import Dict, Iterator, List, Optional

import pytest

from cli_support import native_command
from emulator_protocol import Emulator
from keyring_session import SecretServiceSession, have_keyring_tools
from test_keyring import kernel_unlink

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"
NO_KEYRING_C = pathlib.Path(__file__).with_name("no_keyring.c")

pytestmark = pytest.mark.skipif(not have_keyring_tools(), reason="dbus-daemon, gnome-keyring, secret-tool, keyctl")


@pytest.fixture(scope="module")
def secret_service() -> Iterator[SecretServiceSession]:
    s = SecretServiceSession()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module")
def no_keyring(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A program that runs its arguments with the kernel keyring's system calls refused (EPERM)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("no C compiler for no_keyring.c")
    out = tmp_path_factory.mktemp("no_keyring") / "no_keyring"
    subprocess.run([cc, "-O", "-Wall", "-o", str(out), str(NO_KEYRING_C)], check=True, timeout=60)
    return str(out)


class Run:
    """The command in a private environment: its own HOME and XDG directories, the emulator's settings."""

    def __init__(self, tmp: pathlib.Path, emulator: Emulator, base: Optional[Dict[str, str]] = None) -> None:
        env = {k: v for k, v in (base if base is not None else os.environ).items()
               if not k.startswith(("NATIVEAUTH_", "XDG_")) and k != "DBUS_SESSION_BUS_ADDRESS"}
        if base is not None and "DBUS_SESSION_BUS_ADDRESS" in base:
            env["DBUS_SESSION_BUS_ADDRESS"] = base["DBUS_SESSION_BUS_ADDRESS"]
        env.update(HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "config"), XDG_CACHE_HOME=str(tmp / "cache"),
                   NATIVEAUTH_AUTHORITY=emulator.authority, NATIVEAUTH_CLIENT_ID=emulator.client_id,
                   BROWSER="false")
        (tmp / "home").mkdir(exist_ok=True)
        self.env = env
        self.cache = tmp / "cache" / "nativeauth" / "token_cache.json"
        self.scope: str = emulator.apis["ToDoList"]["scopes"][0]
        self.outputs: List[str] = []

    def __call__(self, *args: str, input: Optional[str] = None, prefix: Optional[List[str]] = None,
                 timeout: float = 60) -> "subprocess.CompletedProcess[str]":
        r = subprocess.run([*(prefix or []), native_command(), *args], input=input, capture_output=True, text=True,
                           env=self.env, timeout=timeout)
        self.outputs += [r.stdout, r.stderr]
        return r

    def login(self, prefix: Optional[List[str]] = None) -> "subprocess.CompletedProcess[str]":
        return self("login", "-u", ANN, "--password-stdin", "-s", self.scope, input=ANN_PW + "\n", prefix=prefix)


def assert_encrypted(cache: pathlib.Path, token: str) -> None:
    data = cache.read_bytes()
    assert data[:4] == b"NACE"
    assert b"AccessToken" not in data and token.encode() not in data and b"RefreshToken" not in data
    assert cache.stat().st_mode & 0o777 == 0o600


def test_login_keeps_the_key_in_the_secret_service_and_status_says_so(
        emulator: Emulator, secret_service: SecretServiceSession, tmp_path: pathlib.Path) -> None:
    run = Run(tmp_path, emulator, secret_service.env)
    r = run.login()
    assert r.returncode == 0, r.stderr
    token = run("token", "-s", run.scope)
    assert token.returncode == 0, token.stderr
    assert_encrypted(run.cache, token.stdout.strip())

    found = secret_service.secret_tool("search", "--all", "application", "nativeauth", "cache_path", str(run.cache))
    assert found.stdout.count("label = NativeAuth token cache key") == 1, found.stdout

    status = run("status", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    doc = json.loads(status.stdout)
    assert doc["safe"] is True and doc["problems"] == []
    assert doc["cache"]["path"] == str(run.cache) and doc["cache"]["encrypted"] is True
    assert doc["cache"]["key_store"] == "secret_service" and doc["cache"]["mode"] == "0600"
    assert doc["cache"]["directory"]["mode"] == "0700"
    assert doc["key_stores"]["secret_service"] == {**doc["key_stores"]["secret_service"], "reachable": True,
                                                   "holds_key": True}
    assert doc["accounts"] == [ANN]
    text = run("status")
    assert text.returncode == 0
    assert "encrypted" in text.stdout and "key: secret_service (key_store auto)" in text.stdout
    assert "Secret Service: reachable" in text.stdout and "holds this cache's key" in text.stdout
    assert "Tokens can be stored safely." in text.stdout
    key = subprocess.run(["secret-tool", "lookup", "application", "nativeauth", "cache_path", str(run.cache)],
                         env=secret_service.env, capture_output=True, timeout=10).stdout
    assert len(key) == 32
    for out in run.outputs[:2] + run.outputs[3:]:  # (what `token` printed is the token)
        assert token.stdout.strip() not in out and key.hex() not in out.lower()


def test_without_a_session_bus_login_uses_the_kernel_keyring(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    run = Run(tmp_path, emulator)
    r = run.login()
    assert r.returncode == 0, r.stderr
    token = run("token", "-s", run.scope).stdout.strip()
    assert_encrypted(run.cache, token)
    doc = json.loads(run("status", "--json").stdout)
    assert doc["cache"]["key_store"] == "kernel_keyring" and doc["safe"] is True
    assert doc["key_stores"]["secret_service"]["reachable"] is False
    assert "DBUS_SESSION_BUS_ADDRESS" in doc["key_stores"]["secret_service"]["message"]
    assert doc["key_stores"]["kernel_keyring"]["holds_key"] is True
    assert run("logout").returncode == 0


def test_with_neither_store_login_and_status_fail_with_exit_code_7_saying_what_to_do(
        emulator: Emulator, no_keyring: str, tmp_path: pathlib.Path) -> None:
    run = Run(tmp_path, emulator)
    before = len(emulator.requests())
    r = run.login(prefix=[no_keyring])
    assert r.returncode == 7, r.stdout + r.stderr
    assert "nativeauth: keyring_unavailable:" in r.stderr
    assert "NATIVEAUTH_CACHE_ENCRYPTION_KEY" in r.stderr and "--plaintext-cache" in r.stderr
    assert len(emulator.requests()) == before  # refused before the password was sent anywhere
    assert not run.cache.exists()  # never a silent plaintext file

    status = run("status", prefix=[no_keyring])
    assert status.returncode == 7
    assert "key: none (key_store auto)" in status.stdout
    assert "kernel keyring: unavailable" in status.stdout and "seccomp" in status.stdout
    assert "Not safe: neither the Secret Service nor the kernel keyring" in status.stdout

    # The two ways out both work.
    plain = run("--plaintext-cache", "login", "-u", ANN, "--password-stdin", "-s", run.scope, input=ANN_PW,
                prefix=[no_keyring])
    assert plain.returncode == 0, plain.stderr
    assert run.cache.read_bytes()[:1] == b"{"
    doc = json.loads(run("status", "--json", "--plaintext-cache", prefix=[no_keyring]).stdout)
    assert doc["safe"] is False and doc["cache"]["encrypted"] is False and doc["cache"]["key_store"] is None
    assert any("plaintext" in p for p in doc["problems"])
    key = base64.b64encode(os.urandom(32)).decode()
    run.env["NATIVEAUTH_CACHE_ENCRYPTION_KEY"] = key
    run.cache.unlink()
    keyed = run.login(prefix=[no_keyring])
    assert keyed.returncode == 0, keyed.stderr
    assert run.cache.read_bytes()[:4] == b"NACE"
    assert run("status", prefix=[no_keyring]).returncode == 0
    for out in run.outputs:
        assert ANN_PW not in out and key not in out


class HungBus:
    """A socket that accepts connections and never says a word (a session bus that hangs); counts the connections."""

    def __init__(self, path: pathlib.Path) -> None:
        self.path = path
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(16)
        self.accepted: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.accepted.append(conn)  # kept open, never answered

    def close(self) -> None:
        self.listener.close()
        for conn in self.accepted:
            conn.close()


def test_a_hung_session_bus_costs_nothing_when_the_key_is_in_the_kernel_keyring(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    run = Run(tmp_path, emulator)  # no session bus: the key goes to the kernel keyring, and that is remembered
    try:
        assert run.login().returncode == 0
        hung = HungBus(tmp_path / "hung-bus")
        run.env["DBUS_SESSION_BUS_ADDRESS"] = f"unix:path={hung.path}"
        try:
            started = time.monotonic()
            token = run("token", "-s", run.scope)
            elapsed = time.monotonic() - started
            assert token.returncode == 0, token.stderr
            # The Secret Service was not asked: the bus was never connected to (it would have cost the 2 s bound).
            assert hung.accepted == []
            print(f"nativeauth token with a hung session bus, key in the kernel keyring: {elapsed:.3f} s")
        finally:
            hung.close()
        assert run("logout").returncode == 0
    finally:
        kernel_unlink(run.cache)


def test_cache_encrypt_turns_a_plaintext_cache_into_the_encrypted_one(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    run = Run(tmp_path, emulator)  # no session bus: the key goes to the kernel keyring
    try:
        plain = run("--plaintext-cache", "login", "-u", ANN, "--password-stdin", "-s", run.scope, input=ANN_PW)
        assert plain.returncode == 0, plain.stderr
        before = run.cache.read_bytes()
        assert before[:1] == b"{"
        # Encrypted by default now: the plaintext file is refused, saying how to encrypt it, and left alone.
        refused = run("token", "-s", run.scope)
        assert refused.returncode == 7, refused.stderr
        assert "nativeauth: cache_key_invalid:" in refused.stderr and "nativeauth cache encrypt" in refused.stderr
        assert run.cache.read_bytes() == before
        status = json.loads(run("status", "--json").stdout)
        assert status["safe"] is False and any("nativeauth cache encrypt" in p for p in status["problems"])

        encrypted = run("cache", "encrypt")
        assert encrypted.returncode == 0, encrypted.stderr
        assert "Encrypted" in encrypted.stdout and "kernel_keyring" in encrypted.stdout
        sealed = run.cache.read_bytes()
        assert sealed[:4] == b"NACE" and b"RefreshToken" not in sealed and run.cache.stat().st_mode & 0o777 == 0o600
        token = run("token", "-s", run.scope)
        assert token.returncode == 0, token.stderr
        assert token.stdout.strip().encode() not in run.cache.read_bytes()
        again = json.loads(run("cache", "encrypt", "--json").stdout)
        assert again == {"path": str(run.cache), "encrypted": True, "migrated": False, "key_store": "kernel_keyring"}
        assert json.loads(run("status", "--json").stdout)["safe"] is True
        # Asked to stay plaintext, there is nothing it may do.
        assert run("--plaintext-cache", "cache", "encrypt").returncode == 2
        # A file that is not a token cache at all is set aside as any corrupt file is, and it says so.
        run.cache.write_bytes(b"not a token cache")
        corrupt = run("cache", "encrypt")
        assert corrupt.returncode == 7 and "was not a token cache" in corrupt.stderr, corrupt.stderr
        assert not run.cache.exists() and any(".corrupt-" in p.name for p in run.cache.parent.iterdir())
        for out in run.outputs:
            assert ANN_PW not in out
    finally:
        kernel_unlink(run.cache)
