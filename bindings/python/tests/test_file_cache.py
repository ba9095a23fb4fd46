"""Client(cache_path=…): tokens kept in a file (MSAL's unified cache format), so a new Client is still signed in."""
import json
import os
import pathlib
from typing import Any, Dict, List

import pytest

import nativeauth as na
from emulator_protocol import Emulator

ANN, ANN_PW = "ann@contoso.com", "Demo-Passw0rd!"


def identity_requests(emulator: Emulator) -> List[Dict[str, Any]]:
    return [r for r in emulator.requests() if not r["path"].startswith("/_emulator")]


def test_a_new_client_on_the_same_file_is_signed_in(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "tokens" / "cache.json"
    todo = emulator.apis["ToDoList"]["scopes"][0]
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as first:
        state = first.sign_in(ANN, ANN_PW, scopes=[todo])
        assert isinstance(state, na.SignedIn)
        assert first.info["config"]["cache"] == {"type": "file", "path": str(path), "encrypted": False}
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert oct(path.parent.stat().st_mode & 0o777) == "0o700"
    doc = json.loads(path.read_text())
    assert {"AccessToken", "RefreshToken", "IdToken", "Account", "AppMetadata"} <= set(doc)

    before = len(identity_requests(emulator))
    with na.Client(emulator.authority, emulator.client_id, cache_path=str(path)) as second:
        account = second.account
        assert account is not None and account.username == ANN
        assert account.claims["preferred_username"] == ANN  # decoded from the cached ID token
        token = second.get_access_token([todo])
        assert token.from_cache and token.access_token == state.token.access_token
        assert len(identity_requests(emulator)) == before
        assert second.sign_out() is True
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as third:
        assert third.account is None


def test_encryption_key_and_a_wrong_one(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "cache.bin"
    key = os.urandom(32)
    with na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_encryption_key=key) as c:
        c.sign_in(ANN, ANN_PW)
        assert c.info["config"]["cache"]["encrypted"] is True
    assert path.read_bytes()[:4] == b"NACE"
    with na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_encryption_key=key) as c:
        account = c.account
        assert account is not None and account.username == ANN
    with pytest.raises(na.NativeAuthError) as wrong:
        na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_encryption_key=os.urandom(32))
    assert wrong.value.code == "cache_key_invalid" and wrong.value.status == -10
    with pytest.raises(na.InvalidArgumentError):
        na.Client(emulator.authority, emulator.client_id, cache_path=path, cache_encryption_key=b"short")


def test_sections_a_later_member_replaces_are_gone(emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """A top-level name given twice is the last one's, as MSAL for Python (Python's json module) reads the file: a
    section replaced by a later member of the same name is not read, nor written back."""
    path = tmp_path / "cache.json"
    todo = emulator.apis["ToDoList"]["scopes"][0]
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as first:
        assert isinstance(first.sign_in(ANN, ANN_PW, scopes=[todo]), na.SignedIn)
    text = path.read_text().rstrip()
    assert text.endswith("}")
    names = ("AccessToken", "RefreshToken", "IdToken", "Account")
    path.write_text(text[:-1] + "".join(f',"{n}":null' for n in names) + "}")
    assert all(json.loads(path.read_text())[n] is None for n in names)  # what MSAL for Python reads
    with na.Client(emulator.authority, emulator.client_id, cache_path=path) as second:
        assert second.account is None
        assert second.sign_out() is False
    assert all(json.loads(path.read_text()).get(n) is None for n in names)
