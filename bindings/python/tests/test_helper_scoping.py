"""Which servers the credential helpers hand the user's access token to (issue 28, defects 3 and 4).

git asks every credential helper it is configured with about every host it talks to — with an unscoped
`credential.helper` (common), a clone from any server that answers 401 (a submodule, a mirror, a URL in a README)
asks the helper. `nativeauth git-credential` answers only for the hosts the user named (`git_hosts` in the profile,
or `--host`), only over https (plain http for loopback hosts only), and otherwise answers nothing, so git goes on to
its next helper or its own prompt. The kubectl helper checks the cluster kubectl names in `KUBERNETES_EXEC_INFO`
(`provideClusterInfo: true`) against `kubectl_servers` / `--server`, and never answers for plain http to a host
that is not loopback. Docker's helper parses the registry's address strictly and compares host[:port] exactly.

The servers and the setup are helper_support.py's: a server that receives a token it accepts shows it in
`accepted_tokens()`, so a helper that handed the token out fails these tests."""
from __future__ import annotations

import json
import subprocess
from typing import Dict, List, Optional

import pytest

from cli_support import cli  # noqa: F401 (the fixture `setup` uses)
from helper_support import (Setup, answer_of, docker, http_get, kubeconfig, make_repository, run, setup,  # noqa: F401
                            tool, write_profile)

# -- git -------------------------------------------------------------------------------------------------------------


def git_get(s: Setup, request: str, *flags: str, operation: str = "get") -> "subprocess.CompletedProcess[str]":
    """`nativeauth git-credential FLAGS --scope … get` with git's request lines (then the blank line)."""
    r, _ = run(["nativeauth", "git-credential", *flags, "--scope", s.scope, operation], s.env(),
               input=request + "\n\n")
    s.cli.outputs += [r.stdout, r.stderr]
    return r


def git_global(s: Setup, *pairs: str) -> None:
    for key, value in zip(pairs[::2], pairs[1::2]):
        r, _ = run([tool("git"), "config", "--global", key, value], s.env())
        assert r.returncode == 0, r.stderr


def test_an_unscoped_git_helper_gives_no_token_to_a_host_nobody_named(setup: Setup) -> None:
    """The attack of issue 28: `credential.helper` for every URL (not `credential.<url>.helper`), and `git clone` of a
    repository on a server that merely answers 401. Nobody named a host: the helper answers nothing, says once on
    stderr how to name one, and the server gets no token. Named in the profile (`git_hosts`): that server works, and
    the other (another port of the same address, plain http) still gets nothing."""
    s, git = setup, tool("git")
    make_repository(s)
    good, evil = s.server(), s.server(tls=False)
    git_global(s, "credential.helper", f"!nativeauth git-credential --scope {s.scope}", "http.sslCAInfo", str(s.cert))
    s.login()
    env = s.env()

    r, _ = run([git, "clone", "-q", f"{evil.origin}/git/project.git", str(s.cli.tmp / "evil-1")], env)
    assert r.returncode != 0
    assert evil.accepted_tokens() == [] and set(evil.seen.refused) == {"no credentials"}
    said = [line for line in r.stderr.splitlines() if line.startswith("nativeauth: ")]
    assert len(said) == 1 and "git_hosts" in said[0] and "--host" in said[0], r.stderr
    assert s.token() not in r.stderr

    write_profile(s, f'[profiles.default]\ngit_hosts = ["127.0.0.1:{good.port}"]\n')
    r, _ = run([git, "clone", "-q", f"{good.origin}/git/project.git", str(s.cli.tmp / "work")], env)
    assert r.returncode == 0, r.stderr
    assert good.accepted_tokens() and set(good.accepted_tokens()) == {s.token()}
    r, _ = run([git, "clone", "-q", f"{evil.origin}/git/project.git", str(s.cli.tmp / "evil-2")], env)
    assert r.returncode != 0 and evil.accepted_tokens() == [] and set(evil.seen.refused) == {"no credentials"}
    assert "nativeauth: " not in r.stderr  # hosts are named: another host is silently someone else's business


# Named: dev.contoso.com (default port), git.contoso.com:8443, 127.0.0.1:4567 and localhost (plain http allowed).
HOSTS = ["--host", "dev.contoso.com", "--host", "GIT.contoso.com:8443", "--host", "127.0.0.1:4567",
         "--host", "localhost", "--host", "[::1]:4567"]
