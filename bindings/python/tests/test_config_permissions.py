"""The command's configuration file may name a command it runs (`browser_command`) and the servers it sends passwords
and tokens to, so it is refused, as ssh refuses ~/.ssh/config, when another user could have written it: writable by
group or others, or owned by someone other than the user or root (issue 28). The message says why and how to fix it.
"""
from __future__ import annotations

import os
import pathlib
import stat

import pytest

from cli_support import Cli, cli  # noqa: F401 (cli: the fixture)
from emulator_protocol import Emulator


def config_file(cli: Cli, text: str, mode: int) -> pathlib.Path:
    path = pathlib.Path(cli.env["XDG_CONFIG_HOME"]) / "nativeauth" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, mode)
    return path


def refused(cli: Cli, path: pathlib.Path, *args: str) -> str:
    r = cli.run(*(args or ("accounts",)))
    assert r.returncode == 2 and r.stdout == "", (oct(path.stat().st_mode), r.stdout, r.stderr)
    assert r.stderr.startswith("nativeauth: ") and r.stderr.count("\n") == 1 and str(path) in r.stderr, r.stderr
    return r.stderr


@pytest.mark.parametrize("mode", [0o664, 0o646, 0o666, 0o620, 0o602, 0o777], ids=oct)
def test_a_config_file_others_may_write_is_refused(cli: Cli, mode: int) -> None:
    path = config_file(cli, "[profiles.default]\nscopes = [\"x\"]\n", mode)
    err = refused(cli, path)
    assert "writable by" in err and f"chmod go-w {path}" in err
    for args in (("token",), ("status",), ("git-credential", "--host", "h", "get")):  # fast path and helpers too
        assert cli.run(*args, input="protocol=https\nhost=h\n\n").returncode == 2, args
    os.chmod(path, mode & ~0o022)
    assert cli.run("accounts").returncode == 0


@pytest.mark.parametrize("mode", [0o600, 0o644, 0o640, 0o400, 0o444], ids=oct)
def test_a_config_file_only_its_owner_may_write_is_read(cli: Cli, emulator: Emulator, mode: int) -> None:
    config_file(cli, f"[profiles.default]\nscopes = [\"{emulator.apis['ToDoList']['scopes'][0]}\"]\n", mode)
    r = cli.run("accounts")
    assert r.returncode == 0, r.stderr


def test_the_file_named_by_config_or_the_environment_is_checked_too(cli: Cli, tmp_path: pathlib.Path) -> None:
    path = tmp_path / "elsewhere.toml"
    path.write_text("[profiles.default]\n")
    os.chmod(path, 0o666)
    for args, env in ((("accounts", "--config", str(path)), {}), (("accounts",), {"NATIVEAUTH_CONFIG": str(path)})):
        r = cli.run(*args, env=env)
        assert r.returncode == 2 and str(path) in r.stderr and "chmod go-w" in r.stderr, r.stderr
    os.chmod(path, 0o644)
    assert cli.run("accounts", "--config", str(path)).returncode == 0


def test_a_config_file_of_another_user_is_refused(cli: Cli) -> None:
    if os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    path = config_file(cli, "[profiles.default]\n", 0o644)
    os.chown(path, 65534, 65534)
    err = refused(cli, path)
    assert "owned by" in err and "65534" in err and "chown" in err
    os.chown(path, 0, 0)  # root (also the user here) may own it
    assert cli.run("accounts").returncode == 0


def test_a_group_writable_browser_command_is_never_run(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> None:
    """The attack: someone in the file's group sets browser_command; the user's next `logout --browser` (or
    `login --browser`) would have run it."""
    marker = tmp_path / "ran"
    script = tmp_path / "browser.sh"
    script.write_text(f"#!/bin/sh\necho \"$1\" > {marker}\nexec curl -s \"$1\" > /dev/null\n")
    script.chmod(0o755)
    ann = emulator.users["password"]
    login = cli.run("login", "-u", ann["email"], "--password-stdin", input=ann["password"] + "\n")
    assert login.returncode == 0, login.stderr
    path = config_file(cli, f"[profiles.default]\nbrowser_command = \"{script}\"\n", 0o600)
    os.chmod(path, stat.S_IMODE(path.stat().st_mode) | stat.S_IWGRP)
    refused(cli, path, "logout", "--browser")
    assert not marker.exists()
    assert cli.run("accounts").returncode == 2  # still refused, still signed in once fixed:
    os.chmod(path, 0o600)
    assert cli.run("accounts").stdout.split()[0] == ann["email"]


@pytest.mark.parametrize("kind", ["fifo", "directory", "stdin"])
def test_a_config_path_that_is_no_regular_file_is_refused(cli: Cli, kind: str) -> None:
    """Whoever can put something at the path (a directory `--config` or NATIVEAUTH_CONFIG names that others may write
    to, a mistake) may put there a FIFO — opening it would block every git, kubectl or docker helper call for good —
    a symlink to /dev/stdin (which reads git's request as the configuration), or a directory (read as an empty
    file: the settings silently not applied). Each is refused at once, exit 2, saying so. (Was: the FIFO hung, the
    directory was an empty configuration.)"""
    path = pathlib.Path(cli.env["XDG_CONFIG_HOME"]) / "nativeauth" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path, 0o600)
    elif kind == "directory":
        path.mkdir(mode=0o700)
    else:
        path.symlink_to("/dev/stdin")
    for args in (("accounts",), ("git-credential", "--host", "h", "get"), ("token", "-s", "x")):
        r = cli.run(*args, input="protocol=https\nhost=h\n\n", timeout=30)
        assert r.returncode == 2 and r.stdout == "", (args, r.stdout, r.stderr)
        assert str(path) in r.stderr and "not a regular file" in r.stderr, r.stderr
