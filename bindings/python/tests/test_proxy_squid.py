"""Issue 31, networks: the library and the command behind real proxies (proxy_support.py) — squid with Basic
authentication and a hosts file of its own (the authority's name, login.corp.test, is known only to squid), and squid
inspecting TLS (ssl_bump) with a generated corporate CA; the emulator serves TLS behind both. Through each: a native
sign-in, tokens for two APIs and na_call_api; squid's access log shows the CONNECTs; wrong, missing or refused
credentials and broken proxies give a clear error naming the proxy; no proxy password appears in any output, error,
na_client_info or log line (verbose)."""
from __future__ import annotations

import json
import os
import pathlib
import shutil
import sys
import subprocess
from typing import Any, Dict, List, Optional, Tuple

import pytest

import nativeauth as na
from cli_support import Cli
from emulator_protocol import Emulator
from proxy_support import (AUTHORITY_HOST, PROXY_PASSWORD, PROXY_USER, CorporateCA, HostileProxy, NamedEmulator,
                           Squid, corporate_ca, free_port, https_squid, inspecting_squid, named_emulator, squid,
                           workdir)

__all__ = ["corporate_ca", "https_squid", "inspecting_squid", "named_emulator", "squid", "workdir"]  # the fixtures


def client(emu: NamedEmulator, lines: List[str], **config: Any) -> na.Client:
    config.setdefault("ca_bundle", emu.ca_file)
    config.setdefault("request_timeout_ms", 10000)
    return na.Client(emu.authority, emu.client_id, log_level="verbose",
                     log_handler=lambda _lvl, msg, _cid: lines.append(msg), **config)


def sign_in_two_apis_and_call(c: na.Client, emu: NamedEmulator) -> None:
    """A native sign-in, tokens for two APIs, and na_call_api — every request through the proxy."""
    user = emu.users["password"]
    todo, notes = emu.apis["ToDoList"], emu.apis["Notes"]
    state = c.sign_in(user["email"], user["password"], scopes=[todo["scopes"][0]])
    assert isinstance(state, na.SignedIn), state
    assert c.get_access_token([notes["scopes"][0]]).access_token
    answer = c.call_api(todo["url"], [todo["scopes"][0]])
    assert answer.status == 200, answer
    assert c.call_api(notes["url"], [notes["scopes"][0]]).status == 200


def assert_no_password(*texts: str) -> None:
    for t in texts:
        assert PROXY_PASSWORD not in t
        assert "Pr0xy" not in t  # nor a part of it


def connects(proxy: Squid, host: str = AUTHORITY_HOST) -> List[str]:
    return [line for line in proxy.access_log() if " CONNECT " in line and host in line]


def test_sign_in_two_apis_and_call_api_through_an_authenticating_proxy(named_emulator: NamedEmulator,
                                                                       squid: Squid) -> None:
    lines: List[str] = []
    with client(named_emulator, lines, proxy=squid.url_with(PROXY_USER, PROXY_PASSWORD)) as c:
        sign_in_two_apis_and_call(c, named_emulator)
        info = c.info["config"]
    assert info["proxy"] == squid.url and info["proxy_source"] == "config" and info.get("proxy_credentials") is True
    # squid saw the tunnels to the name only it can resolve, authenticated as the user
    tunnels = squid.wait_for_log(lambda t: " CONNECT " in t and AUTHORITY_HOST in t and "TCP_TUNNEL/200" in t
                                 and f" {PROXY_USER} " in t)
    assert tunnels, squid.access_log()[-5:]
    assert any("network: proxy http://127.0.0.1" in line and "with credentials" in line for line in lines), lines
    assert_no_password(json.dumps(info), *lines)


