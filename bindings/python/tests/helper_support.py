"""What the credential helpers' tests share (test_credential_helpers.py, test_helper_scoping.py): `ProtectedServer`
(HTTP or HTTPS on an ephemeral port; it accepts only a valid access token of the emulator's for its API, checked as
the API would: RS256 signature against the emulator's JWKS, issuer, audience, expiry), `Setup` (a test's emulator,
command, certificate and servers; the `setup` fixture), and the ways git, kubectl and docker run the helpers.

Needs git, kubectl and the `cryptography` package (installed with msal): .ci/deps.sh installs them."""
from __future__ import annotations

import base64
import binascii
import datetime
import http.server
import ipaddress
import json
import os
import pathlib
import re
import shutil
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest

from cli_support import Cli, native_command, todo_scope
from emulator_protocol import Emulator

x509 = pytest.importorskip("cryptography.x509", reason="the cryptography package (comes with msal) is not installed")
from cryptography.exceptions import InvalidSignature  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

# A helper answers (or fails) within this many seconds, refresh included; kubectl and git within twice that.
DEADLINE = 20.0
# The realm of the test server's 401 answers.
REALM = "nativeauth-test"


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (make deps installs it)")
    return path


# -- the protected server ------------------------------------------------------------------------------------------


def _b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _claims(token: str) -> Dict[str, Any]:
    claims: Dict[str, Any] = json.loads(_b64url(token.split(".")[1]))
    return claims


