"""The keyring-protected cache (issue 20) with real key stores: a GNOME Keyring on a private D-Bus session, and the
user's persistent kernel keyring. Each step runs in a process of its own (keyring_worker.py), as the user's programs
would, so "a second process is served from the cache" is what is tested."""
from __future__ import annotations

import base64
import json
import os
import pathlib
import socket
import subprocess
import sys
from typing import Any, Dict, Iterator, List, Optional

import pytest

import nativeauth as na
from emulator_protocol import Emulator
from keyring_session import SecretServiceSession, have_keyring_tools

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"
WORKER = str(pathlib.Path(__file__).with_name("keyring_worker.py"))

pytestmark = pytest.mark.skipif(not have_keyring_tools(), reason="dbus-daemon, gnome-keyring, secret-tool, keyctl")


@pytest.fixture(scope="module")
def secret_service() -> Iterator[SecretServiceSession]:
    s = SecretServiceSession()
    try:
        yield s
    finally:
        s.close()


def run_worker(emulator: Emulator, cache: pathlib.Path, key_store: str, actions: List[str],
               env: Optional[Dict[str, str]] = None, timeout_ms: Optional[int] = None) -> Dict[str, Any]:
    config = {"authority": emulator.authority, "client_id": emulator.client_id, "cache_path": str(cache),
              "key_store": key_store, "timeout_ms": timeout_ms, "actions": actions,
              "scope": emulator.apis["ToDoList"]["scopes"][0], "username": ANN, "password": ANN_PW}
    e = dict(env if env is not None else {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"})
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pathlib.Path(na.__file__).parents[1]), e.get("PYTHONPATH")]))
    for name in ("NATIVEAUTH_LIBRARY",):
        if name in os.environ:
            e[name] = os.environ[name]
    r = subprocess.run([sys.executable, WORKER], input=json.dumps(config), env=e, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    out: Dict[str, Any] = json.loads(r.stdout)
    return out


def identity_requests(emulator: Emulator) -> int:
    return len([r for r in emulator.requests() if not r["path"].startswith("/_emulator")])


def kernel_keyctl(script: str, cache: pathlib.Path) -> "subprocess.CompletedProcess[bytes]":
    """Runs `script` in a new session keyring linked to the persistent one ($P); $DESC names the cache's key."""
    env = dict(os.environ, DESC=f"nativeauth:cache-key:{cache}")
    return subprocess.run(["keyctl", "session", "-", "sh", "-c", 'P=$(keyctl get_persistent @s) || exit 9; ' + script],
                          env=env, capture_output=True, timeout=10)


def kernel_key(cache: pathlib.Path) -> Optional[bytes]:
    r = kernel_keyctl('keyctl pipe "$(keyctl search "$P" user "$DESC")"', cache)
    return r.stdout if r.returncode == 0 else None


def kernel_unlink(cache: pathlib.Path) -> None:
    kernel_keyctl('keyctl unlink "$(keyctl search "$P" user "$DESC")" "$P"', cache)


def forms(secret: bytes) -> List[str]:
    """The ways a key could leak as text."""
    return [secret.hex(), secret.hex().upper(), base64.b64encode(secret).decode(),
            base64.urlsafe_b64encode(secret).decode().rstrip("="), secret.decode("latin-1")]


def assert_nothing_leaks(results: List[Dict[str, Any]], key: bytes, tokens: List[str]) -> None:
    for r in results:
        texts = list(r["logs"]) + [r.get("message", ""), r["environ"], r["cmdline"]]
        texts += [s.get("message", "") for s in r.get("steps", [])]
        for text in texts:
            for secret in forms(key) + tokens:
                assert secret not in text


def assert_encrypted(cache: pathlib.Path, token: str) -> None:
    data = cache.read_bytes()
    assert data[:4] == b"NACE"
    assert b"AccessToken" not in data and token.encode() not in data and b"RefreshToken" not in data
    assert oct(cache.stat().st_mode & 0o777) == "0o600"


def test_secret_service_keeps_the_key_and_a_second_process_is_served_from_the_cache(
        emulator: Emulator, secret_service: SecretServiceSession, tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache.bin"
    first = run_worker(emulator, cache, "secret_service", ["sign_in"], env=secret_service.env)
    assert first["ok"] and first["steps"][0]["ok"], (first.get("message"), first.get("steps"))
    assert first["info"] == {"type": "file", "path": str(cache), "encrypted": True, "key_store": "secret_service"}
    token = first["steps"][0]["token"]
    assert_encrypted(cache, token)

    # One item for this file, found by the attributes README documents, labelled clearly.
    found = secret_service.secret_tool("search", "--all", "application", "nativeauth", "cache_path", str(cache))
    assert found.returncode == 0
    assert found.stdout.count("label = ") == 1, found.stdout  # (secret-tool prints the attributes on stderr)
    assert "label = NativeAuth token cache key" in found.stdout
    key = subprocess.run(["secret-tool", "lookup", "application", "nativeauth", "cache_path", str(cache)],
                         env=secret_service.env, capture_output=True, timeout=10).stdout
    assert len(key) == 32

    before = identity_requests(emulator)
    second = run_worker(emulator, cache, "secret_service", ["token", "account"], env=secret_service.env)
    assert second["steps"][0] == {"ok": True, "token": token, "from_cache": True}
    assert second["steps"][1]["username"] == ANN
    assert identity_requests(emulator) == before

    # A second cache file gets a key of its own.
    other = tmp_path / "other.bin"
    assert run_worker(emulator, other, "secret_service", ["account"], env=secret_service.env)["ok"]
    both = secret_service.secret_tool("search", "--all", "application", "nativeauth")
    assert both.stderr.count("attribute.cache_path = " + str(tmp_path)) == 2, both.stderr
    assert_nothing_leaks([first, second], key, [token])


def test_a_key_deleted_from_the_secret_service_sets_the_file_aside_once(
        emulator: Emulator, secret_service: SecretServiceSession, tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache.bin"
    first = run_worker(emulator, cache, "secret_service", ["sign_in"], env=secret_service.env)
    assert first["steps"][0]["ok"]
    original = cache.read_bytes()
    cleared = secret_service.secret_tool("clear", "application", "nativeauth", "cache_path", str(cache))
    assert cleared.returncode == 0

    after = run_worker(emulator, cache, "secret_service", ["token", "account", "sign_in", "token"],
                       env=secret_service.env)
    lost, account, sign_in, token = after["steps"]
    assert lost["ok"] is False and lost["code"] == "cache_key_invalid" and lost["status"] == -10
    assert "sign in again" in lost["message"]
    assert account == {"ok": True, "username": None}  # once: then the cache is simply empty
    assert sign_in["ok"] and token["ok"] and token["from_cache"]
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("cache.bin.corrupt-")]
    assert len(aside) == 1 and aside[0].read_bytes() == original  # kept, never overwritten
    assert any("kept aside as cache.bin.corrupt-" in line for line in after["logs"])
    # A new key for the file, and the new file opens with it in the next process.
    found = secret_service.secret_tool("search", "--all", "application", "nativeauth", "cache_path", str(cache))
    assert found.stdout.count("label = ") == 1, found.stdout
    again = run_worker(emulator, cache, "secret_service", ["token"], env=secret_service.env)
    assert again["steps"][0]["ok"] and again["steps"][0]["from_cache"]


def test_no_session_bus_is_keyring_unavailable_and_auto_falls_back_to_the_kernel_keyring(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache.bin"
    env = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    r = run_worker(emulator, cache, "secret_service", ["account"], env=env)
    assert r["ok"] is False and r["code"] == "keyring_unavailable" and r["status"] == -10
    assert "DBUS_SESSION_BUS_ADDRESS" in r["message"] and '"encryption_key"' in r["message"]
    assert "plaintext" in r["message"]
    assert not cache.exists()  # never a silent plaintext file
    try:
        auto = run_worker(emulator, cache, "auto", ["sign_in"], env=env)
        assert auto["info"]["key_store"] == "kernel_keyring", auto
        assert_encrypted(cache, auto["steps"][0]["token"])
    finally:
        kernel_unlink(cache)


def test_a_bus_nobody_answers_is_keyring_unavailable_within_the_bound(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    # A socket that accepts connections and never says a word: the D-Bus handshake waits, bounded by the timeout.
    sock_path = tmp_path / "silent-bus"
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(sock_path))
    silent.listen(8)
    cache = tmp_path / "cache.bin"
    try:
        env = dict(os.environ, DBUS_SESSION_BUS_ADDRESS=f"unix:path={sock_path}")
        r = run_worker(emulator, cache, "secret_service", ["account"], env=env, timeout_ms=300)
        assert r["ok"] is False and r["code"] == "keyring_unavailable", r
        # The bound is the configured 300 ms (with room for a loaded machine), never D-Bus's 25 s default.
        assert r["seconds"] < 5
        auto = run_worker(emulator, cache, "auto", ["account"], env=env, timeout_ms=300)
        assert auto["ok"] and auto["info"]["key_store"] == "kernel_keyring"
        assert auto["seconds"] < 5
    finally:
        silent.close()
        kernel_unlink(cache)


def test_kernel_keyring_round_trip_across_processes_and_an_unlinked_key(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache.bin"
    try:
        first = run_worker(emulator, cache, "kernel_keyring", ["sign_in"])
        assert first["info"]["key_store"] == "kernel_keyring" and first["steps"][0]["ok"]
        token = first["steps"][0]["token"]
        assert_encrypted(cache, token)
        key = kernel_key(cache)
        assert key is not None and len(key) == 32
        before = identity_requests(emulator)
        second = run_worker(emulator, cache, "kernel_keyring", ["token"])
        assert second["steps"][0] == {"ok": True, "token": token, "from_cache": True}
        assert identity_requests(emulator) == before
        assert_nothing_leaks([first, second], key, [token])

        kernel_unlink(cache)
        assert kernel_key(cache) is None
        lost = run_worker(emulator, cache, "kernel_keyring", ["token", "sign_in"])
        assert lost["steps"][0]["code"] == "cache_key_invalid"
        assert "kernel keyring" in lost["steps"][0]["message"]
        assert lost["steps"][1]["ok"]
        assert [p.name.startswith("cache.bin.corrupt-") for p in tmp_path.iterdir()].count(True) == 1
    finally:
        kernel_unlink(cache)


def test_key_store_configuration_errors(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    with pytest.raises(na.InvalidArgumentError):
        na.Client(emulator.authority, emulator.client_id, cache_path=tmp_path / "c", cache_key_store="kernel_keyring",
                  cache_encryption_key=os.urandom(32))
    with pytest.raises(na.InvalidArgumentError):
        na.Client(emulator.authority, emulator.client_id, cache_path=tmp_path / "c", cache_key_store="keychain")
    with pytest.raises(na.InvalidArgumentError):
        na.Client(emulator.authority, emulator.client_id, cache_key_store="auto")


def kernel_add(cache: pathlib.Path, key: bytes) -> None:
    """Keeps `key` in the persistent keyring under the name an earlier version gave the key of `cache`."""
    env = dict(os.environ, DESC=f"nativeauth:cache-key:{cache}")
    r = subprocess.run(["keyctl", "session", "-", "sh", "-c", 'P=$(keyctl get_persistent @s) || exit 9; '
                        'keyctl padd user "$DESC" "$P" >/dev/null'], input=key, env=env, capture_output=True,
                       timeout=10)
    assert r.returncode == 0, r.stderr


def symlinked(tmp_path: pathlib.Path) -> "tuple[pathlib.Path, pathlib.Path]":
    """A real directory and a symbolic link to it (a symlinked home, another spelling of XDG_CACHE_HOME)."""
    real = tmp_path.resolve() / "real"
    real.mkdir(mode=0o700)
    link = tmp_path.resolve() / "link"
    link.symlink_to(real)
    return real, link


def test_the_same_cache_through_a_symlinked_directory_finds_its_key(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    real, link = symlinked(tmp_path)
    try:
        first = run_worker(emulator, real / "cache.bin", "kernel_keyring", ["sign_in"])
        token = first["steps"][0]["token"]
        second = run_worker(emulator, link / "cache.bin", "kernel_keyring", ["token", "account"])
        assert second["steps"][0] == {"ok": True, "token": token, "from_cache": True}, second
        assert second["steps"][1]["username"] == ANN
        assert [p.name for p in real.iterdir() if ".corrupt-" in p.name] == []  # nobody signed out
        assert kernel_key(link / "cache.bin") is None  # one key, named after the real path
        assert kernel_key(real / "cache.bin") is not None
    finally:
        kernel_unlink(real / "cache.bin")
        kernel_unlink(link / "cache.bin")


def test_a_key_kept_under_the_path_as_given_is_found_and_copied_to_the_canonical_name(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    real, link = symlinked(tmp_path)
    key = os.urandom(32)
    # What an earlier version left: the file sealed with a key named after the path it was given.
    with na.Client(emulator.authority, emulator.client_id, cache_path=link / "cache.bin",
                   cache_encryption_key=key) as c:
        state = c.sign_in(ANN, ANN_PW, scopes=[emulator.apis["ToDoList"]["scopes"][0]])
        assert isinstance(state, na.SignedIn)
        token = state.token.access_token
    try:
        kernel_add(link / "cache.bin", key)
        r = run_worker(emulator, link / "cache.bin", "kernel_keyring", ["token"])
        assert r["steps"][0] == {"ok": True, "token": token, "from_cache": True}, r
        assert kernel_key(real / "cache.bin") == key  # copied to the canonical name
        assert kernel_key(link / "cache.bin") == key  # (and left for earlier versions)
        again = run_worker(emulator, real / "cache.bin", "kernel_keyring", ["token"])
        assert again["steps"][0]["from_cache"]
        assert [p.name for p in real.iterdir() if ".corrupt-" in p.name] == []
    finally:
        kernel_unlink(real / "cache.bin")
        kernel_unlink(link / "cache.bin")


def test_the_secret_service_names_the_key_after_the_real_path(
        emulator: Emulator, secret_service: SecretServiceSession, tmp_path: pathlib.Path) -> None:
    real, link = symlinked(tmp_path)
    first = run_worker(emulator, link / "cache.bin", "secret_service", ["sign_in"], env=secret_service.env)
    token = first["steps"][0]["token"]
    second = run_worker(emulator, real / "cache.bin", "secret_service", ["token"], env=secret_service.env)
    assert second["steps"][0] == {"ok": True, "token": token, "from_cache": True}, second
    found = secret_service.secret_tool("search", "--all", "application", "nativeauth", "cache_path",
                                       str(real / "cache.bin"))
    assert found.stdout.count("label = ") == 1, found.stdout
