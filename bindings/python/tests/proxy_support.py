"""Real proxies for the proxy tests (test_proxy_squid.py): Debian's squid on an ephemeral loopback port with its own
configuration, cache and log directories under a temporary directory, Basic authentication (basic_ncsa_auth and a
password file made here), a hosts file of its own that maps a made-up authority name to 127.0.0.1 — and, for the
TLS-inspection case, ssl_bump with a corporate CA generated here. Beside it: the emulator serving TLS under that name
(--tls --tls-name), and small hostile proxies (one that answers garbage, one that never answers).

Skips with a clear message only when squid is absent (make deps-test installs squid-openssl)."""
from __future__ import annotations

import datetime
import json
import os
import pathlib
import pwd
import shutil
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.request
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
SQUID = "/usr/sbin/squid"
HELPERS = pathlib.Path("/usr/lib/squid")
AUTHORITY_HOST = "login.corp.test"  # known only to squid's own hosts file
PROXY_USER = "alice"
PROXY_PASSWORD = "Pr0xy-Passw0rd!s3cret"  # outputs and logs are searched for it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def md5_crypt(password: str) -> str:
    """An MD5-crypt hash basic_ncsa_auth reads (Python's crypt module, else `openssl passwd -1`)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            import crypt
        return crypt.crypt(password, crypt.mksalt(crypt.METHOD_MD5))
    except ImportError:
        out = subprocess.run(["openssl", "passwd", "-1", "-stdin"], input=password, capture_output=True, text=True,
                             check=True)
        return out.stdout.strip()


class CorporateCA:
    """A generated CA, as a TLS-inspecting proxy's: PEM certificate, and certificate + key for squid."""

    def __init__(self, directory: pathlib.Path) -> None:
        crypto = pytest.importorskip("cryptography", reason="the TLS-inspection tests generate a CA with cryptography")
        del crypto
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Corp"),
                          x509.NameAttribute(NameOID.COMMON_NAME, "Corp TLS Inspection CA")])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=2))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, encipher_only=False,
                                             decipher_only=False), critical=True)
                .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                .sign(key, hashes.SHA256()))
        pem = cert.public_bytes(serialization.Encoding.PEM)
        key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        self.cert = directory / "corp-ca.pem"
        self.cert.write_bytes(pem)
        self.cert_and_key = directory / "corp-ca-and-key.pem"
        self.cert_and_key.write_bytes(pem + key_pem)
        self.cert_and_key.chmod(0o600)