class TokenChecker:
    """Checks access tokens as an API of the tenant does: the keys and issuer from the emulator's discovery document.
    `skew` moves this server's clock (a negative control of the expiry check)."""

    def __init__(self, emulator: Emulator) -> None:
        with urllib.request.urlopen(emulator.authority + "/v2.0/.well-known/openid-configuration", timeout=10) as r:
            discovery = json.loads(r.read())
        self.issuer: str = discovery["issuer"]
        with urllib.request.urlopen(discovery["jwks_uri"], timeout=10) as r:
            jwks = json.loads(r.read())
        self.keys: Dict[str, rsa.RSAPublicKey] = {}
        for key in jwks["keys"]:
            if key.get("kty") == "RSA":
                numbers = rsa.RSAPublicNumbers(int.from_bytes(_b64url(key["e"]), "big"),
                                               int.from_bytes(_b64url(key["n"]), "big"))
                self.keys[key["kid"]] = numbers.public_key()
        assert self.keys, "the emulator's JWKS has no RSA key"
        self.skew = 0.0

    def refusal(self, token: str, audience: str) -> Optional[str]:
        """Why `token` is refused, or None when it is a valid access token for `audience`."""
        parts = token.split(".")
        if len(parts) != 3:
            return "not a JWT"
        try:
            header, claims = json.loads(_b64url(parts[0])), json.loads(_b64url(parts[1]))
            signature = _b64url(parts[2])
        except (ValueError, binascii.Error):
            return "not a JWT"
        if not isinstance(header, dict) or not isinstance(claims, dict) or header.get("alg") != "RS256":
            return "not an RS256 JWT"
        key = self.keys.get(str(header.get("kid")))
        if key is None:
            return "unknown key"
        try:
            key.verify(signature, f"{parts[0]}.{parts[1]}".encode(), padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            return "bad signature"
        if claims.get("iss") != self.issuer:
            return "wrong issuer"
        if claims.get("aud") != audience:
            return "wrong audience"
        exp = claims.get("exp")
        if not isinstance(exp, int) or exp <= time.time() + self.skew:
            return "expired"
        return None


@dataclass
class Seen:
    """What the server saw: accepted (method, path, Basic username or "", token) and refused reasons."""

    accepted: List[Tuple[str, str, str, str]] = field(default_factory=list)
    refused: List[str] = field(default_factory=list)
    rejected_valid: List[str] = field(default_factory=list)


def audience_of(scope: str) -> str:
    """The application id an `api://<app id>/<permission>` scope's tokens are for."""
    match = re.fullmatch(r"api://([^/]+)/.+", scope)
    assert match, scope
    return match.group(1)


class ProtectedServer:
    """HTTP or HTTPS on 127.0.0.1 (ephemeral port), every request checked: git's smart HTTP under /git/ (`git
    http-backend` as a CGI program, repositories under `repos`), and what kubectl asks of a Kubernetes API server
    (/version, /api/v1/namespaces/default). Accepts `Authorization: Bearer TOKEN` and Basic `user:TOKEN`.
    `reject_valid` valid tokens are refused still (as a server that revoked them would)."""

    def __init__(self, checker: TokenChecker, audience: str, repos: pathlib.Path,
                 tls: Optional[Tuple[pathlib.Path, pathlib.Path]] = None) -> None:
        self.checker, self.audience, self.repos = checker, audience, repos
        self.seen = Seen()
        self.reject_valid = 0
        self.lock = threading.Lock()
        self.cafile = tls[0] if tls is not None else None
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.httpd.daemon_threads = True
        self.scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            # The handshake in the request's thread (not the accepting one).
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True,
                                                    do_handshake_on_connect=False)
            self.scheme = "https"
        self.port: int = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    @property
    def origin(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def accepted_tokens(self) -> List[str]:
        with self.lock:
            return [a[3] for a in self.seen.accepted]

    def authorize(self, header: str) -> Tuple[Optional[str], str, str]:
        """(refusal or None, Basic username, token)."""
        scheme, _, value = header.partition(" ")
        user, token = "", ""
        if scheme.lower() == "bearer":
            token = value.strip()
        elif scheme.lower() == "basic":
            try:
                user, _, token = base64.b64decode(value.strip(), validate=True).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                return "malformed Basic credentials", "", ""
        reason = self.checker.refusal(token, self.audience) if token else "no credentials"
        with self.lock:
            if reason is None and self.reject_valid > 0:
                self.reject_valid -= 1
                self.seen.rejected_valid.append(token)
                reason = "revoked"
            if reason is not None:
                self.seen.refused.append(reason)
        return reason, user, token


def _handler(server: ProtectedServer) -> "type[http.server.BaseHTTPRequestHandler]":
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                data = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def answer(self, status: int, body: bytes, headers: Optional[Dict[str, str]] = None) -> None:
            self.send_response(status)
            for name, value in (headers or {"Content-Type": "application/json"}).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def handle_any(self) -> None:
            data = self.body()  # read first: a refused push's pack is drained, the connection stays sane
            reason, user, token = server.authorize(self.headers.get("Authorization", ""))
            if reason is not None:
                doc = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": reason, "code": 401}
                self.answer(401, json.dumps(doc).encode(), {"WWW-Authenticate": f'Basic realm="{REALM}"',
                                                            "Content-Type": "application/json"})
                return
            path, _, query = self.path.partition("?")
            with server.lock:
                server.seen.accepted.append((self.command, path, user, token))
            if path.startswith("/git/"):
                self.git(path[len("/git"):], query, user, data)
            elif path == "/version":
                self.answer(200, json.dumps({"major": "1", "minor": "32", "gitVersion": "v1.32.0",
                                             "platform": "linux/amd64"}).encode())
            elif path == "/api/v1/namespaces/default":
                self.answer(200, json.dumps({"kind": "Namespace", "apiVersion": "v1", "metadata": {
                    "name": "default", "annotations": {"seen-by": "nativeauth-test"}}}).encode())
            else:
                self.answer(404, b'{"kind": "Status", "code": 404}')

        def git(self, path: str, query: str, user: str, data: bytes) -> None:
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(server.repos),
                   "GIT_CONFIG_NOSYSTEM": "1", "GIT_PROJECT_ROOT": str(server.repos), "GIT_HTTP_EXPORT_ALL": "1",
                   "REQUEST_METHOD": self.command, "PATH_INFO": path, "QUERY_STRING": query,
                   "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(data)),
                   "REMOTE_USER": user or "token", "REMOTE_ADDR": "127.0.0.1"}
            if self.headers.get("Content-Encoding"):
                env["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
            if self.headers.get("Git-Protocol"):
                env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
            r = subprocess.run([shutil.which("git") or "git", "http-backend"], input=data, env=env,
                               capture_output=True, timeout=60)
            head, sep, payload = r.stdout.partition(b"\r\n\r\n")
            if not sep:
                head, _, payload = r.stdout.partition(b"\n\n")
            status, headers = 200, {}
            for line in head.decode("latin-1").splitlines():
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers[name] = value.strip()
            self.answer(status, payload, headers)

        do_GET = do_POST = handle_any

    return Handler


def make_certificate(directory: pathlib.Path) -> Tuple[pathlib.Path, pathlib.Path]:
    """A self-signed certificate for 127.0.0.1 (and its key), valid for a day: the clients' CA and the server's."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "nativeauth test server")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                                                               x509.DNSName("localhost")]), critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    directory.mkdir(parents=True, exist_ok=True)
    cert, key_file = directory / "server.pem", directory / "server-key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert, key_file


@dataclass
class Setup:
    """A test's emulator and command (nobody signed in until `login`), a directory of executables for the clients'
    PATH (`nativeauth` and `docker-credential-nativeauth`, both the native command), the servers' certificate."""

    cli: Cli
    emulator: Emulator
    scope: str
    bin: pathlib.Path
    cert: pathlib.Path
    key: pathlib.Path
    checker: TokenChecker
    servers: List[ProtectedServer] = field(default_factory=list)

    @property
    def user(self) -> str:
        email: str = self.emulator.users["password"]["email"]
        return email

    def login(self, scope: Optional[str] = None) -> None:
        ann = self.emulator.users["password"]
        r = self.cli.run("login", "-u", ann["email"], "--password-stdin", "-s", scope or self.scope,
                         input=ann["password"] + "\n")
        assert r.returncode == 0, r.stderr

    def token(self, *args: str) -> str:
        r = self.cli.run("token", "-s", self.scope, *args)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip()

    def server(self, tls: bool = True, audience: Optional[str] = None) -> ProtectedServer:
        s = ProtectedServer(self.checker, audience or audience_of(self.scope), self.cli.tmp / "repos",
                            (self.cert, self.key) if tls else None)
        self.servers.append(s)
        return s

    def env(self, **extra: str) -> Dict[str, str]:
        """The clients' environment: the private one of `Cli`, the helpers on the PATH, no git setting or askpass
        program from outside."""
        env = {k: v for k, v in self.cli.env.items() if not k.startswith(("GIT_", "KUBE")) and k != "SSH_ASKPASS"}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
        env.update({"GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": "Ann",
                    "GIT_AUTHOR_EMAIL": self.user, "GIT_COMMITTER_NAME": "Ann", "GIT_COMMITTER_EMAIL": self.user})
        env.update(extra)
        return env

    def requests_to_token_endpoint(self) -> List[Dict[str, Any]]:
        return self.emulator.requests("oauth2/v2.0/token")

    def refreshes(self) -> int:
        return sum(1 for r in self.requests_to_token_endpoint()
                   if r.get("fields", {}).get("grant_type") == "refresh_token")


@pytest.fixture
def setup(cli: Cli, emulator: Emulator, tmp_path: pathlib.Path) -> Iterator[Setup]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nativeauth").symlink_to(native_command())
    (bin_dir / "docker-credential-nativeauth").symlink_to(native_command())
    cert, key = make_certificate(tmp_path / "tls")
    s = Setup(cli, emulator, todo_scope(emulator), bin_dir, cert, key, TokenChecker(emulator))
    try:
        yield s
    finally:
        for server in s.servers:
            server.close()


def run(args: List[str], env: Dict[str, str], input: Optional[str] = None,
        timeout: float = 2 * DEADLINE) -> Tuple["subprocess.CompletedProcess[str]", float]:
    """Runs a client (stdin a pipe, never a terminal); answers its result and how long it took."""
    start = time.monotonic()
    r = subprocess.run(args, input=input if input is not None else "", capture_output=True, text=True, env=env,
                       timeout=timeout)
    return r, time.monotonic() - start


# -- git -----------------------------------------------------------------------------------------------------------


def make_repository(s: Setup) -> pathlib.Path:
    """repos/project.git (bare) with one commit on main."""
    git, seed, bare = tool("git"), s.cli.tmp / "seed", s.cli.tmp / "repos" / "project.git"
    for args in (["init", "-q", "-b", "main", str(seed)],
                 ["-C", str(seed), "commit", "-q", "--allow-empty", "-m", "first"],
                 ["clone", "-q", "--bare", str(seed), str(bare)]):
        r, _ = run([git, *args], s.env())
        assert r.returncode == 0, r.stderr
    return bare


def configure_git(s: Setup, server: ProtectedServer) -> None:
    """The user's git configuration (~/.gitconfig of the private HOME): the helper, for this server only, as its
    documentation says (`!`: a shell command, found on the PATH; `--host`: the host it answers for), and the
    server's certificate."""
    git, helper = tool("git"), f"!nativeauth git-credential --host 127.0.0.1:{server.port} --scope {s.scope}"
    for key, value in ((f"credential.{server.origin}.helper", helper), ("http.sslCAInfo", str(s.cert))):
        r, _ = run([git, "config", "--global", key, value], s.env())
        assert r.returncode == 0, r.stderr


def git_credential(s: Setup, operation: str, lines: str = "") -> "subprocess.CompletedProcess[str]":
    """`nativeauth git-credential OPERATION` as git runs it: the request's key=value lines on stdin."""
    r, took = run(["nativeauth", "git-credential", "--host", "127.0.0.1", "--scope", s.scope, operation], s.env(),
                  input=f"protocol=https\nhost=127.0.0.1\n{lines}\n")
    assert took < DEADLINE
    s.cli.outputs += [r.stdout, r.stderr]
    return r


def answer_of(r: "subprocess.CompletedProcess[str]") -> Dict[str, str]:
    assert r.returncode == 0, r.stderr
    return dict(line.split("=", 1) for line in r.stdout.splitlines())



def kubeconfig(s: Setup, server: ProtectedServer, api_version: str, *flags: str, cluster_info: bool = False,
               url: Optional[str] = None, name: Optional[str] = None) -> pathlib.Path:
    """A kubeconfig whose user is `nativeauth kubectl-credential --scope … FLAGS` (JSON is YAML), for the cluster at
    `url` (default: the server's origin); `cluster_info`: the exec section's provideClusterInfo."""
    exec_: Dict[str, Any] = {"apiVersion": f"client.authentication.k8s.io/{api_version}",
                             "command": native_command(),
                             "args": ["kubectl-credential", "--scope", s.scope, *flags]}
    if api_version == "v1":
        exec_["interactiveMode"] = "Never"  # required by v1
    if cluster_info:
        exec_["provideClusterInfo"] = True
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": "test", "preferences": {},
        "clusters": [{"name": "test", "cluster": {
            "server": url or server.origin,
            "certificate-authority-data": base64.b64encode(s.cert.read_bytes()).decode()}}],
        "users": [{"name": "ann", "user": {"exec": exec_}}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "ann"}}],
    }
    path = s.cli.tmp / (name or f"kubeconfig-{api_version}")
    path.write_text(json.dumps(config))
    return path


