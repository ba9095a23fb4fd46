"""`make install` gives a working command with no Python involved (issue 21): bin/nativeauth starts the installed
bin/nativeauth-emulator, signs in, hands out tokens, and bin/docker-credential-nativeauth (a symbolic link to it)
speaks Docker's protocol. Run by test-examples with NATIVEAUTH_PREFIX naming the temporary install."""
from __future__ import annotations

import json
import os
import pathlib
import re
import signal
import subprocess
from typing import Dict, Iterator

import pytest

PREFIX = os.environ.get("NATIVEAUTH_PREFIX")
pytestmark = pytest.mark.skipif(not PREFIX, reason="NATIVEAUTH_PREFIX (set by make test-examples) names the install")


@pytest.fixture
def env(tmp_path: pathlib.Path) -> Iterator[Dict[str, str]]:
    """The installed bin/ and the system's, nothing of Python or of this checkout; the emulator the command started."""
    assert PREFIX is not None
    e = {"PATH": f"{PREFIX}/bin:/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"),
         "XDG_CONFIG_HOME": str(tmp_path / "config"), "NATIVEAUTH_PLAINTEXT_CACHE": "1", "LANG": "C.UTF-8"}
    r = subprocess.run(["nativeauth", "emulator", "--print-env"], env=e, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    for name, value in re.findall(r"^export (\w+)=(\S+)$", r.stdout, re.M):
        e[name] = value.strip("'\"")
    assert "NATIVEAUTH_AUTHORITY" in e and "NATIVEAUTH_EMULATOR_PID" in e, r.stdout
    try:
        yield e
    finally:
        os.kill(int(e["NATIVEAUTH_EMULATOR_PID"]), signal.SIGTERM)


def test_the_installed_command_needs_no_python(env: Dict[str, str]) -> None:
    assert PREFIX is not None
    command = pathlib.Path(PREFIX) / "bin" / "nativeauth"
    assert command.read_bytes()[:4] == b"\x7fELF"
    libraries = subprocess.run(["ldd", str(command)], capture_output=True, text=True, check=True).stdout
    assert "python" not in libraries and "libswift" not in libraries, libraries  # the Swift runtime is linked in
    docker = pathlib.Path(PREFIX) / "bin" / "docker-credential-nativeauth"
    assert docker.is_symlink() and os.readlink(docker) == "nativeauth"
    version = subprocess.run(["nativeauth", "--version"], env=env, capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and version.stdout.startswith("nativeauth ")


def test_sign_in_token_and_docker_helper_from_the_install(env: Dict[str, str]) -> None:
    scope = "api://11112222-bbbb-3333-cccc-4444dddd5555/ToDoList.Read"
    login = subprocess.run(["nativeauth", "login", "-u", "ann@contoso.com", "--password-stdin", "-s", scope],
                           input="Demo-Passw0rd!\n", env=env, capture_output=True, text=True, timeout=60)
    assert login.returncode == 0, login.stderr
    token = subprocess.run(["nativeauth", "token", "-s", scope], env=env, capture_output=True, text=True, timeout=30)
    assert token.returncode == 0 and token.stdout.count(".") == 2, token.stderr
    docker = subprocess.run(["docker-credential-nativeauth", "--scope", scope, "--registry", "registry.example", "get"],
                            input="registry.example\n", env=env, capture_output=True, text=True, timeout=30)
    assert docker.returncode == 0, docker.stdout + docker.stderr
    answer = json.loads(docker.stdout)
    assert answer == {"ServerURL": "registry.example", "Username": "ann@contoso.com",
                      "Secret": token.stdout.strip()}
