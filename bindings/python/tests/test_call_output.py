"""`nativeauth call` and a hostile API (issue 28, defect 7): on a terminal the response body's unsafe characters — C0
controls but newline and tab, DEL, C1 controls (U+009B is a CSI on its own), bidirectional overrides — are shown as
escapes, so the API cannot set the window title, clear the screen or draw a fake "Signed in as admin"; with `--raw`,
or when stdout is not a terminal (a pipe, a file), the body's exact bytes, as curl gives them.

The terminal is a pseudo-terminal (pexpect) with output processing off, so what the test reads is what the command
wrote."""
from __future__ import annotations

import http.server
import json
import re
import subprocess
import termios
import threading
from typing import Any, Dict, Iterator, Tuple

import pytest

from cli_support import Cli, cli, pexpect, todo_scope  # noqa: F401 (cli: the fixture)
from emulator_protocol import Emulator

# Set the window title, write the clipboard, clear the screen and the line, C1 CSI (cursor up), NEL, DEL, a bidi
# override, a lone CR, and a fake status line; with a tab, newlines and a CRLF that are the body's own.
HOSTILE = ("ok\tline\r\n\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b[H\r\x9b1A\x85\x7f\u202etxt.exe\n"
           "\x1b[2KSigned in as admin\x00\n")
BODIES: Dict[str, Tuple[str, bytes]] = {
    "/text": ("text/plain; charset=utf-8", HOSTILE.encode()),
    "/json": ("application/json", json.dumps({"message": HOSTILE, "\u202ekey": [1, "\x9b2J"]},
                                             ensure_ascii=False).encode()),
    "/plain": ("text/plain", "no newline at its end \x1b[0m\u202e".encode()),
    "/bytes": ("application/octet-stream", b"\x1b]0;pwned\x07\xff\xfe\xc2\x9b2J\n\x1b[2JSigned in as admin"),
}
# Raw in what a terminal is shown: anything but the body's own newlines and tabs (and a CR right before a newline).
UNSAFE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
                    "|\r(?!\n)")


class HostileAPI(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        content_type, body = BODIES[self.path]
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def api(cli: Cli, emulator: Emulator) -> Iterator[str]:
    """The hostile API's origin (http on 127.0.0.1: bearer tokens go there), with the user signed in."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), HostileAPI)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    ann = emulator.users["password"]
    login = cli.run("login", "-u", ann["email"], "--password-stdin", "--scope", todo_scope(emulator),
                    input=ann["password"] + "\n")
    assert login.returncode == 0, login.stderr
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _no_output_processing() -> None:
    attributes = termios.tcgetattr(1)
    attributes[1] &= ~termios.OPOST  # no NL → CRLF: the test reads exactly what the command wrote
    termios.tcsetattr(1, termios.TCSANOW, attributes)


def on_terminal(cli: Cli, *args: str) -> Tuple[int, bytes]:
    """Runs the command with stdin, stdout and stderr a pseudo-terminal; its exit code and everything it wrote."""
    child = pexpect.spawn(cli.command, list(args), env=cli.env, timeout=60, preexec_fn=_no_output_processing)
    child.expect(pexpect.EOF)
    output: bytes = child.before
    child.close()
    assert child.exitstatus is not None
    return child.exitstatus, output


def in_a_pipe(cli: Cli, *args: str) -> Tuple[int, bytes]:
    r = subprocess.run([cli.command, *args], capture_output=True, env=cli.env, timeout=60)
    return r.returncode, r.stdout


@pytest.mark.parametrize("path", sorted(BODIES))
def test_a_hostile_body_is_escaped_on_a_terminal(cli: Cli, emulator: Emulator, api: str, path: str) -> None:
    code, output = on_terminal(cli, "call", api + path, "--scope", todo_scope(emulator))
    assert code == 0, output
    shown = output.decode("utf-8")  # strict: escaping leaves valid UTF-8 only
    assert not UNSAFE.findall(shown), UNSAFE.findall(shown)
    if path == "/plain":
        assert shown == "no newline at its end \\x1b[0m\\u202e\n"  # the terminal's prompt on a line of its own
        return
    assert "\\x9b" in shown and "pwned" in shown
    # JSON's own escape for the C0 controls in a string; the command's for the rest.
    assert ("\\u001b]0;pwned\\u0007" if path == "/json" else "\\x1b]0;pwned\\x07") in shown.lower()
    if path in ("/text", "/json"):
        assert "\\u202e" in shown and "\\x7f" in shown
    if path == "/text":
        assert shown.startswith("ok\tline\r\n\\x1b]0;pwned")  # tab, CRLF and newlines stay: the text keeps its lines
        assert "\\x1b[H\\x0d\\x9b1A\\x85\\x7f\\u202etxt.exe\n\\x1b[2KSigned in as admin\\x00\n" in shown
    if path == "/bytes":
        assert shown.startswith("\\x1b]0;pwned\\x07\\xff\\xfe\\x9b2J\n")  # bytes that are not UTF-8 as \xNN


@pytest.mark.parametrize("path", ["/text", "/plain", "/bytes"])
def test_raw_or_a_pipe_gives_the_exact_bytes(cli: Cli, emulator: Emulator, api: str, path: str) -> None:
    scope = todo_scope(emulator)
    body = BODIES[path][1]
    assert in_a_pipe(cli, "call", api + path, "--scope", scope) == (0, body)
    assert in_a_pipe(cli, "call", api + path, "--scope", scope, "--raw") == (0, body)
    assert on_terminal(cli, "call", api + path, "--scope", scope, "--raw") == (0, body)


def test_a_json_body_is_the_same_value_raw_or_piped(cli: Cli, emulator: Emulator, api: str) -> None:
    """The library parses a JSON body; the command prints it again, indented: the same value, its strings' characters
    as they came (JSON's own escapes for C0 controls) — and on a terminal only escaped."""
    scope = todo_scope(emulator)
    expected = json.loads(BODIES["/json"][1])
    for code, output in (in_a_pipe(cli, "call", api + "/json", "--scope", scope),
                         on_terminal(cli, "call", api + "/json", "--scope", scope, "--raw")):
        assert code == 0 and json.loads(output) == expected
        assert "\u202e".encode() in output and "\x9b".encode() in output