ANSWERED = [
    "protocol=https\nhost=dev.contoso.com",
    "protocol=https\nhost=DEV.Contoso.COM",
    "protocol=https\nhost=dev.contoso.com:443",  # https's default port: the same server
    "protocol=https\nhost=git.contoso.com:8443",
    "protocol=https\nhost=dev.contoso.com\npath=team/repo.git\nusername=ann\nwwwauth[]=Basic realm=x",
    "protocol=http\nhost=127.0.0.1:4567",
    "protocol=https\nhost=127.0.0.1:4567",
    "protocol=http\nhost=localhost",
    "protocol=http\nhost=localhost:80",
    "protocol=http\nhost=[::1]:4567",
]
REFUSED = [
    "protocol=http\nhost=dev.contoso.com",  # a bearer token in clear text
    "protocol=http\nhost=dev.contoso.com:443",
    "protocol=https\nhost=git.contoso.com",
    "protocol=https\nhost=git.contoso.com:443",
    "protocol=https\nhost=dev.contoso.com:8443",
    "protocol=https\nhost=dev.contoso.com:",
    "protocol=https\nhost=dev.contoso.com:443:443",
    "protocol=https\nhost=dev.contoso.com:99999",
    "protocol=https\nhost=evil.example",
    "protocol=https\nhost=dev.contoso.com.evil.example",
    "protocol=https\nhost=evil.dev.contoso.com",
    "protocol=https\nhost=dev.contoso.com@evil.example",
    "protocol=https\nhost=evil.example/dev.contoso.com",
    "protocol=https\nhost=dev.contoso.com/",
    "protocol=https\nhost= dev.contoso.com",
    "protocol=https\nhost=dev.contoso.com\x00.evil.example",
    "protocol=https\nhost=dev.contoso.com.",
    "protocol=ftp\nhost=dev.contoso.com",
    "protocol=ssh\nhost=dev.contoso.com",
    "protocol=\nhost=dev.contoso.com",
    "host=dev.contoso.com",
    "protocol=https",
    "protocol=https\nhost=",
    "protocol=http\nhost=127.0.0.1:4568",
    "protocol=http\nhost=127.0.0.1",
    "protocol=http\nhost=localhost.evil.example",
    "protocol=http\nhost=[::1]",
    "protocol=http\nhost=[::2]:4567",
]


def test_git_helper_answers_only_named_hosts_over_https(setup: Setup) -> None:
    """host[:port] exactly as named (the host's case aside; https's 443 is the port a name without one means), https
    only, plain http for loopback names only; anything else is no answer (exit 0, nothing on stdout)."""
    s = setup
    s.login()
    token = s.token()
    for request in ANSWERED:
        r = git_get(s, request, *HOSTS)
        assert r.returncode == 0 and answer_of(r)["password"] == token, (request, r.stdout, r.stderr)
        assert r.stderr == ""
    for request in REFUSED:
        r = git_get(s, request, *HOSTS)
        assert r.returncode == 0 and r.stdout == "", (request, r.stdout)
        assert token not in r.stderr
    # Plain http to a named host that is not loopback: the user is told why (git shows stderr).
    r = git_get(s, "protocol=http\nhost=dev.contoso.com", *HOSTS)
    assert "https" in r.stderr and r.stderr.count("\n") == 1, r.stderr


def test_git_hosts_from_the_profile_and_the_flag(setup: Setup) -> None:
    """`git_hosts` in the profile; `--host` replaces it; nothing named is no answer, said once on stderr with the
    asked host escaped; a malformed entry is a usage error naming it."""
    s = setup
    s.login()
    request = "protocol=https\nhost=dev.contoso.com"
    write_profile(s, '[profiles.default]\ngit_hosts = ["dev.contoso.com", "git.contoso.com:8443"]\n')
    assert answer_of(git_get(s, request))["username"] == s.user
    assert answer_of(git_get(s, "protocol=https\nhost=git.contoso.com:8443"))["username"] == s.user
    r = git_get(s, request, "--host", "git.contoso.com:8443")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    r = git_get(s, request, "--host", "git.contoso.com:8443", "--verbose")  # says why only when asked
    assert r.stdout == "" and "not answering for https://dev.contoso.com: not a host named" in r.stderr, r.stderr

    write_profile(s, '[profiles.default]\nscopes = ["x"]\n')
    r = git_get(s, "protocol=https\nhost=dev.contoso.com\x1b]0;pwned\x07")
    assert r.returncode == 0 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "git_hosts" in r.stderr and "--host" in r.stderr, r.stderr
    assert "\x1b" not in r.stderr and "\\x1b]0;pwned" in r.stderr

    write_profile(s, '[profiles.default]\ngit_hosts = ["https://dev.contoso.com"]\n')
    r = git_get(s, request)
    assert r.stdout == "" and r.returncode == 2 and "https://dev.contoso.com" in r.stderr, r.stderr
    write_profile(s, '[profiles.default]\ngit_hosts = "dev.contoso.com"\n')
    r = git_get(s, request)
    assert r.stdout == "" and r.returncode == 2 and "git_hosts" in r.stderr, r.stderr