def test_the_authoritys_name_is_resolved_only_by_the_proxy(named_emulator: NamedEmulator, squid: Squid,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Directly ("proxy": "" wins over the environment's proxy), this machine cannot resolve it: the proxy did, above.
    monkeypatch.setenv("https_proxy", squid.url_with(PROXY_USER, PROXY_PASSWORD))
    with client(named_emulator, [], proxy="") as c:
        with pytest.raises(na.NativeAuthError) as e:
            c.sign_in(named_emulator.users["password"]["email"], "x", scopes=[])
    assert e.value.code == "network" and AUTHORITY_HOST in e.value.message and "proxy" not in e.value.message


@pytest.mark.parametrize("credentials", ["wrong", "missing"])
def test_refused_proxy_credentials_name_the_proxy(named_emulator: NamedEmulator, squid: Squid,
                                                  credentials: str) -> None:
    lines: List[str] = []
    proxy = squid.url_with(PROXY_USER, "Wrong-" + PROXY_PASSWORD) if credentials == "wrong" else squid.url
    with client(named_emulator, lines, proxy=proxy) as c:
        with pytest.raises(na.NativeAuthError) as e:
            c.sign_in(named_emulator.users["password"]["email"], named_emulator.users["password"]["password"])
    message = e.value.message
    assert e.value.code == "network", message
    assert f"the proxy {squid.url} (configured)" in message, message
    expected = "refused the proxy credentials (407" if credentials == "wrong" else "requires authentication (407)"
    assert expected in message, message
    assert_no_password(message, str(e.value), *lines)


@pytest.mark.parametrize("kind", ["unreachable", "garbage", "silent"])
def test_broken_proxies_give_a_clear_error_within_the_request_timeout(named_emulator: NamedEmulator,
                                                                      kind: str) -> None:
    hostile: Optional[HostileProxy] = None
    if kind == "unreachable":
        url = f"http://127.0.0.1:{free_port()}"
    else:
        hostile = HostileProxy(kind)
        url = hostile.url
    try:
        with client(named_emulator, [], proxy=url, request_timeout_ms=1500, connect_timeout_ms=1500) as c:
            with pytest.raises(na.NativeAuthError) as e:
                c.sign_in(named_emulator.users["password"]["email"], "x")
    finally:
        if hostile:
            hostile.stop()
    message = e.value.message
    assert f"the proxy {url} (configured)" in message, message
    expected = {"unreachable": ("network", "cannot connect to the proxy"),
                "garbage": ("network", "answered something that is not an HTTP proxy's answer"),
                "silent": ("timeout", "did not open a connection to")}[kind]
    assert (e.value.code, expected[1] in message) == (expected[0], True), (e.value.code, message)


def test_an_https_proxy_is_verified_with_proxy_ca_bundle(named_emulator: NamedEmulator, https_squid: Squid,
                                                         corporate_ca: CorporateCA) -> None:
    # TLS to the proxy itself: its certificate is checked with proxy_ca_bundle (here a CA that did not sign it) …
    with client(named_emulator, [], proxy=https_squid.url, proxy_ca_bundle=str(corporate_ca.cert)) as c:
        with pytest.raises(na.NativeAuthError) as e:
            c.sign_in(named_emulator.users["password"]["email"], "x")
    assert e.value.code == "tls", e.value.message
    assert f"TLS with the proxy {https_squid.url} (configured) failed" in e.value.message, e.value.message
    # … and with the CA that did, everything goes through the https proxy.
    with client(named_emulator, [], proxy=https_squid.url, proxy_ca_bundle=named_emulator.ca_file) as c:
        assert c.info["config"]["proxy"] == https_squid.url
        sign_in_two_apis_and_call(c, named_emulator)
    assert https_squid.wait_for_log(lambda line: " CONNECT " in line and AUTHORITY_HOST in line
                                    and "TCP_TUNNEL/200" in line)


def test_tls_inspection_is_refused_until_its_ca_is_trusted(named_emulator: NamedEmulator,
                                                         inspecting_squid: Squid, corporate_ca: CorporateCA) -> None:
    # The emulator's own CA does not vouch for the certificate the inspecting proxy makes: refused, and the
    # message says how to trust the proxy's CA.
    with client(named_emulator, [], proxy=inspecting_squid.url) as c:
        with pytest.raises(na.NativeAuthError) as e:
            c.sign_in(named_emulator.users["password"]["email"], "x")
    assert e.value.code == "tls", e.value.message
    for words in ("inspects TLS", '"ca_bundle"', '"ca_bundle_system": true', "SSL_CERT_FILE", "SSL_CERT_DIR",
                  inspecting_squid.url):
        assert words in e.value.message, e.value.message
    # Its CA trusted: everything works through it, and squid logs the decrypted requests.
    with client(named_emulator, [], proxy=inspecting_squid.url, ca_bundle=str(corporate_ca.cert)) as c:
        sign_in_two_apis_and_call(c, named_emulator)
    assert inspecting_squid.wait_for_log(lambda line: f"https://{AUTHORITY_HOST}:" in line
                                         and "/oauth2/v2.0/token" in line), inspecting_squid.access_log()[-5:]
    assert connects(inspecting_squid)


def test_ca_bundle_adds_to_the_store_or_replaces_it(named_emulator: NamedEmulator, inspecting_squid: Squid,
                                                    corporate_ca: CorporateCA, tls_emulator: Emulator,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The store in force without ca_bundle is SSL_CERT_FILE here: the CA of a second emulator, reached directly,
    stands in for the system's CAs. With "ca_bundle_system": true the corporate CA adds to it — the second emulator
    answers directly and the first through the inspecting proxy; without, it replaces it — only the proxy's
    certificates are trusted."""
    monkeypatch.setenv("SSL_CERT_FILE", tls_emulator.ready["ca_file"])
    for k in ("https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY", "SSL_CERT_DIR", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(k, raising=False)

    def direct(system: Optional[bool]) -> Tuple[str, Dict[str, Any]]:
        user = tls_emulator.users["password"]
        with na.Client(tls_emulator.authority, tls_emulator.client_id, ca_bundle=str(corporate_ca.cert),
                       ca_bundle_system=system) as c:
            info = dict(c.info["config"])
            try:
                c.sign_in(user["email"], user["password"])
                return "ok", info
            except na.NativeAuthError as e:
                return e.code, info

    added = direct(True)
    assert added[0] == "ok" and added[1]["ca_bundle_system"] is True and added[1]["ca_bundle_source"] == "config"
    assert direct(False)[0] == "tls" and direct(None)[0] == "tls"
    with client(named_emulator, [], proxy=inspecting_squid.url, ca_bundle=str(corporate_ca.cert),
                ca_bundle_system=True) as c:
        sign_in_two_apis_and_call(c, named_emulator)
    # The environment alone: SSL_CERT_FILE is the whole store; SSL_CERT_DIR adds a hashed directory to it.
    with client(named_emulator, [], proxy=inspecting_squid.url, ca_bundle=None) as c:
        assert c.info["config"]["ca_bundle_source"] == "SSL_CERT_FILE"
        with pytest.raises(na.NativeAuthError) as e:
            c.sign_in(named_emulator.users["password"]["email"], "x")
        assert e.value.code == "tls"
    if shutil.which("openssl"):
        hashed = corporate_ca.cert.parent / "hashed"
        hashed.mkdir(exist_ok=True)
        shutil.copy(corporate_ca.cert, hashed / "corp.pem")
        subprocess.run(["openssl", "rehash", str(hashed)], check=True, capture_output=True)
        monkeypatch.setenv("SSL_CERT_DIR", str(hashed))
        with client(named_emulator, [], proxy=inspecting_squid.url, ca_bundle=None) as c:
            assert c.info["config"]["ca_directory"] == str(hashed)
            sign_in_two_apis_and_call(c, named_emulator)


def test_the_command_through_the_environments_proxy_and_its_own(named_emulator: NamedEmulator, squid: Squid,
                                                                tmp_path: pathlib.Path) -> None:
    cli = Cli(tmp_path)
    env = {"NATIVEAUTH_AUTHORITY": named_emulator.authority, "NATIVEAUTH_CLIENT_ID": named_emulator.client_id,
           "NATIVEAUTH_CA_BUNDLE": named_emulator.ca_file,
           "https_proxy": squid.url_with(PROXY_USER, PROXY_PASSWORD)}
    for k in ("HTTPS_PROXY", "all_proxy", "ALL_PROXY", "no_proxy", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR"):
        cli.env.pop(k, None)
    user = named_emulator.users["password"]
    todo, notes = named_emulator.apis["ToDoList"], named_emulator.apis["Notes"]
    def tunnel(line: str) -> bool:
        return "TCP_TUNNEL/200" in line and AUTHORITY_HOST in line and f" {PROXY_USER} " in line

    before = len([line for line in squid.access_log() if tunnel(line)])
    r = cli.run("login", "-u", user["email"], "--password-stdin", "--scope", todo["scopes"][0], "--verbose",
                input=user["password"] + "\n", env=env)
    assert r.returncode == 0, r.stderr
    r = cli.run("token", "-s", notes["scopes"][0], "--force-refresh", "-v", env=env)
    assert r.returncode == 0 and r.stdout.strip(), r.stderr
    r = cli.run("call", todo["url"], "--scope", todo["scopes"][0], env=env)
    assert r.returncode == 0, r.stderr
    assert len(squid.wait_for_log(tunnel, at_least=before + 3)) >= before + 3  # login, token, call: 3 processes
    status = cli.run("status", "--json", env=env)
    network = json.loads(status.stdout)["network"]
    assert network["proxy"] == squid.url and network["proxy_source"] == "https_proxy", network
    assert network["proxy_credentials"] is True
    text = cli.run("status", env=env).stdout
    assert f"proxy: {squid.url} (from https_proxy, with credentials)" in text, text
    # --proxy wins over the environment: wrong credentials, a clear error (exit 4), naming the proxy, not the password
    wrong = squid.url_with(PROXY_USER, "Wrong-" + PROXY_PASSWORD)
    r = cli.run("--proxy", wrong, "token", "-s", notes["scopes"][1], "-v", env=env)
    assert r.returncode == 4, (r.returncode, r.stderr)
    assert f"the proxy {squid.url} (configured) refused the proxy credentials" in r.stderr, r.stderr
    assert "--proxy holds a password, which other users of this machine can see" in r.stderr
    # and --proxy "" goes directly, which cannot resolve the authority's name
    r = cli.run("token", "--proxy", "", "-s", notes["scopes"][1], env=env)
    assert r.returncode == 4 and AUTHORITY_HOST in r.stderr, r.stderr
    assert_no_password(*cli.outputs)
    assert all(PROXY_PASSWORD not in line for line in squid.access_log())


FALLBACK_CHILD = """
import json, sys
import nativeauth as na
authority, client_id, user, password = sys.argv[1:5]
with na.Client(authority, client_id) as c:
    info = c.info["config"]
    try:
        c.sign_in(user, password)
        outcome = "signed_in"
    except na.NativeAuthError as e:
        outcome = e.code + ": " + e.message
print(json.dumps({"outcome": outcome, "ca_bundle": info.get("ca_bundle"), "source": info["ca_bundle_source"]}))
"""


def test_a_missing_builtin_ca_file_falls_back_to_a_well_known_bundle(tls_emulator: Emulator) -> None:
    """libcurl's built-in CA file (/etc/ssl/certs/ca-certificates.crt here) absent, as for Debian's libcurl on
    Fedora: in a mount namespace /etc/ssl is an empty tmpfs holding only /etc/ssl/cert.pem (Alpine's place, the last
    of Go's list) — the emulator's CA, standing in for the system's. Without SSL_CERT_FILE or ca_bundle, the library
    finds it."""
    if os.geteuid() != 0 or not shutil.which("unshare") or \
            subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs root and mount namespaces (unshare -m) to hide /etc/ssl/certs")
    env = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE")}
    user = tls_emulator.users["password"]
    script = ('mount -t tmpfs none /etc/ssl && cp "$1" /etc/ssl/cert.pem && shift && exec "$@"')
    run = subprocess.run(  # noqa: S603
        ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", tls_emulator.ready["ca_file"],
         sys.executable, "-c", FALLBACK_CHILD, tls_emulator.authority, tls_emulator.client_id, user["email"],
         user["password"]], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out == {"outcome": "signed_in", "ca_bundle": "/etc/ssl/cert.pem", "source": "fallback"}, out


@pytest.mark.parametrize("added", [True, False])
def test_a_ca_file_that_is_not_a_file_fails_rather_than_hangs(tls_emulator: Emulator, tmp_path: pathlib.Path,
                                                              added: bool) -> None:
    """SSL_CERT_FILE naming a FIFO nobody writes, alone or with ca_bundle adding to it: the store cannot be read — a
    tls error naming the file, at once (reading it would wait for ever)."""
    fifo = tmp_path / "ca.fifo"
    os.mkfifo(fifo)
    env = {**os.environ, "SSL_CERT_FILE": str(fifo)}
    env.pop("SSL_CERT_DIR", None)
    ca = "ca_bundle=sys.argv[3], ca_bundle_system=True" if added else "ca_bundle=None"
    child = ("import sys, nativeauth as na\n"
             f"with na.Client(sys.argv[1], sys.argv[2], {ca}) as c:\n"
             "    try:\n        c.sign_in('a@b.c', 'x')\n    except na.NativeAuthError as e:\n"
             "        print(e.code + ': ' + e.message)\n")
    run = subprocess.run([sys.executable, "-c", child, tls_emulator.authority, tls_emulator.client_id,  # noqa: S603
                          tls_emulator.ready["ca_file"]], env=env, capture_output=True, text=True, timeout=60)
    assert run.stdout.strip() == f"tls: cannot read the CA file {fifo}", (run.stdout, run.stderr)