def kubectl_minor() -> int:
    r = subprocess.run([tool("kubectl"), "version", "--client", "-o", "json"], capture_output=True, text=True,
                       timeout=DEADLINE)
    minor = json.loads(r.stdout)["clientVersion"]["minor"]
    return int(re.sub(r"\D.*", "", minor))



def docker(s: Setup, operation: str, input: str, *flags: str) -> "subprocess.CompletedProcess[str]":
    """A docker credential helper call, as docker makes it: `docker-credential-NAME OPERATION` from the PATH, the
    request on stdin."""
    r, took = run(["docker-credential-nativeauth", *flags, operation], s.env(), input=input)
    assert took < DEADLINE
    s.cli.outputs += [r.stdout, r.stderr]
    return r


def write_profile(s: Setup, text: str) -> None:
    path = pathlib.Path(s.cli.env["XDG_CONFIG_HOME"]) / "nativeauth" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)  # whatever the umask: a file others may write is refused




def http_get(server: ProtectedServer, token: str, basic: bool = False) -> Tuple[int, Dict[str, str]]:
    """GET /version with the token (Bearer, or Basic as git sends it): the status and headers."""
    auth = "Basic " + base64.b64encode(f"user:{token}".encode()).decode() if basic else f"Bearer {token}"
    request = urllib.request.Request(server.origin + "/version", headers={"Authorization": auth})
    context = ssl.create_default_context(cafile=str(server.cafile)) if server.cafile else None
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE, context=context) as r:
            return r.status, dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers)