def test_git_erase_from_another_host_changes_nothing(setup: Setup) -> None:
    """`erase` with the cached token, asked for a host nobody named, refreshes nothing (only the named hosts' refusals
    count)."""
    s = setup
    s.login()
    token = s.token()
    refreshes = s.refreshes()
    r = git_get(s, f"protocol=https\nhost=evil.example\nusername={s.user}\npassword={token}", "--host",
                "dev.contoso.com", operation="erase")
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""
    assert s.refreshes() == refreshes and s.token() == token
    r = git_get(s, f"protocol=https\nhost=dev.contoso.com\nusername={s.user}\npassword={token}", "--host",
                "dev.contoso.com", operation="erase")
    assert r.returncode == 0 and s.refreshes() == refreshes + 1


# -- kubectl ---------------------------------------------------------------------------------------------------------


def exec_info(server: Optional[str], api_version: str = "v1") -> str:
    info: Dict[str, object] = {"kind": "ExecCredential", "apiVersion": f"client.authentication.k8s.io/{api_version}",
                               "spec": {"interactive": False}}
    if server is not None:
        info["spec"] = {"interactive": False, "cluster": {"server": server, "certificate-authority-data": "eA=="}}
    return json.dumps(info)


def kube(s: Setup, server: Optional[str], *flags: str) -> "subprocess.CompletedProcess[str]":
    env = s.env() if server is None else s.env(KUBERNETES_EXEC_INFO=exec_info(server))
    r, _ = run(["nativeauth", "kubectl-credential", "--scope", s.scope, *flags], env)
    s.cli.outputs += [r.stdout, r.stderr]
    return r


def test_kubectl_helper_checks_the_cluster_kubectl_names(setup: Setup) -> None:
    """With servers named (`--server`, `kubectl_servers`), the cluster in KUBERNETES_EXEC_INFO must be one of them
    (host[:port], https's 443 by default); without its cluster info (provideClusterInfo off) nothing can be checked
    and the helper refuses, saying how to turn it on. With none named it answers as before — but never for plain http
    to a host that is not loopback."""
    s = setup
    s.login()
    token = s.token()

    def answered(r: "subprocess.CompletedProcess[str]") -> bool:
        return r.returncode == 0 and json.loads(r.stdout)["status"]["token"] == token

    def refused(r: "subprocess.CompletedProcess[str]") -> bool:
        return r.returncode == 2 and r.stdout == "" and r.stderr.startswith("nativeauth: ") and token not in r.stderr

    assert answered(kube(s, "https://k8s.example:6443"))  # nothing named: the kubeconfig's user entry decides
    assert answered(kube(s, None))
    assert answered(kube(s, "http://127.0.0.1:8080"))
    for url in ("http://k8s.example:8080", "http://k8s.example", "HTTP://k8s.example:6443/"):
        r = kube(s, url)
        assert refused(r) and "https" in r.stderr, (url, r.stderr)

    flags = ["--server", "k8s.example:6443", "--server", "Rancher.example"]
    for url in ("https://k8s.example:6443", "https://K8S.example:6443/", "https://rancher.example/k8s/clusters/c-1",
                "https://rancher.example:443"):
        assert answered(kube(s, url, *flags)), url
    for url in ("https://evil.example:6443", "https://k8s.example", "https://k8s.example:6444",
                "https://k8s.example:6443@evil.example", "https://evil.example/https://k8s.example:6443",
                "https://evil.example#https://k8s.example:6443", "https://user@k8s.example:6443",
                "http://k8s.example:6443", "https://rancher.example:8443", "k8s.example:6443", "", "https://",
                "https://k8s.example:6443?x=1", "https://k8s.example.:6443", "https://k8s.example:6443 "):
        assert refused(kube(s, url, *flags)), url
    r = kube(s, None, *flags)
    assert refused(r) and "provideClusterInfo" in r.stderr, r.stderr

    write_profile(s, '[profiles.default]\nkubectl_servers = ["k8s.example:6443"]\n')
    assert answered(kube(s, "https://k8s.example:6443"))
    assert refused(kube(s, "https://evil.example:6443"))
    assert answered(kube(s, "https://evil.example:6443", "--server", "evil.example:6443"))  # the flag replaces it


