"""An encrypted cache file with no note of the store that holds its key (`<path>.key-store`: a file an earlier
version wrote, or a note that could not be written) while that store cannot be reached — a login over SSH without a
session bus, a keyring daemon that hangs: the key is probably there, so no new key is made in the store that answers
(which would set the file aside and sign the user out); the answer is `keyring_unavailable`, and the file opens again
once the store can be reached."""
from __future__ import annotations

import os
import pathlib
from typing import Iterator

import pytest

from emulator_protocol import Emulator
from keyring_session import SecretServiceSession, have_keyring_tools
from test_keyring import kernel_key, kernel_unlink, run_worker

pytestmark = pytest.mark.skipif(not have_keyring_tools(), reason="dbus-daemon, gnome-keyring, secret-tool, keyctl")


@pytest.fixture
def secret_service() -> Iterator[SecretServiceSession]:
    s = SecretServiceSession()
    try:
        yield s
    finally:
        s.close()


def test_an_unreachable_store_without_a_note_never_gets_the_file_a_new_key(
        emulator: Emulator, secret_service: SecretServiceSession, tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache.bin"
    first = run_worker(emulator, cache, "auto", ["sign_in"], env=secret_service.env)
    assert first["steps"][0]["ok"] and first["info"]["key_store"] == "secret_service", first
    token = first["steps"][0]["token"]
    note = pathlib.Path(str(cache) + ".key-store")
    assert note.read_text() == "secret_service\n"
    note.unlink()  # as an earlier version left it
    sealed = cache.read_bytes()
    no_bus = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
    try:
        r = run_worker(emulator, cache, "auto", ["token"], env=no_bus)
        assert r["ok"] is False and r["code"] == "keyring_unavailable", r
        assert "Secret Service" in r["message"] and "no new key" in r["message"], r["message"]
        assert kernel_key(cache) is None  # no key made elsewhere
        assert cache.read_bytes() == sealed and not [p for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    finally:
        kernel_unlink(cache)
    again = run_worker(emulator, cache, "auto", ["token"], env=secret_service.env)
    assert again["steps"][0] == {"ok": True, "token": token, "from_cache": True}, again
