"""The native command's credential helpers, driven by the real clients: git (`nativeauth git-credential`) cloning and
pushing over smart HTTP, kubectl running `nativeauth kubectl-credential` as its exec credential plugin, and Docker's
credential-helper protocol spoken to `docker-credential-nativeauth` (the same executable under that name) as docker
speaks it (there is no docker client here).

The servers are this file's own (`ProtectedServer`, on an ephemeral port, HTTPS with a certificate made here): they
accept a request only with an access token whose RS256 signature verifies against the emulator's JWKS (found through
its OpenID Connect discovery document), whose issuer is the emulator's, whose audience is the API's application id
(the scope's resource) and that has not expired; anything else is answered 401 with `WWW-Authenticate: Basic`. Every
test counts what the server accepted and refused, so a helper that answered nothing, or a server that accepted
anything, fails.

Needs git, kubectl and the `cryptography` package (installed with msal): .ci/deps.sh installs them."""
from __future__ import annotations

import base64
import datetime
import json
import subprocess
import time

import pytest

from cli_support import cli, pexpect  # noqa: F401 (cli: the fixture `setup` uses)
from helper_support import (DEADLINE, REALM, Setup, _claims, answer_of, audience_of, configure_git, docker,
                            git_credential, http_get, kubeconfig, kubectl_minor, make_repository, run,
                            setup, tool, write_profile)  # noqa: F401 (setup: the fixture)


@pytest.mark.parametrize("scheme", ["https", "http"])
def test_git_clones_and_pushes_with_the_token_from_the_helper(setup: Setup, scheme: str) -> None:
    """git (with `credential.<url>.helper = !nativeauth git-credential --scope …`) clones and pushes over smart HTTP;
    the server accepts only the helper's token. Over http:// too: git asks credential helpers for plain HTTP."""
    s, git = setup, tool("git")
    bare = make_repository(s)
    server = s.server(tls=scheme == "https")
    configure_git(s, server)
    url = f"{server.origin}/git/project.git"
    env = s.env()

    r, _ = run([git, "clone", "-q", url, str(s.cli.tmp / "nobody")], env)  # nobody signed in: no credential
    assert r.returncode != 0 and "terminal prompts disabled" in r.stderr, r.stderr
    assert "nativeauth: no_account: " in r.stderr and "nativeauth login" in r.stderr  # the helper's word to the user
    assert server.accepted_tokens() == [] and server.seen.refused == ["no credentials"]

    s.login()
    cached = s.token()
    token_requests = len(s.requests_to_token_endpoint())
    work = s.cli.tmp / "work"
    clone, took = run([git, "clone", "-q", url, str(work)], env)
    assert clone.returncode == 0, clone.stderr
    assert took < 2 * DEADLINE
    assert (work / ".git").is_dir()
    accepted = list(server.seen.accepted)
    assert accepted and {a[3] for a in accepted} == {cached}  # the helper's token, from the file cache
    assert {a[2] for a in accepted} == {s.user}  # the account as git's username
    assert any("git-upload-pack" in a[1] for a in accepted)
    assert len(s.requests_to_token_endpoint()) == token_requests  # no request for a token: the cache had it

    (work / "README").write_text("pushed through the credential helper\n")
    for args in (["add", "README"], ["commit", "-q", "-m", "second"]):
        r, _ = run([git, "-C", str(work), *args], env)
        assert r.returncode == 0, r.stderr
    push, took = run([git, "-C", str(work), "push", "-q", "origin", "main"], env)
    assert push.returncode == 0, push.stderr
    assert took < 2 * DEADLINE
    assert any(a[0] == "POST" and a[1].endswith("/git-receive-pack") for a in server.seen.accepted)
    head, _ = run([git, "-C", str(work), "rev-parse", "HEAD"], env)
    remote, _ = run([git, "--git-dir", str(bare), "rev-parse", "main"], env)
    assert remote.stdout == head.stdout and head.stdout.strip()  # the push reached the server's repository

    for output in (clone.stdout, clone.stderr, push.stdout, push.stderr):
        assert cached not in output  # git shows nothing of the token, nor does the helper on its stderr