def test_kubectl_sends_no_token_to_another_cluster(setup: Setup) -> None:
    """Real kubectl with provideClusterInfo: the named cluster works; the same user entry used for another cluster
    (another port) makes kubectl fail with the helper's word, and that server receives nothing. (kubectl itself runs
    no exec plugin for a plain-http cluster — the helper's own refusal of one is for the protocol's other clients,
    tested above.)"""
    s, kubectl = setup, tool("kubectl")
    s.login()
    good, other = s.server(), s.server()
    named = ["--server", f"127.0.0.1:{good.port}"]
    get = [kubectl, "get", "--raw", "/api/v1/namespaces/default"]
    config = kubeconfig(s, good, "v1", *named, cluster_info=True, name="good")
    r, _ = run(get, s.env(KUBECONFIG=str(config)))
    assert r.returncode == 0, r.stderr
    assert good.accepted_tokens() and set(good.accepted_tokens()) == {s.token()}

    config = kubeconfig(s, other, "v1", *named, cluster_info=True, name="other")
    r, _ = run(get, s.env(KUBECONFIG=str(config)))
    assert r.returncode != 0 and "is not one of the servers" in r.stderr, r.stderr
    assert other.accepted_tokens() == [] and other.seen.refused == []  # not even asked: kubectl had no credential
    assert s.token() not in r.stdout + r.stderr


# -- docker ----------------------------------------------------------------------------------------------------------

NOT_FOUND = "credentials not found in native keychain\n"
HOSTILE_REGISTRIES: List[str] = [
    "evil.example/https://registry.example/", "evil.example#://registry.example", "evil.example?://registry.example",
    "https://evil.example/https://registry.example", "https://evil.example#://registry.example",
    "https://evil.example?://registry.example", "https://registry.example@evil.example/",
    "https://evil.example@registry.example/", "https://user:pw@registry.example", "registry.example@evil.example",
    "evil.example@registry.example", "https://registry.example?x=1", "https://registry.example/v2/?x=1",
    "https://registry.example#x", "https://registry.example/v2#x", "registry.example/v2/", "registry.example/",
    " registry.example", "registry.example ", "https://registry.example /v2/", "https://registry.example\t",
    "https://registry.example/v2/ x", "https://registry.example\\evil.example", "https://registry.example\\@evil.example",
    "ftp://registry.example", "https:registry.example", "https:/registry.example", "https:///registry.example",
    "//registry.example", "://registry.example", "https://", "registry.example:", "registry.example:abc",
    "registry.example:99999", "registry.example:0", "registry.example:5000:5000", "registry.example:+5000",
    "registry.example%2e", "registry%2eexample", "registry.ex\u0430mple", "registry.example\x00",
    "registry.example\x1b", "https://[::1", "https://registry.example:5000evil", "https://registry.example.:5000",
    "https://registry.example:443", "evil.example", "example", "registry.example.evil.example",
    "evil-registry.example", "https://evil.example/registry.example", "https://evil.example:5000",
    "registry.example\u202e", "https://registry.example\u3002", "[registry.example]",
]
GOOD_REGISTRIES = ["registry.example", "REGISTRY.Example", "https://registry.example", "https://registry.example/",
                   "https://registry.example/v2/", "http://registry.example/v1/", "HTTPS://registry.example:5000/v2/",
                   "registry.example:5000", "https://registry.example:5000"]


