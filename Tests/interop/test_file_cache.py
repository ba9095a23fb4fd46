"""The file token cache across processes and SDKs: NativeAuth (the C ABI, through ctypes and a small C program) and
MSAL for Python (SerializableTokenCache) share one sign-in through one file, under concurrent use and kill -9.

MSAL Python only accepts https authorities, so the emulator runs with --tls here; REQUESTS_CA_BUNDLE/CURL_CA_BUNDLE are
cleared for these processes (they would override MSAL's verify=). The emulator's request log shows what reached it.
"""
import json
import os
import pathlib
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest
import requests

ROOT = pathlib.Path(__file__).resolve().parents[2]
HERE = pathlib.Path(__file__).resolve().parent
APP_ID = "44445555-eeee-6666-ffff-777788889999"
PERMISSIONS = 1200


def library() -> str:
    path = os.environ.get("NATIVEAUTH_LIBRARY") or str(ROOT / ".build" / "release" / "libnativeauth.so")
    if not os.path.exists(path):
        pytest.fail(f"library not built: {path} (run `make lib`)")
    return path


def start_emulator(tmp: pathlib.Path, tls: bool):
    from conftest import emulator_binary
    config = {
        # Two processes may present one refresh token at once (nothing serialises their network calls); the real
        # service accepts that, so the emulator's replay detection is off here.
        "refresh_token_reuse_detection": False,
        "apis": [
            {"name": "ToDoList", "app_id": "11112222-aaaa-3333-bbbb-4444cccc5555", "path": "/api/todolist",
             "permissions": ["ToDoList.Read", "ToDoList.ReadWrite"]},
            {"name": "Notes", "app_id": "22223333-bbbb-4444-cccc-5555dddd6666", "path": "/api/notes",
             "permissions": ["Notes.Read"]},
            {"name": "Cache", "app_id": APP_ID, "path": "/api/cache",
             "permissions": [f"P{i:04d}" for i in range(PERMISSIONS)]},
        ],
    }
    (tmp / "config.json").write_text(json.dumps(config))
    ready = tmp / "ready.json"
    args = [emulator_binary(), "--quiet", "--port", "0", "--ready-file", str(ready), "--config", str(tmp / "config.json")]
    if tls:
        args += ["--tls", "--tls-dir", str(tmp)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not ready.exists():
        if proc.poll() is not None:
            pytest.fail("emulator exited: " + proc.stderr.read().decode(errors="replace"))
        if time.monotonic() > deadline:
            pytest.fail("emulator did not become ready")
        time.sleep(0.02)
    return proc, json.loads(ready.read_text())


@pytest.fixture(scope="module")
def emu():
    with tempfile.TemporaryDirectory() as tmp:
        proc, ready = start_emulator(pathlib.Path(tmp), tls=True)
        user = next(u for u in ready["users"] if u["kind"] == "password")
        apis = {a["name"]: a["scopes"] for a in ready["apis"]}
        yield {"ready": ready, "user": user, "apis": apis}
        proc.terminate()
        proc.wait(timeout=10)


def env() -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE")}
    e["PYTHONPATH"] = str(ROOT / "bindings" / "python" / "src")
    e["NATIVEAUTH_LIBRARY"] = library()
    return e


def run(command: str, args: dict, *, user: str | None = None) -> dict:
    argv = [sys.executable, str(HERE / "cache_programs.py"), command, json.dumps(args)]
    if user:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", "--"] + argv
    p = subprocess.run(argv, env=env(), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError(f"{command} failed:\n{p.stderr[-4000:]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def base(emu: dict, path: str) -> dict:
    r = emu["ready"]
    return {"authority": r["authority"], "oidc_authority": r["oidc_authority"], "client_id": r["client_id"],
            "ca": r["ca_file"], "controls": r["controls"], "control_token": r["control_token"], "path": path,
            "username": emu["user"]["email"], "password": emu["user"]["password"]}


def test_msal_for_python_shares_our_sign_in(emu, tmp_path):
    path = str(tmp_path / "cache.json")
    todo, notes = emu["apis"]["ToDoList"][0], emu["apis"]["Notes"][0]
    ours = run("na-sign-in", {**base(emu, path), "scopes": [todo]})
    assert oct(os.stat(path).st_mode & 0o777) == "0o600"
    assert oct(os.stat(tmp_path).st_mode & 0o777) == "0o700"

    # MSAL finds the account and serves our access token from the file, with no request to the emulator; a new scope
    # goes through the emulator with our refresh token.
    msal_side = run("msal-read", {**base(emu, path), "cached_scopes": [todo], "new_scopes": [notes]})
    assert msal_side["accounts"] == [emu["user"]["email"]]
    assert msal_side["cached"]["token_source"] == "cache"
    assert msal_side["cached"]["access_token"] == ours["access_token"]
    assert msal_side["requests_for_cached"] == 0
    assert msal_side["fresh"]["token_source"] == "identity_provider", msal_side
    assert msal_side["token_requests"] == 1

    # MSAL wrote its cache back: a new NativeAuth process is signed in and gets both tokens with zero requests.
    again = run("na-read", {**base(emu, path), "scopes": [[todo], [notes]]})
    assert again["accounts"] == [emu["user"]["email"]]
    assert [t["from_cache"] for t in again["tokens"]] == [True, True]
    assert again["tokens"][0]["access_token"] == ours["access_token"]
    assert again["tokens"][1]["access_token"] == msal_side["fresh"]["access_token"]
    assert again["requests"] == 0
    assert again["info"] == {"type": "file", "path": path, "encrypted": False}


def test_we_share_msal_for_pythons_sign_in(emu, tmp_path):
    path = str(tmp_path / "cache.json")
    todo = emu["apis"]["ToDoList"][0]
    theirs = run("msal-sign-in", {**base(emu, path), "scopes": [todo]})
    assert theirs["access_token"], theirs
    ours = run("na-read", {**base(emu, path), "scopes": [[todo]]})
    assert ours["accounts"] == [emu["user"]["email"]]
    assert ours["tokens"] == [{"access_token": theirs["access_token"], "from_cache": True}]
    assert ours["requests"] == 0


def test_a_restart_stays_signed_in(emu, tmp_path):
    path = str(tmp_path / "nested" / "dir" / "cache.json")
    todo = emu["apis"]["ToDoList"][0]
    first = run("na-sign-in", {**base(emu, path), "scopes": [todo]})
    second = run("na-read", {**base(emu, path), "scopes": [[todo], []]})
    assert second["accounts"] == [emu["user"]["email"]]
    assert second["tokens"][0] == {"access_token": first["access_token"], "from_cache": True}
    assert second["tokens"][1]["from_cache"]  # no scopes: the sign-in's, kept in the file
    assert second["requests"] == 0
    assert oct(os.stat(tmp_path / "nested").st_mode & 0o777) == "0o700"


def test_an_encrypted_cache_survives_a_restart(emu, tmp_path):
    import base64
    path = str(tmp_path / "cache.bin")
    key = base64.b64encode(os.urandom(32)).decode()
    todo = emu["apis"]["ToDoList"][0]
    first = run("na-sign-in", {**base(emu, path), "scopes": [todo], "key": key})
    assert pathlib.Path(path).read_bytes()[:4] == b"NACE"
    assert first["access_token"].encode() not in pathlib.Path(path).read_bytes()
    second = run("na-read", {**base(emu, path), "scopes": [[todo]], "key": key})
    assert second["tokens"] == [{"access_token": first["access_token"], "from_cache": True}]
    assert second["info"]["encrypted"] is True and second["info"]["key_store"] == "encryption_key"
    raw = base64.b64decode(key)
    for form in (key, raw.hex(), base64.urlsafe_b64encode(raw).decode().rstrip("=")):
        assert form not in json.dumps(second["info"])  # where the key is, never the key


def writer_binary(tmp: pathlib.Path) -> str:
    out = tmp / "cache_writer"
    subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-O1", "-Wall", "-Wextra", "-Werror",
                    str(HERE / "cache_writer.c"), "-o", str(out), "-ldl"], check=True)
    return str(out)


def writer_config(emu: dict, path: str) -> str:
    r = emu["ready"]
    return json.dumps({"v": 1, "authority": r["authority"], "client_id": r["client_id"], "ca_bundle": r["ca_file"],
                       "cache": {"type": "file", "path": path}})


def at_scopes(path: str) -> set:
    """The Cache API scopes that have an access token in the file (which must parse)."""
    with open(path) as f:
        doc = json.load(f)
    found = set()
    for entry in doc.get("AccessToken", {}).values():
        found.update(s for s in entry["target"].split() if "/P" in s)
    return found


def test_two_writers_lose_nothing(emu, tmp_path):
    path = str(tmp_path / "cache.json")
    run("na-sign-in", {**base(emu, path), "scopes": [emu["apis"]["ToDoList"][0]]})
    writer, prefix = writer_binary(tmp_path), f"api://{APP_ID}/P"
    n = int(os.environ.get("CACHE_WRITES", "500"))
    procs = [subprocess.Popen([writer, library(), writer_config(emu, path), prefix, str(first), str(n)],
                              env=env(), stdout=subprocess.PIPE, text=True) for first in (0, n)]
    outs = [p.communicate(timeout=300)[0] for p in procs]
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-2000:]
    assert at_scopes(path) == {f"{prefix}{i:04d}" for i in range(2 * n)}