def test_the_helpers_answer_to_git(setup: Setup) -> None:
    """`get` answers username (the account), password (the access token) and password_expiry_utc (its exp);
    `store` keeps nothing; nothing is on stderr."""
    s = setup
    s.login()
    answer = answer_of(git_credential(s, "get"))
    assert answer["username"] == s.user
    token = answer["password"]
    assert s.checker.refusal(token, audience_of(s.scope)) is None
    assert int(answer["password_expiry_utc"]) == _claims(token)["exp"] > time.time()
    assert set(answer) == {"username", "password", "password_expiry_utc"}
    stored = git_credential(s, "store", f"username={s.user}\npassword=typed-by-someone\n")
    assert stored.returncode == 0 and stored.stdout == ""
    assert answer_of(git_credential(s, "get"))["password"] == token
    assert all(token not in e for e in s.cli.outputs[1::2])  # never on stderr


def test_git_erase_forgets_only_the_rejected_token(setup: Setup) -> None:
    """The server refuses a valid token once (as after a revocation): git fails and calls `erase` with it; the helper
    refreshes (forced), so the next `get` answers another token, git works again, and the user is still signed in.
    `erase` with a password that is not the cached token changes nothing."""
    s, git = setup, tool("git")
    make_repository(s)
    server = s.server()
    configure_git(s, server)
    s.login()
    first = s.token()
    refreshes = s.refreshes()

    server.reject_valid = 1
    url = f"{server.origin}/git/project.git"
    r, _ = run([git, "clone", "-q", url, str(s.cli.tmp / "refused")], s.env())
    assert r.returncode != 0 and "Authentication failed" in r.stderr, r.stderr
    assert server.seen.rejected_valid == [first] and server.accepted_tokens() == []
    assert s.refreshes() == refreshes + 1  # erase asked for a new token

    second = answer_of(git_credential(s, "get"))["password"]
    assert second != first and s.checker.refusal(second, audience_of(s.scope)) is None
    assert s.cli.run("accounts").stdout.split()[0] == s.user  # still signed in
    r, _ = run([git, "clone", "-q", url, str(s.cli.tmp / "work")], s.env())
    assert r.returncode == 0, r.stderr
    assert set(server.accepted_tokens()) == {second}

    # Another password (not the token the helper gave): nothing is refreshed or forgotten.
    assert git_credential(s, "erase", f"username={s.user}\npassword={first}\n").returncode == 0
    assert git_credential(s, "erase", f"username={s.user}\n").returncode == 0
    assert s.refreshes() == refreshes + 1
    assert answer_of(git_credential(s, "get"))["password"] == second
    # The token it gave: a forced refresh, and the sign-in stays.
    assert git_credential(s, "erase", f"username={s.user}\npassword={second}\n").returncode == 0
    assert s.refreshes() == refreshes + 2
    third = answer_of(git_credential(s, "get"))["password"]
    assert third not in (first, second)
    assert s.cli.run("accounts").stdout.split()[0] == s.user


