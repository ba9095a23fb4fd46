"""A private D-Bus session with a real GNOME Keyring on it, for the keyring-protected cache's tests.

``dbus-daemon`` runs with a configuration of our own (a socket in a temporary directory, activation only from an empty
service directory) and ``gnome-keyring-daemon --components=secrets --unlock`` serves the Secret Service on it, with its
own HOME and XDG directories and its login keyring created unlocked with the password on its stdin. Nothing touches
the machine's own bus or keyrings; everything is stopped and removed by ``close()``.
"""
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
from typing import Dict, List, Optional

BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={dir}/bus</listen>
  <auth>EXTERNAL</auth>
  <servicedir>{dir}/services</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"""

PASSWORD = b"test"


class SecretServiceSession:
    """A private bus (``address``) with gnome-keyring on it; ``env`` is the environment of programs that use it."""

    def __init__(self) -> None:
        self.dir = pathlib.Path(tempfile.mkdtemp(prefix="na-keyring-"))
        for sub in ("run", "home", "data", "config", "cache", "services"):
            (self.dir / sub).mkdir(mode=0o700)
        (self.dir / "bus.conf").write_text(BUS_CONFIG.format(dir=self.dir))
        self._procs: List["subprocess.Popen[bytes]"] = []
        base = {k: v for k, v in os.environ.items() if k != "DBUS_SESSION_BUS_ADDRESS"}
        base.update(HOME=str(self.dir / "home"), XDG_RUNTIME_DIR=str(self.dir / "run"),
                    XDG_DATA_HOME=str(self.dir / "data"), XDG_CONFIG_HOME=str(self.dir / "config"),
                    XDG_CACHE_HOME=str(self.dir / "cache"))
        try:
            bus = self._spawn(["dbus-daemon", f"--config-file={self.dir}/bus.conf", "--nofork", "--print-address=1"],
                              base, stdout=subprocess.PIPE)
            assert bus.stdout is not None
            line = bus.stdout.readline().decode().strip()  # printed once the bus listens: readiness, not a delay
            if not line:
                raise RuntimeError("dbus-daemon exited before printing its address")
            self.address = line
            self.env: Dict[str, str] = dict(base, DBUS_SESSION_BUS_ADDRESS=line)
            keyring = self._spawn(["gnome-keyring-daemon", "--foreground", "--components=secrets", "--unlock"],
                                  self.env, stdin=subprocess.PIPE)
            assert keyring.stdin is not None
            keyring.stdin.write(PASSWORD)
            keyring.stdin.close()
            self._wait_for_default_collection(keyring)
        except BaseException:
            self.close()
            raise

    def _spawn(self, argv: List[str], env: Dict[str, str], stdin: Optional[int] = subprocess.DEVNULL,
               stdout: Optional[int] = subprocess.DEVNULL) -> "subprocess.Popen[bytes]":
        p = subprocess.Popen(argv, env=env, stdin=stdin, stdout=stdout, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        self._procs.append(p)
        return p

    def _wait_for_default_collection(self, keyring: "subprocess.Popen[bytes]") -> None:
        """Polls the bus until the default collection exists (gnome-keyring made the login keyring); at most 20 s."""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if keyring.poll() is not None:
                raise RuntimeError("gnome-keyring-daemon exited")
            owner = self.dbus_send("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                                   "string:org.freedesktop.secrets")
            if "boolean true" in owner:
                alias = self.dbus_send("org.freedesktop.secrets", "/org/freedesktop/secrets",
                                       "org.freedesktop.Secret.Service.ReadAlias", "string:default")
                if "object path" in alias and 'object path "/"' not in alias:
                    return
            time.sleep(0.01)  # polling a condition, not waiting a fixed time
        raise RuntimeError("the Secret Service did not come up")

    def dbus_send(self, dest: str, path: str, method: str, *args: str) -> str:
        r = subprocess.run(["dbus-send", "--print-reply", f"--dest={dest}", path, method, *args], env=self.env,
                           capture_output=True, text=True, timeout=10)
        return r.stdout

    def secret_tool(self, *args: str) -> "subprocess.CompletedProcess[str]":
        # `search` prints each item's secret too: here 32 random bytes, not text.
        r = subprocess.run(["secret-tool", *args], env=self.env, capture_output=True, timeout=10)
        return subprocess.CompletedProcess(r.args, r.returncode, r.stdout.decode("utf-8", "replace"),
                                           r.stderr.decode("utf-8", "replace"))

    def close(self) -> None:
        for p in reversed(self._procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
            for f in (p.stdin, p.stdout):
                if f is not None:
                    f.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def have_keyring_tools() -> bool:
    return all(shutil.which(t) for t in ("dbus-daemon", "dbus-send", "gnome-keyring-daemon", "secret-tool", "keyctl"))
