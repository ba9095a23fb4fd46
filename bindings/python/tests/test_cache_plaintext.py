"""An encrypted cache and a plaintext file in its place (issue 28, defect 5). With a key configured — the host's own
(``cache_encryption_key``) or one in a key store — a file without the encrypted header is not read: its accounts are
never listed or used, the call answers cache_key_invalid saying the file is plaintext and how to migrate, and the file
is never encrypted unasked. ``cache_migrate_plaintext=True`` ("migrate_plaintext_cache") encrypts it once. Plaintext
caches without a key (MSAL for Python's) are unchanged."""
from __future__ import annotations

import os
import pathlib
import shutil
from typing import List, Optional

import pytest

import nativeauth as na
from emulator_protocol import Emulator
from keyring_session import have_keyring_tools
from test_keyring import kernel_unlink

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"


def scope(emulator: Emulator) -> str:
    s: str = emulator.apis["ToDoList"]["scopes"][0]
    return s


def plaintext_cache(emulator: Emulator, path: pathlib.Path) -> bytes:
    """A plaintext cache file holding ANN's sign-in (as MSAL for Python, or --plaintext-cache, would leave it)."""
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as c:
        assert isinstance(c.sign_in(ANN, ANN_PW, scopes=[scope(emulator)]), na.SignedIn)
    data = path.read_bytes()
    assert data[:1] == b"{" and ANN.encode() in data
    return data


def set_aside(directory: pathlib.Path) -> List[str]:
    return [p.name for p in directory.iterdir() if ".corrupt-" in p.name]


def test_a_plaintext_file_is_refused_by_an_encrypted_cache_and_left_alone(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cache.json"
    planted = plaintext_cache(emulator, path)
    key = os.urandom(32)
    with pytest.raises(na.CacheKeyInvalidError) as refused:
        na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_encryption_key=key)
    message = str(refused.value)
    assert "plaintext" in message and "migrate_plaintext_cache" in message and "nativeauth cache encrypt" in message
    assert refused.value.status == -10
    assert path.read_bytes() == planted and set_aside(tmp_path) == []  # not read, not sealed, not set aside


def test_a_plaintext_file_planted_while_a_client_runs_is_never_listed_used_or_sealed(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cache.json"
    planted = plaintext_cache(emulator, tmp_path / "planted.json")
    logs: List[str] = []
    with na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_encryption_key=os.urandom(32),
                   log_level="warning", log_handler=lambda _l, m, _c: logs.append(m)) as c:
        assert c.account is None
        shutil.copyfile(tmp_path / "planted.json", path)
        os.chmod(path, 0o600)
        os.utime(path, ns=(1, 1))  # (another inode and time: the client sees the change at once)
        assert c.account is None  # its account is not listed …
        with pytest.raises(na.NoAccountError):
            c.get_access_token([scope(emulator)])  # … nor used
        # A sign-in takes effect in memory; the file is not sealed behind the user's back.
        with pytest.raises(na.CacheKeyInvalidError) as write:
            c.sign_in(ANN, ANN_PW, scopes=[scope(emulator)])
        assert "plaintext" in str(write.value)
        assert c.get_access_token([scope(emulator)]).from_cache
        assert path.read_bytes() == planted
    assert any("plaintext" in line for line in logs)


def test_migrate_plaintext_cache_encrypts_the_file_once_keeping_its_sign_ins(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cache.json"
    plaintext_cache(emulator, path)
    key = os.urandom(32)
    logs: List[str] = []
    with na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_encryption_key=key,
                   cache_migrate_plaintext=True, log_level="info",
                   log_handler=lambda _l, m, _c: logs.append(m)) as c:
        assert c.info["config"]["cache"]["migrate_plaintext_cache"] is True
        assert path.read_bytes()[:4] == b"NACE"
        account = c.account
        assert account is not None and account.username == ANN
        assert c.get_access_token([scope(emulator)]).from_cache
    assert any("plaintext token cache file was encrypted" in line for line in logs), logs
    # Sealed for good: the next client, without the option, opens it with the key.
    with na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_encryption_key=key) as c:
        assert c.get_access_token([scope(emulator)]).from_cache
    with pytest.raises(na.InvalidArgumentError):
        na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_migrate_plaintext=True)
    with pytest.raises(na.InvalidArgumentError):
        na.Client(emulator.authority, emulator.client_id, cache_migrate_plaintext=True)


def test_an_empty_file_is_a_fresh_encrypted_cache_and_plaintext_caches_without_a_key_are_unchanged(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    empty.chmod(0o600)
    with na.Client(emulator.authority, emulator.client_id, cache_path=empty, cache_encryption_key=os.urandom(32)) as c:
        assert c.account is None
        assert isinstance(c.sign_in(ANN, ANN_PW, scopes=[scope(emulator)]), na.SignedIn)
    assert empty.read_bytes()[:4] == b"NACE"
    plain = tmp_path / "plain.json"
    plaintext_cache(emulator, plain)
    with na.Client(emulator.authority, emulator.client_id, cache_path=plain) as c:
        assert c.get_access_token([scope(emulator)]).from_cache
    assert plain.read_bytes()[:1] == b"{"


@pytest.mark.skipif(not have_keyring_tools(), reason="keyctl")
def test_a_key_store_cache_refuses_a_plaintext_file_without_setting_it_aside(
        emulator: Emulator, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cache.json"
    planted = plaintext_cache(emulator, path)
    try:
        with pytest.raises(na.CacheKeyInvalidError) as refused:
            na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_key_store="kernel_keyring")
        assert "plaintext" in str(refused.value) and "kernel keyring" in str(refused.value)
        assert path.read_bytes() == planted and set_aside(tmp_path) == []
        with na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_key_store="kernel_keyring",
                       cache_migrate_plaintext=True) as c:
            account: Optional[na.Account] = c.account
            assert account is not None and account.username == ANN
        assert path.read_bytes()[:4] == b"NACE" and set_aside(tmp_path) == []
    finally:
        kernel_unlink(path)