class Squid:
    """squid -N on 127.0.0.1:<port> with a configuration of its own; `stop()` ends it."""

    def __init__(self, directory: pathlib.Path, *, emulator_ca: str, bump_ca: Optional[CorporateCA] = None,
                 tls_cert: Optional[List[str]] = None) -> None:
        if not os.access(SQUID, os.X_OK):
            pytest.skip(f"squid is not installed ({SQUID}; make deps-test installs squid-openssl)")
        self.dir = directory
        self.dir.mkdir(mode=0o755, exist_ok=True)
        (self.dir / "hosts").write_text(f"127.0.0.1 {AUTHORITY_HOST} localhost\n")
        (self.dir / "passwd").write_text(f"{PROXY_USER}:{md5_crypt(PROXY_PASSWORD)}\n")
        # squid started by root runs as cache_effective_user: the directory must be theirs.
        self.user = None
        if os.geteuid() == 0:
            self.user = next((u for u in ("proxy", "nobody") if _has_user(u)), None)
        ca_copy = self.dir / "emulator-ca.pem"
        shutil.copyfile(emulator_ca, ca_copy)
        self.bump = bump_ca is not None
        self.scheme = "https" if tls_cert else "http"
        lines = self._config(ca_copy, bump_ca, tls_cert)
        self.process: Optional["subprocess.Popen[bytes]"] = None
        for _ in range(5):  # an ephemeral port another process takes first: another one
            self.port = free_port()
            (self.dir / "squid.conf").write_text("\n".join(lines).replace("@PORT@", str(self.port)) + "\n")
            if self.user:
                for top, dirs, files in os.walk(self.dir):
                    for name in [top, *(os.path.join(top, n) for n in dirs + files)]:
                        shutil.chown(name, self.user, self.user)
            if self._start():
                return
        pytest.fail("squid did not start: " + self.log_tail())

    def _config(self, ca_copy: pathlib.Path, bump_ca: Optional[CorporateCA],
                tls_cert: Optional[List[str]]) -> List[str]:
        d = self.dir
        lines = [
            f"pid_filename {d}/squid.pid", f"cache_log {d}/cache.log", f"access_log stdio:{d}/access.log",
            "cache_store_log none", f"coredump_dir {d}", "cache deny all", f"hosts_file {d}/hosts",
            "dns_nameservers 127.0.0.1", "icp_port 0", "htcp_port 0", "pinger_enable off",
            "shutdown_lifetime 0 seconds", f"tls_outgoing_options cafile={ca_copy}",
        ]
        if tls_cert:
            # An https:// proxy: TLS between the client and squid (its certificate and key, concatenated).
            pem = d / "proxy-cert.pem"
            pem.write_bytes(b"".join(pathlib.Path(f).read_bytes() for f in tls_cert))
            lines += [f"https_port 127.0.0.1:@PORT@ tls-cert={pem}", "http_access allow all"]
        elif bump_ca is None:
            lines += [
                "http_port 127.0.0.1:@PORT@",
                f"auth_param basic program {HELPERS}/basic_ncsa_auth {d}/passwd",
                "auth_param basic realm corp-proxy",
                "acl authenticated proxy_auth REQUIRED",
                "http_access allow authenticated",
                "http_access deny all",
            ]
        else:
            if not (HELPERS / "security_file_certgen").exists():
                pytest.fail("this squid cannot inspect TLS (no security_file_certgen): install squid-openssl "
                            "(make deps-test)")
            key = d / "bump-ca.pem"
            shutil.copyfile(bump_ca.cert_and_key, key)
            db = d / "ssl_db"
            subprocess.run([str(HELPERS / "security_file_certgen"), "-c", "-s", str(db), "-M", "4MB"],
                           check=True, capture_output=True)
            lines += [
                f"http_port 127.0.0.1:@PORT@ ssl-bump generate-host-certificates=on "
                f"dynamic_cert_mem_cache_size=4MB tls-cert={key}",
                f"sslcrtd_program {HELPERS}/security_file_certgen -s {db} -M 4MB",
                "sslcrtd_children 2 startup=1 idle=1",
                "ssl_bump bump all",
                "http_access allow all",
            ]
        if self.user:
            lines.append(f"cache_effective_user {self.user}")
        return lines

    def _start(self) -> bool:
        self.process = subprocess.Popen(  # noqa: S603
            [SQUID, "-N", "-f", str(self.dir / "squid.conf")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # readiness: the port accepts, or squid has ended
            if self.process.poll() is not None:
                return False
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return True
            except OSError:
                time.sleep(0.02)
        return False

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def url_with(self, user: str, password: str) -> str:
        from urllib.parse import quote
        return f"{self.scheme}://{quote(user, safe='')}:{quote(password, safe='')}@127.0.0.1:{self.port}"

    def access_log(self) -> List[str]:
        path = self.dir / "access.log"
        return path.read_text(errors="replace").splitlines() if path.exists() else []

    def wait_for_log(self, predicate: Callable[[str], bool], at_least: int = 1, timeout: float = 15) -> List[str]:
        """The access log's lines that satisfy `predicate`, waiting (polling) until there are `at_least`: squid
        writes a tunnel's line when the tunnel closes, a moment after the client let go of its connection."""
        deadline = time.monotonic() + timeout
        while True:
            found = [line for line in self.access_log() if predicate(line)]
            if len(found) >= at_least or time.monotonic() > deadline:
                return found
            time.sleep(0.02)

    def log_tail(self) -> str:
        path = self.dir / "cache.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        err = self.process.stderr.read().decode(errors="replace") if self.process and self.process.stderr and \
            self.process.poll() is not None else ""
        return (text + err)[-3000:]

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


class NamedEmulator:
    """The emulator serving TLS on 127.0.0.1, naming itself https://login.corp.test:<port> (a name only squid's hosts
    file knows): its certificate names it (--tls-name) and its URLs use it (public_base_url)."""

    def __init__(self, directory: pathlib.Path) -> None:
        binary = os.environ.get("NATIVEAUTH_EMULATOR") or str(ROOT / ".build" / "debug" / "nativeauth-emulator")
        if not os.path.exists(binary):
            pytest.fail(f"emulator not built: {binary} (make emulator)")
        ready = directory / "ready.json"
        self.process = subprocess.Popen(  # noqa: S603
            [binary, "--quiet", "--port", "0", "--ready-file", str(ready), "--tls", "--tls-dir",
             str(directory / "emulator-tls"), "--tls-name", AUTHORITY_HOST],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while not ready.exists():  # readiness, not a fixed delay
            if self.process.poll() is not None:
                pytest.fail("emulator exited: " + (self.process.stderr.read() if self.process.stderr else b"")
                            .decode(errors="replace"))
            assert time.monotonic() < deadline, "emulator did not start"
            time.sleep(0.01)
        self.ready: Dict[str, Any] = json.loads(ready.read_text())
        self.local_base: str = self.ready["base_url"]  # https://127.0.0.1:<port>, for the controls
        self.ca_file: str = self.ready["ca_file"]
        self.port = int(self.local_base.rsplit(":", 1)[1])
        self.base = f"https://{AUTHORITY_HOST}:{self.port}"
        self.control("POST", "settings", {"public_base_url": self.base})
        self.authority: str = self.ready["authority"].replace(self.local_base, self.base)
        self.local_authority: str = self.ready["authority"]
        self.client_id: str = self.ready["client_id"]
        self.users = {u["kind"]: u for u in self.ready["users"]}
        self.apis = {a["name"]: {**a, "url": a["url"].replace(self.local_base, self.base)} for a in self.ready["apis"]}

    def control(self, method: str, path: str, body: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.local_base + "/_emulator/" + path, data=data, method=method,
                                     headers={"Content-Type": "application/json",
                                              "X-Emulator-Token": self.ready["control_token"]})
        context = ssl.create_default_context(cafile=self.ca_file)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(
            context=context))
        with opener.open(req, timeout=10) as r:
            answer: Dict[str, Any] = json.loads(r.read() or b"{}")
            return answer

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


class HostileProxy:
    """A TCP server on 127.0.0.1 that plays a broken proxy: `garbage` answers bytes that are not HTTP, `silent`
    accepts and never answers (until stopped)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port: int = self.sock.getsockname()[1]
        self.connections: List[socket.socket] = []
        self.stopped = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections.append(conn)
            if self.mode == "garbage":
                try:
                    conn.recv(4096)
                    conn.sendall(b"\x16\x03\x01 this is no proxy \x00\xff\r\n\r\n")
                    conn.close()
                except OSError:
                    pass

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.stopped.set()
        self.sock.close()
        for c in self.connections:
            c.close()


@pytest.fixture(scope="module")
def workdir() -> Iterator[pathlib.Path]:
    d = pathlib.Path(tempfile.mkdtemp(prefix="nativeauth-proxy-"))
    d.chmod(0o755)
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def named_emulator(workdir: pathlib.Path) -> Iterator[NamedEmulator]:
    e = NamedEmulator(workdir)
    try:
        yield e
    finally:
        e.stop()


@pytest.fixture(scope="module")
def squid(workdir: pathlib.Path, named_emulator: NamedEmulator) -> Iterator[Squid]:
    s = Squid(workdir / "squid-auth", emulator_ca=named_emulator.ca_file)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def corporate_ca(workdir: pathlib.Path) -> CorporateCA:
    return CorporateCA(workdir)


@pytest.fixture(scope="module")
def https_squid(workdir: pathlib.Path, named_emulator: NamedEmulator) -> Iterator[Squid]:
    """An https:// proxy whose certificate (for 127.0.0.1) is the emulator's, signed by the emulator's CA."""
    tls = pathlib.Path(named_emulator.ca_file).parent
    s = Squid(workdir / "squid-https", emulator_ca=named_emulator.ca_file,
              tls_cert=[str(tls / "server.pem"), str(tls / "server-key.pem")])
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def inspecting_squid(workdir: pathlib.Path, named_emulator: NamedEmulator,
                     corporate_ca: CorporateCA) -> Iterator[Squid]:
    s = Squid(workdir / "squid-bump", emulator_ca=named_emulator.ca_file, bump_ca=corporate_ca)
    try:
        yield s
    finally:
        s.stop()
