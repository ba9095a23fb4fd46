"""Starts the NativeAuth emulator (the real executable) for interop tests, in --tls mode on an ephemeral port."""
import json
import os
import pathlib
import subprocess
import tempfile
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def emulator_binary() -> str:
    path = os.environ.get("NATIVEAUTH_EMULATOR") or str(ROOT / ".build" / "debug" / "nativeauth-emulator")
    if not os.path.exists(path):
        pytest.fail(f"emulator not built: {path} (run `swift build --product nativeauth-emulator`)")
    return path


@pytest.fixture
def tls_emulator():
    with tempfile.TemporaryDirectory() as tmp:
        ready = pathlib.Path(tmp) / "ready.json"
        proc = subprocess.Popen([emulator_binary(), "--tls", "--quiet", "--port", "0", "--ready-file", str(ready),
                                 "--tls-dir", tmp], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.monotonic() + 30
            while not ready.exists():  # readiness, not a fixed sleep
                if proc.poll() is not None:
                    pytest.fail("emulator exited: " + proc.stderr.read().decode(errors="replace"))
                if time.monotonic() > deadline:
                    pytest.fail("emulator did not become ready")
                time.sleep(0.02)
            yield json.loads(ready.read_text())
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