def test_kill_9_never_loses_a_completed_write(emu, tmp_path):
    path = str(tmp_path / "cache.json")
    run("na-sign-in", {**base(emu, path), "scopes": [emu["apis"]["ToDoList"][0]]})
    writer, prefix = writer_binary(tmp_path), f"api://{APP_ID}/P"
    config = writer_config(emu, path)
    completed: set = set()
    rng = random.Random(1234)
    # The kill window follows this machine's speed (a loaded machine starts a writer slower): one writer is first
    # run to its end, and the kills then land anywhere in up to one and a half times its run.
    started = time.monotonic()
    subprocess.run([writer, library(), config, prefix, str(PERMISSIONS - 3), "3"], env=env(), check=True,
                   capture_output=True)
    window = 1.5 * (time.monotonic() - started)
    kills, first = 0, 0
    while kills < int(os.environ.get("CACHE_KILLS", "200")):
        p = subprocess.Popen([writer, library(), config, prefix, str(first), "3"], env=env(),
                             stdout=subprocess.PIPE, text=True)
        # Kill it at a random moment: before, during or after a write.
        time.sleep(rng.uniform(0.0, window))
        p.send_signal(signal.SIGKILL)
        out, _ = p.communicate()
        kills += 1
        completed.update(f"{prefix}{int(line.split()[1]):04d}" for line in out.splitlines() if line.startswith("done"))
        assert not [line for line in out.splitlines() if line.startswith("error")], out
        assert completed <= at_scopes(path), f"after {kills} kills"
        first = (first + 3) % (PERMISSIONS - 3)
    assert len(completed) > 0
    # The stale temporary files of killed writers are removed by the next write.
    subprocess.run([writer, library(), config, prefix, str(PERMISSIONS - 2), "1"], env=env(), check=True,
                   capture_output=True)
    assert [n for n in os.listdir(tmp_path) if ".tmp-" in n] == []