def test_docker_helper_parses_the_registry_strictly(setup: Setup) -> None:
    """A bare host[:port], or http(s):// + host[:port] + an optional path; userinfo, `?`, `#`, whitespace, controls,
    another scheme, a bad port are refused; host[:port] compared exactly (the host's case aside): anything else is
    docker's "credentials not found", and no token is printed."""
    s = setup
    notes = s.emulator.apis["Notes"]["scopes"][0]
    write_profile(s, f"""[profiles.default]
[profiles.default.registries]
"registry.example" = ["{s.scope}"]
"registry.example:5000" = ["{s.scope}"]
"https://notes.example/v2/" = ["{notes}"]
"evil.example/https://other.example" = ["{s.scope}"]
""")
    s.login(notes)
    s.login()
    token = s.token()
    server = s.server()
    for url in GOOD_REGISTRIES:
        r = docker(s, "get", url + "\n")
        assert r.returncode == 0 and r.stderr == "", (url, r.stdout, r.stderr)
        answer = json.loads(r.stdout)
        assert answer["ServerURL"] == url and answer["Secret"] == token, url
    assert http_get(server, token)[0] == 200
    assert docker(s, "get", "notes.example").returncode == 0  # a key given as a URL names its host
    for url in HOSTILE_REGISTRIES + ["other.example", "https://other.example", "evil.example"]:
        r = docker(s, "get", url + "\n")
        assert r.returncode != 0 and r.stdout == NOT_FOUND, (url, r.stdout)
        assert token not in r.stdout + r.stderr
    # --scope (a wrapper script's) names the scopes, not the registry: an unparseable address is still refused.
    for url in ("evil.example/https://registry.example/", "https://evil.example@registry.example/"):
        r = docker(s, "get", url + "\n", "--scope", s.scope)
        assert r.returncode != 0 and r.stdout == NOT_FOUND, url
    r = docker(s, "get", "any.example:5000\n", "--registry", "any.example:5000", "--scope", s.scope)
    assert r.returncode == 0 and json.loads(r.stdout)["Secret"] == token


def test_docker_scope_flags_name_no_registry(setup: Setup) -> None:
    """A wrapper script, `docker-credential-nativeauth --scope … "$@"`, set as docker's `credsStore`, is asked about
    every registry (docker.io, any image a Dockerfile names): `--scope` gives the scopes, never the registries. With
    no registry named the helper answers none (saying how to name one on stderr); a `--registry HOST[:PORT]`, or a key
    of the profile's `registries`, is answered with --scope's scopes; `--registry` replaces the profile's list; one
    that is not HOST[:PORT] is a usage error. (Was: with --scope, every parseable registry got the token.)"""
    s = setup
    notes = s.emulator.apis["Notes"]["scopes"][0]
    s.login()
    token = s.token()
    for url in ("any.example", "https://index.docker.io/v1/", "registry.example:5000"):
        r = docker(s, "get", url + "\n", "--scope", s.scope)
        assert r.returncode != 0 and r.stdout == NOT_FOUND, (url, r.stdout)
        assert "--registry" in r.stderr and r.stderr.count("\n") == 1 and token not in r.stderr, r.stderr
    scope = ("--scope", s.scope)
    r = docker(s, "get", "https://Registry.Example:5000/v2/\n", "--registry", "registry.example:5000", *scope)
    assert r.returncode == 0 and r.stderr == "" and json.loads(r.stdout)["Secret"] == token, r.stdout + r.stderr
    for url in ("registry.example", "registry.example:5001", "any.example"):
        r = docker(s, "get", url + "\n", "--registry=registry.example:5000", *scope)
        assert r.returncode != 0 and r.stdout == NOT_FOUND and r.stderr == "", (url, r.stdout, r.stderr)
    r = docker(s, "list", "", "--registry", "registry.example:5000", *scope)
    assert r.returncode == 0 and json.loads(r.stdout) == {"registry.example:5000": s.user}

    write_profile(s, f'[profiles.default]\nregistries = {{ "notes.example" = ["{notes}"] }}\n')
    r = docker(s, "get", "notes.example\n", *scope)  # named by the profile; --scope gives the scopes
    assert r.returncode == 0 and json.loads(r.stdout)["Secret"] == token
    r = docker(s, "get", "any.example\n", *scope)
    assert r.returncode != 0 and r.stdout == NOT_FOUND and r.stderr == ""
    r = docker(s, "get", "notes.example\n", "--registry", "registry.example", *scope)  # --registry replaces them
    assert r.returncode != 0 and r.stdout == NOT_FOUND
    r = docker(s, "get", "registry.example\n", "--registry", "registry.example")  # named, but no scopes for it
    assert r.returncode != 0 and r.stdout == NOT_FOUND
    for bad in ("https://evil.example@registry.example/", "registry.example/?x", ""):
        r = docker(s, "get", "registry.example\n", "--registry", bad, *scope)
        assert r.returncode == 2 and r.stdout == "" and "--registry" in r.stderr, (bad, r.stderr)
    assert all(token not in e for e in s.cli.outputs[1::2])
