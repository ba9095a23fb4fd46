"""What the credential helpers write back to git, kubectl and docker when the identity provider is hostile.

git reads a helper's answer as key=value lines and takes any key it knows from them (`host`, `protocol`, `path`,
`url`, `quit`, …), so a username or token holding a line break would let the server that issued it write its own
lines into git's credential: another `host` (which git then gives to its other helpers — `store`, `cache` — to keep
the token for), or `quit`. Swift counts "\r\n" as one Character, so a check for "\n" as a Character misses it. The
setup is helper_support.py's."""
from __future__ import annotations

import json
from typing import Dict

import pytest

from cli_support import cli  # noqa: F401 (the fixture `setup` uses)
from helper_support import Setup, run, setup, tool  # noqa: F401


def git_answer(s: Setup) -> "tuple[str, str]":
    """`nativeauth git-credential --host dev.contoso.com get` for https://dev.contoso.com: raw stdout and stderr."""
    r, _ = run(["nativeauth", "git-credential", "--host", "dev.contoso.com", "--scope", s.scope, "get"], s.env(),
               input="protocol=https\nhost=dev.contoso.com\n\n")
    assert r.returncode == 0, r.stderr
    s.cli.outputs += [r.stdout, r.stderr]
    return r.stdout, r.stderr


HOSTILE = ["ann\r\nhost=evil.example", "ann\nquit=1", "ann\rx", "ann\x00host=evil.example", "ann\x1b[2J"]


@pytest.mark.parametrize("username", HOSTILE, ids=["crlf", "lf", "cr", "nul", "esc"])
def test_git_helper_writes_no_line_of_the_providers(setup: Setup, username: str) -> None:
    """An ID token whose preferred_username holds a line break (CR LF too), a CR, a NUL or another control: the
    helper answers nothing (git goes on to its next helper or prompts), says so on stderr without the value, and
    never writes a line the provider chose. The same account with a plain username is answered."""
    s = setup
    s.emulator.control("POST", "token_answers", {"id_token_claims": {"preferred_username": username}})
    s.login()
    out, err = git_answer(s)
    assert out == "", repr(out)
    assert "git-credential" in err and err.count("\n") == 1, err
    assert "evil" not in err and "\x1b" not in err and "\x00" not in err
    assert s.token() not in err

    s.cli.run("logout", "--all")
    s.login()
    out, err = git_answer(s)
    assert err == "" and out.split("\n")[:2] == [f"username={s.user}", f"password={s.token()}"], repr(out)


def test_git_helper_gives_no_token_holding_a_line_break(setup: Setup) -> None:
    """An access token with CR LF inside (a hostile token endpoint): the library refuses it where it arrives (it
    would go out in an Authorization header), so the sign-in fails without repeating it and the helper has no
    answer; nothing of it on stdout."""
    s = setup
    s.emulator.control("POST", "token_answers", {"set": {"access_token": "eyJ.x\r\nhost=evil.example\r\npassword=y"}})
    ann = s.emulator.users["password"]
    r = s.cli.run("login", "-u", ann["email"], "--password-stdin", "-s", s.scope, input=ann["password"] + "\n")
    assert r.returncode != 0 and "control characters" in r.stderr and "evil" not in r.stderr + r.stdout, r.stderr
    out, err = git_answer(s)
    assert out == "" and "evil" not in err and err.count("\n") == 1, (out, err)


def test_git_itself_keeps_its_host(setup: Setup) -> None:
    """Through git (`git credential fill`): with a hostile username, git's credential keeps the host it asked about
    (git's own prompt is off, so it fails rather than take the helper's lines)."""
    s = setup
    s.emulator.control("POST", "token_answers", {"id_token_claims": {"preferred_username": "ann\r\nhost=evil.example"}})
    s.login()
    git = tool("git")
    helper = f"!nativeauth git-credential --host dev.contoso.com --scope {s.scope}"
    r, _ = run([git, "-c", f"credential.helper={helper}", "credential", "fill"], s.env(),
               input="protocol=https\nhost=dev.contoso.com\n\n")
    s.cli.outputs += [r.stdout, r.stderr]
    answer: Dict[str, str] = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
    assert answer.get("host", "dev.contoso.com") == "dev.contoso.com", r.stdout
    assert "password" not in answer, r.stdout


def test_kubectl_and_docker_answers_are_json(setup: Setup) -> None:
    """The same hostile username, and a token with JSON's specials, reach kubectl and docker only inside JSON strings
    (escaped). (A token with control characters is refused where it arrives: test above.)"""
    s = setup
    s.emulator.control("POST", "token_answers", {"set": {"access_token": "t\\\"}\t{"},
                                                 "id_token_claims": {"preferred_username": "ann\r\n\"x"}})
    s.login()
    r, _ = run(["nativeauth", "kubectl-credential", "--scope", s.scope], s.env())
    assert r.returncode == 0 and r.stdout.count("\n") == 1, repr(r.stdout)
    assert json.loads(r.stdout)["status"]["token"] == "t\\\"}\t{"
    r, _ = run(["docker-credential-nativeauth", "--registry", "registry.example", "--scope", s.scope, "get"], s.env(),
               input="registry.example\n")
    assert r.returncode == 0 and r.stdout.count("\n") == 1, repr(r.stdout)
    assert json.loads(r.stdout)["Username"] == "ann\r\n\"x"