def failure(emu, path: str, **kw) -> dict:
    return run("na-failure", {**base(emu, path), "scopes": [emu["apis"]["ToDoList"][0]]}, **kw)


def test_a_corrupt_file_is_kept_aside_and_the_sign_in_works(emu, tmp_path):
    path = tmp_path / "cache.json"
    path.write_text('{"AccessToken": {"truncated')
    path.chmod(0o600)
    out = failure(emu, str(path))
    assert out["sign_in"] == "ok" and out["from_cache"] and out["problem"] is None
    assert [n for n in os.listdir(tmp_path) if n.startswith("cache.json.corrupt-")]
    doc = json.loads(path.read_text())  # signed out again: the new file holds no one's tokens
    assert all(not doc.get(k) for k in ("AccessToken", "RefreshToken", "IdToken", "Account")), doc


def test_a_directory_in_the_files_place(emu, tmp_path):
    (tmp_path / "cache.json").mkdir()
    out = failure(emu, str(tmp_path / "cache.json"))
    assert out["sign_in"] == "cache_unreadable" and out["status"] == -10
    assert out["from_cache"] and out["problem"] == "cache_unreadable"
    assert out["sign_out"] == "cache_unreadable" and not out["signed_in_after_sign_out"]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file another user owns")
def test_a_file_owned_by_someone_else_is_refused(emu, tmp_path):
    path = tmp_path / "cache.json"
    path.write_text("{}")
    path.chmod(0o644)
    os.chown(path, 65534, 65534)
    assert failure(emu, str(path)) == {"client_error": "cache_insecure", "status": -10}
    # A file that becomes insecure while the client runs: the change is refused on disk and kept in memory.
    path.unlink()
    out = run("na-sign-in", {**base(emu, str(path)), "scopes": [emu["apis"]["ToDoList"][0]]})
    assert out["access_token"]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_an_unreadable_file(emu):
    # As another user (root reads everything): a private directory, a file it may not read, and the CA it needs.
    probe = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--", sys.executable, "-c",
             f"import ctypes; ctypes.CDLL({library()!r})"]
    if subprocess.run(probe, capture_output=True).returncode != 0:
        pytest.skip("another user cannot run this Python or load the library here")
    home = pathlib.Path(tempfile.mkdtemp(prefix="nativeauth-unreadable-"))
    try:
        shutil.copy(emu["ready"]["ca_file"], home / "ca.pem")
        (home / "cache.json").write_text("{}")
        (home / "cache.json").chmod(0o000)
        for p in (home, home / "ca.pem", home / "cache.json"):
            os.chown(p, 65534, 65534)
        home.chmod(0o700)
        args = {**base(emu, str(home / "cache.json")), "ca": str(home / "ca.pem"),
                "scopes": [emu["apis"]["ToDoList"][0]]}
        out = run("na-failure", args, user="65534")
        assert out["sign_in"] == "cache_unreadable" and out["from_cache"], out
        assert (home / "cache.json").stat().st_size == 2  # never replaced
    finally:
        shutil.rmtree(home)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to mount a small tmpfs")
def test_a_full_disk(emu, tmp_path):
    small = tmp_path / "small"
    small.mkdir(mode=0o700)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k,mode=0700", "tmpfs", str(small)]).returncode != 0:
        pytest.skip("no tmpfs here (the Swift tests simulate a failed write instead)")
    try:
        # Fill it, so that the cache file cannot be written.
        (small / "filler").write_bytes(b"x" * 4096)
        out = failure(emu, str(small / "cache.json"))
        assert out["sign_in"] == "cache_write_failed" and out["status"] == -10, out
        assert out["from_cache"] and out["problem"] == "cache_write_failed"
        assert [n for n in os.listdir(small) if ".tmp-" in n] == []
    finally:
        subprocess.run(["umount", str(small)])