# -- kubectl -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("api_version", ["v1beta1", "v1"])
def test_kubectl_runs_the_exec_plugin(setup: Setup, api_version: str) -> None:
    """kubectl runs the helper (KUBERNETES_EXEC_INFO names the apiVersion it expects; it refuses another) and sends
    its token; with nobody signed in, kubectl fails at once showing the helper's error."""
    s, kubectl = setup, tool("kubectl")
    if api_version == "v1" and kubectl_minor() < 22:
        pytest.skip("this kubectl predates client.authentication.k8s.io/v1 (Kubernetes 1.22)")
    server = s.server()
    config = kubeconfig(s, server, api_version)
    env = s.env(KUBECONFIG=str(config))
    get = [kubectl, "get", "--raw", "/api/v1/namespaces/default"]

    # Nobody signed in: kubectl's stdin stays open and is never a terminal; the helper must not wait for it.
    start = time.monotonic()
    proc = subprocess.Popen(get, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    try:
        out, err = proc.communicate(timeout=2 * DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode != 0 and out == ""
    assert time.monotonic() - start < DEADLINE
    helper_lines = {line for line in err.splitlines() if line.startswith("nativeauth: ")}  # (kubectl may retry)
    assert len(helper_lines) == 1 and "nativeauth login" in helper_lines.pop(), err
    alone, took = run(["nativeauth", "kubectl-credential", "--scope", s.scope], env)
    assert alone.returncode == 3 and alone.stdout == "" and took < DEADLINE
    assert alone.stderr.count("\n") == 1 and alone.stderr.startswith("nativeauth: no_account: ")  # said once
    assert server.accepted_tokens() == []

    s.login()
    cached = s.token()
    token_requests = len(s.requests_to_token_endpoint())
    r, took = run(get, env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["metadata"]["annotations"]["seen-by"] == "nativeauth-test"
    assert "/api/v1/namespaces/default" in [a[1] for a in server.seen.accepted]  # (newer kubectls: /version first)
    assert set(server.accepted_tokens()) == {cached} and {a[2] for a in server.seen.accepted} == {""}  # Bearer
    assert len(s.requests_to_token_endpoint()) == token_requests  # from the file cache
    version, _ = run([kubectl, "version", "-o", "json"], env)
    assert version.returncode == 0, version.stderr
    assert json.loads(version.stdout)["serverVersion"]["gitVersion"] == "v1.32.0"
    assert server.seen.accepted[-1][1] == "/version" and set(server.accepted_tokens()) == {cached}
    assert cached not in r.stdout + r.stderr + version.stdout + version.stderr


@pytest.mark.parametrize("api_version", ["v1beta1", "v1"])
def test_the_helpers_exec_credential(setup: Setup, api_version: str) -> None:
    """The ExecCredential: the apiVersion KUBERNETES_EXEC_INFO asks for, status.token and status.expirationTimestamp
    (the token's exp, RFC 3339 UTC); nothing on stderr."""
    s = setup
    s.login()
    info = {"kind": "ExecCredential", "apiVersion": f"client.authentication.k8s.io/{api_version}",
            "spec": {"interactive": False}}
    r, took = run(["nativeauth", "kubectl-credential", "--scope", s.scope],
                  s.env(KUBERNETES_EXEC_INFO=json.dumps(info)))
    assert r.returncode == 0 and r.stderr == "" and took < DEADLINE, r.stderr
    doc = json.loads(r.stdout)
    assert doc["apiVersion"] == info["apiVersion"] and doc["kind"] == "ExecCredential"
    token = doc["status"]["token"]
    assert s.checker.refusal(token, audience_of(s.scope)) is None
    expires = datetime.datetime.strptime(doc["status"]["expirationTimestamp"], "%Y-%m-%dT%H:%M:%SZ")
    assert expires.replace(tzinfo=datetime.timezone.utc).timestamp() == _claims(token)["exp"]


def test_kubectl_helper_in_a_terminal_never_prompts(setup: Setup) -> None:
    """Even with a terminal (kubectl's interactive mode), nobody signed in is an error, not a sign-in prompt."""
    s = setup
    child = pexpect.spawn(str(s.bin / "nativeauth"), ["kubectl-credential", "--scope", s.scope], env=s.env(),
                          encoding="utf-8", timeout=DEADLINE)
    index = child.expect(["Username", "Password", pexpect.EOF])
    child.close()
    assert index == 2, child.before
    assert child.exitstatus == 3 and "nativeauth: no_account: " in (child.before or "")


# -- docker --------------------------------------------------------------------------------------------------------


def test_docker_credential_helper_protocol(setup: Setup) -> None:
    """get/list/store/erase as docker calls them; the registry's scopes from the profile (or --scope); an unknown
    registry, or nobody signed in, is docker's "credentials not found" (stdout, non-zero exit)."""
    s = setup
    notes = s.emulator.apis["Notes"]["scopes"][0]
    # The profile's own scopes (for `nativeauth token`) are not any registry's: docker.io gets no token.
    write_profile(s, f"""[profiles.default]
scopes = ["{notes}"]
registries = {{ "registry.example:5000" = ["{s.scope}"], "Notes.Example" = ["{notes}"] }}
""")
    not_found = "credentials not found in native keychain\n"
    r = docker(s, "get", "registry.example:5000\n")
    assert r.returncode != 0 and r.stdout == not_found  # nobody signed in

    s.login()
    s.login(notes)
    todo_server, notes_server = s.server(), s.server(audience=audience_of(notes))
    secrets = []
    for url, server in (("https://registry.example:5000/v2/", todo_server), ("registry.example:5000", todo_server),
                        ("https://notes.example", notes_server)):
        r = docker(s, "get", url + "\n")
        assert r.returncode == 0 and r.stderr == "", r.stderr
        answer = json.loads(r.stdout)
        assert answer["ServerURL"] == url and answer["Username"] == s.user
        secrets.append(answer["Secret"])
        status, _ = http_get(server, answer["Secret"])
        assert status == 200  # the secret is a token the registry's API accepts
    assert len(todo_server.accepted_tokens()) == 2 and len(notes_server.accepted_tokens()) == 1

    for url in ("https://index.docker.io/v1/", "registry.example", "registry.example:5001", "", "\n"):
        r = docker(s, "get", url + "\n")
        assert r.returncode != 0 and r.stdout == not_found, (url, r.stdout)
    # --scope (for a wrapper script) names the scopes of the registries named (--registry, or the profile's); never
    # another registry's, nor do NATIVEAUTH_SCOPES, set for everyday `nativeauth token` use: docker with credsStore
    # asks about every registry.
    r = docker(s, "get", "any.example\n", "--scope", s.scope)
    assert r.returncode != 0 and r.stdout == not_found
    r = docker(s, "get", "any.example\n", "--registry", "any.example", "--scope", s.scope)
    assert r.returncode == 0 and http_get(todo_server, json.loads(r.stdout)["Secret"])[0] == 200
    r, _ = run(["docker-credential-nativeauth", "get"], s.env(NATIVEAUTH_SCOPES=s.scope), input="any.example\n")
    assert r.returncode != 0 and r.stdout == not_found

    r = docker(s, "list", "")
    assert r.returncode == 0 and json.loads(r.stdout) == {"registry.example:5000": s.user, "Notes.Example": s.user}
    stored = json.dumps({"ServerURL": "registry.example:5000", "Username": "someone", "Secret": "typed"})
    assert docker(s, "store", stored + "\n").returncode == 0
    assert docker(s, "erase", "registry.example:5000\n").returncode == 0
    r = docker(s, "get", "registry.example:5000\n")  # nothing was stored, nothing forgotten
    assert r.returncode == 0 and json.loads(r.stdout)["Username"] == s.user
    assert s.cli.run("accounts").stdout.split()[0] == s.user
    assert len(set(secrets)) == 2  # one token for each API
    assert all(t not in e for t in secrets for e in s.cli.outputs[1::2])  # never on stderr


# -- every helper ----------------------------------------------------------------------------------------------------


def helper_token(s: Setup, helper: str) -> str:
    """One token from `helper` (git, kubectl or docker) in a fresh process, and nothing on its stderr."""
    if helper == "git":
        r = git_credential(s, "get")
        token = answer_of(r)["password"]
    elif helper == "kubectl":
        r, took = run(["nativeauth", "kubectl-credential", "--scope", s.scope], s.env())
        assert r.returncode == 0 and took < DEADLINE, r.stderr
        token = json.loads(r.stdout)["status"]["token"]
    else:
        r = docker(s, "get", "https://registry.example/v2/\n")
        assert r.returncode == 0, r.stdout + r.stderr
        token = json.loads(r.stdout)["Secret"]
    assert r.stderr == "" and token not in r.stderr
    return token


@pytest.mark.parametrize("helper", ["git", "kubectl", "docker"])
def test_each_helper_uses_the_file_cache_and_refreshes_when_due(setup: Setup, helper: str) -> None:
    """A fresh process answers the cached token without asking the server; a token due for renewal (the tenant now
    issues 2-minute tokens, inside the 5-minute expiry margin) is refreshed by the helper itself, every time."""
    s = setup
    write_profile(s, f'[profiles.default]\nregistries = {{ "registry.example" = ["{s.scope}"] }}\n')
    s.login()
    cached = s.token()
    server = s.server()
    refreshes = s.refreshes()
    assert helper_token(s, helper) == cached and s.refreshes() == refreshes

    s.emulator.control("POST", "settings", {"access_token_lifetime": 120})
    due = s.token("--force-refresh")
    assert _claims(due)["exp"] - time.time() <= 120
    refreshes = s.refreshes()
    tokens = [helper_token(s, helper) for _ in range(2)]
    assert s.refreshes() == refreshes + 2
    assert len({due, *tokens}) == 3
    for token in tokens:
        assert http_get(server, token)[0] == 200
    assert len(server.accepted_tokens()) == 2


@pytest.mark.parametrize("helper", ["git", "kubectl", "docker"])
def test_a_sign_in_to_renew_is_no_credential_and_no_prompt(setup: Setup, helper: str) -> None:
    """The sign-in was revoked (the refresh token is refused): each helper answers its client's "no credential"
    promptly, with stdin a pipe that stays open, and the user is told to sign in again."""
    s = setup
    write_profile(s, f'[profiles.default]\nregistries = {{ "registry.example" = ["{s.scope}"] }}\n')
    s.emulator.control("POST", "settings", {"access_token_lifetime": 120})  # the cached token is always due
    s.login()
    s.emulator.control("POST", "users/revoke", {"email": s.user})
    args = {"git": ["nativeauth", "git-credential", "--host", "127.0.0.1", "--scope", s.scope, "get"],
            "kubectl": ["nativeauth", "kubectl-credential", "--scope", s.scope],
            "docker": ["docker-credential-nativeauth", "get"]}[helper]
    request = {"git": "protocol=https\nhost=127.0.0.1\n\n", "kubectl": "", "docker": "registry.example\n"}[helper]
    start = time.monotonic()
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=s.env())
    try:
        assert proc.stdin is not None
        proc.stdin.write(request)
        proc.stdin.flush()  # and left open
        out, err = proc.communicate(timeout=DEADLINE)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert time.monotonic() - start < DEADLINE
    if helper == "git":
        assert proc.returncode == 0 and out == ""  # no credential: git asks elsewhere or fails
    elif helper == "kubectl":
        assert proc.returncode == 3 and out == ""
    else:
        assert proc.returncode != 0 and out == "credentials not found in native keychain\n"
    assert "nativeauth login" in err and "Password" not in err and "Username" not in err, err
    assert s.cli.run("accounts").stdout.split()[0] == s.user  # the helper forgot nobody


# -- the server is no pushover ---------------------------------------------------------------------------------------


def test_the_server_refuses_what_is_not_a_valid_token(setup: Setup) -> None:
    """Negative controls of the checks the tests above rely on: no credentials, garbage, a tampered signature,
    another API's token, an expired token (the server's clock moved) are all answered 401 with a Basic challenge."""
    s = setup
    s.login()
    notes = s.emulator.apis["Notes"]["scopes"][0]
    good = s.token()
    other = s.cli.run("token", "-s", notes).stdout.strip()
    assert other.count(".") == 2
    head, payload, signature = good.split(".")
    flipped = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]
    claims = _claims(good)
    claims["aud"] = audience_of(notes)
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    server = s.server()
    for basic in (False, True):
        assert http_get(server, good, basic)[0] == 200
    cases = {"": "no credentials", "not-a-token": "not a JWT", f"{head}.{payload}.{flipped}": "bad signature",
             f"{head}.{forged_payload}.{signature}": "bad signature", other: "wrong audience"}
    for token, reason in cases.items():
        status, headers = http_get(server, token, basic=True)
        assert status == 401 and headers.get("WWW-Authenticate") == f'Basic realm="{REALM}"'
        assert server.seen.refused[-1] == reason
    s.checker.skew = 3600 + 60
    assert http_get(server, good)[0] == 401 and server.seen.refused[-1] == "expired"
    assert server.accepted_tokens() == [good, good]
