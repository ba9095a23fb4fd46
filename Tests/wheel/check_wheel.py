"""`make test-wheel`: the wheel `make wheel` built, installed into a fresh virtual environment on a machine where
libnativeauth is not installed, signs a user in against the emulator — loading the library from inside the package.
Then the shell's way, with the wheel's `nativeauth` command: `nativeauth login` in one process, and in another
`curl -H "Authorization: Bearer $(nativeauth token --scope …)"` against the emulator's API. Also checks the wheel's
platform tag (manylinux_2_<N>, N ≤ 36) against `auditwheel show`.

Usage: python check_wheel.py WHEEL EMULATOR   (run by the Makefile)"""
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time
import venv

SIGN_IN = r'''
import json, os, sys
import nativeauth
from nativeauth import _native
ready = json.loads(sys.argv[1])
lib = _native.lib._name
assert "site-packages" in lib and lib.endswith("libnativeauth.so"), lib
user = next(u for u in ready["users"] if u["kind"] == "password")
api = ready["apis"][0]
with nativeauth.Client(ready["authority"], ready["client_id"]) as c:
    state = c.sign_in(user["email"], user["password"], scopes=[api["scopes"][0]])
    assert isinstance(state, nativeauth.SignedIn), state
    assert c.call_api(api["url"], [api["scopes"][0]]).ok
print("wheel ok:", lib)
'''


def shell_token(bin_dir: pathlib.Path, ready: dict, tmp: pathlib.Path, clean: dict) -> None:
    """`nativeauth login`, then `curl` with `$(nativeauth token …)`, each a new process sharing the token cache."""
    user = next(u for u in ready["users"] if u["kind"] == "password")
    api = ready["apis"][0]
    env = {**clean, "PATH": f"{bin_dir}{os.pathsep}{clean.get('PATH', '')}", "HOME": str(tmp),
           "XDG_CONFIG_HOME": str(tmp / "config"), "XDG_CACHE_HOME": str(tmp / "cache"),
           "NATIVEAUTH_AUTHORITY": ready["authority"], "NATIVEAUTH_CLIENT_ID": ready["client_id"],
           "SCOPE": api["scopes"][0], "URL": api["url"]}
    login = subprocess.run(["nativeauth", "login", "-u", user["email"], "--password-stdin", "--scope",
                            api["scopes"][0]], input=user["password"] + "\n", capture_output=True, text=True,
                           cwd=tmp, env=env)
    assert login.returncode == 0, login.stderr
    call = subprocess.run(["bash", "-c", 'curl -sS --fail -H "Authorization: Bearer $(nativeauth token --scope '
                           '"$SCOPE")" "$URL"'], capture_output=True, text=True, cwd=tmp, env=env)
    assert call.returncode == 0, call.stderr
    assert json.loads(call.stdout)["user"] == user["email"], call.stdout
    print("wheel's nativeauth command ok: login, then curl with $(nativeauth token)")


def main() -> None:
    wheel, emulator = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
    tag = re.search(r"-(py3-none-manylinux_2_(\d+)_x86_64)\.whl$", wheel.name)
    assert tag, f"{wheel.name} is not tagged py3-none-manylinux_2_<N>_x86_64"
    assert int(tag.group(2)) <= 36, f"{wheel.name}: glibc 2.{tag.group(2)} is newer than manylinux_2_36"
    platform = tag.group(1).split("-")[-1]
    with tempfile.TemporaryDirectory() as tmp:
        env_dir = pathlib.Path(tmp) / "venv"
        venv.create(env_dir, with_pip=True)
        py = str(env_dir / "bin" / "python")
        clean = {k: v for k, v in os.environ.items()
                 if k not in ("NATIVEAUTH_LIBRARY", "PYTHONPATH", "LD_LIBRARY_PATH")}
        subprocess.run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel), "auditwheel"],
                       check=True, env=clean)
        shown = subprocess.run([py, "-m", "auditwheel", "show", str(wheel)], capture_output=True, text=True,
                               env=clean)
        report = " ".join((shown.stdout + shown.stderr).split())
        print("auditwheel show:", report)
        consistent = re.search(r'consistent with the following platform tag: "([^"]+)"', report)
        assert consistent and consistent.group(1) == platform, f"the wheel says {platform}; auditwheel: {report}"
        ready_file = pathlib.Path(tmp) / "ready.json"
        proc = subprocess.Popen([emulator, "--quiet", "--port", "0", "--ready-file", str(ready_file)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while not ready_file.exists():
                assert proc.poll() is None and time.monotonic() < deadline, "the emulator did not start"
                time.sleep(0.02)
            ready = ready_file.read_text()
            # From an empty directory: nothing of the source tree is on the path.
            subprocess.run([py, "-c", SIGN_IN, ready], check=True, cwd=tmp, env=clean)
            shell_token(env_dir / "bin", json.loads(ready), pathlib.Path(tmp), clean)
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
